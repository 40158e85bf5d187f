"""The standalone platform: ``python -m hostside.platform serve`` (what ``hdemu up`` runs detached),
and ``request_shutdown`` (what ``hdemu down`` does)."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

from shm_layout import layouts as L
from shm_layout.errors import HdemuError
from shm_layout.logs import configure_stderr, role_logger
from shm_layout.segments import list_segments
from shm_layout.sync import address_of, notify, wait_until
from shm_layout.topology import PlatformMap

from ._supervisor import STOP_TIMEOUT_S, Platform, load_config

__all__ = ["serve", "request_shutdown", "main"]

_log = role_logger("supervisor")


def _announce(ready_fd: int | None, info: dict) -> None:
    """One JSON line to whoever started us (``hdemu up`` reads it from ``ready_fd``)."""
    line = json.dumps(info) + "\n"
    if ready_fd is not None:
        os.write(ready_fd, line.encode())
        os.close(ready_fd)
    else:
        sys.stdout.write(line)
        sys.stdout.flush()


def serve(config_path: str | None, ready_fd: int | None = None) -> int:
    """Run a standalone platform until ``hdemu down`` (shutdown flag) or SIGTERM/SIGINT. A platform
    that cannot start is reported as ``{"error": ...}`` on the ready line and exit code 1."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        plat = Platform(load_config(config_path), embedded=False).start()
    except HdemuError as exc:
        _log.error("platform failed to start: %s", exc)
        try:
            _announce(ready_fd, {"error": str(exc)})
        except OSError:
            pass                    # the starter is gone: the log line above is all there is to say
        return 1
    try:
        try:
            _announce(ready_fd, {"name": plat.name, "pid": os.getpid()})
        except OSError as exc:
            # whoever started us (`hdemu up`, Ctrl-C'd while the platform started) is gone: nobody
            # knows this platform's name, so it stops rather than run on unseen
            _log.error("platform %s stops: its starter went away before reading its name (%s)", plat.name,
                       exc.strerror or exc)
            return 1
        _log.info("platform %s up", plat.name)
        wake = address_of(plat.pm.boot_hdr) + L.offset_of(L.boot_header, "wake")
        while not stop.is_set():
            # a dead role stays visible in `hdemu status` (the watcher marks it); clients get errors
            if wait_until(lambda: int(plat.pm.boot_hdr["shutdown"][0]) or stop.is_set(), wake, 0.5):
                break
    finally:
        plat.stop()
    return 0


def request_shutdown(boot_name: str, timeout_s: float = STOP_TIMEOUT_S + 5) -> bool:
    """Ask a standalone platform to stop and wait until its segments are gone."""
    pm = PlatformMap.attach(boot_name)
    pid = int(pm.boot_hdr["supervisor_pid"][0])
    pm.boot_hdr["shutdown"] = 1
    notify(address_of(pm.boot_hdr) + L.offset_of(L.boot_header, "wake"))
    pm.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(n == boot_name for n, _p, _t in list_segments()):
            return True
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:      # it exited meanwhile: nothing left to stop
        pass
    return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hostside.platform")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--config")
    s.add_argument("--ready-fd", type=int)
    args = ap.parse_args(argv)
    configure_stderr()
    if args.cmd == "serve":
        return serve(args.config, args.ready_fd)
    return 2

