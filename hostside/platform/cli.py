"""The ``hdemu`` command: up, down, ls, status, clean, trace, demo, counters, run, study.

An expected error (no platform, a stale ``HDEMU_PLATFORM``, a platform of another user, a bad config,
a closed pipe under ``| head``, Ctrl-C) prints one line to stderr and exits non-zero; a traceback
means a bug in hdemu. ``demo``, ``counters``, ``run`` and ``study`` run programs of the rooms above
this one (``hostside.demo``, ``hostside.replay.counters``, ``hostside.faults``, ``hostside.studies``)
in place of this process (``os.execv``): the platform layer never imports them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import hdemu
from shm_layout import layouts as L
from shm_layout.errors import HdemuError, PlatformError
from shm_layout.segments import Segment, list_segments, segment_uid, sweep
from shm_layout.topology import PlatformMap, run_alive

from ._serve import request_shutdown
from ._status import format_status, status
from ._supervisor import STARTUP_TIMEOUT_S, STOP_TIMEOUT_S, load_config
from ._trace_export import write_trace

__all__ = ["main", "live_platforms"]


def live_platforms(*, all_users: bool = False) -> list[dict]:
    """Every live platform (its supervisor alive) of this user, or of every user: name, supervisor
    pid, standalone or embedded, owner uid, age in seconds. A supervisor whose pid now runs another
    process (the start time recorded in the boot block differs) is dead; for another user's platform,
    whose boot block we cannot read, the pid alone decides."""
    out = []
    me = os.getuid()
    for name, pid, tok in list_segments():
        if not name.endswith("-boot") or not run_alive(pid, tok):
            continue
        uid = segment_uid(name)
        if uid < 0 or (uid != me and not all_users):
            continue
        info = {"name": name, "supervisor_pid": pid, "uid": uid, "mode": "?", "age_s": None, "state": "?"}
        if uid == me:
            try:
                seg = Segment.attach(name)
            except HdemuError:
                continue                      # gone meanwhile
            try:
                if seg.size >= L.boot_header.itemsize:
                    h = seg.view(L.boot_header, 0, 1)[0]
                    if int(h["magic"]) == L.MAGIC:
                        info["mode"] = "embedded" if int(h["embedded"]) else "standalone"
                        info["state"] = L.BOOT_STATE_NAMES.get(int(h["state"]), "?")
                        info["age_s"] = max(0.0, (time.time_ns() - int(h["created_ns"])) / 1e9)
                    del h
            finally:
                seg.close()
        out.append(info)
    return out


def _platform_name(arg: str | None) -> str:
    """The platform a command talks to: the argument, else ``HDEMU_PLATFORM``, else this user's one
    live standalone platform. Embedded platforms are never picked implicitly (they belong to the
    process that started them)."""
    name = arg or os.environ.get("HDEMU_PLATFORM")
    if name:
        src = "argument" if arg else "HDEMU_PLATFORM"
        if not any(n == name for n, _p, _t in list_segments()):
            raise PlatformError(f"no platform {name!r} (from {src}): it is not running"
                                + (" (stale HDEMU_PLATFORM?)" if not arg else ""))
        uid = segment_uid(name)
        if uid != os.getuid():
            raise PlatformError(f"platform {name} belongs to another user (uid {uid})")
        return name
    mine = [p for p in live_platforms() if p["mode"] == "standalone"]
    if len(mine) == 1:
        return mine[0]["name"]
    if not mine:
        raise PlatformError("no running standalone platform of yours (start one with `hdemu up`, or name one)")
    raise PlatformError(f"several platforms of yours run ({', '.join(p['name'] for p in mine)}); "
                        f"name one or set HDEMU_PLATFORM")


def _open_output(path: str, mode: str, what: str):
    """``open(path, mode)``; a path that cannot be opened (no such directory, a directory, no
    permission) is an expected error naming it, not a traceback."""
    try:
        return open(path, mode)
    except OSError as exc:
        raise HdemuError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None


def cmd_up(args) -> int:
    config = os.path.abspath(args.config) if args.config else None
    if config:
        load_config(config)                  # a bad config is reported here (ConfigError), not by the child
    r, w = os.pipe()
    cmd = [sys.executable, "-m", "hostside.platform", "serve", "--ready-fd", str(w)]
    if config:
        cmd += ["--config", config]
    log = _open_output(args.log, "ab", "the log") if args.log else subprocess.DEVNULL
    try:
        p = subprocess.Popen(cmd, pass_fds=(w,), start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=log)
    finally:
        os.close(w)
        if args.log:
            log.close()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S + 5
    try:
        with os.fdopen(r, "rb") as f:
            data = f.readline()
    except KeyboardInterrupt:
        # Ctrl-C while the platform starts: the pipe is closed, so the platform stops once it is up
        # (it cannot announce its name); wait for that, so no process of it outlives this command
        p.terminate()
        try:
            p.wait(STARTUP_TIMEOUT_S + STOP_TIMEOUT_S + 5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
        raise
    info = json.loads(data) if data.strip() else {}
    if "name" not in info:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
        why = info.get("error") or f"exit code {p.returncode}" + (f"; see {args.log}" if args.log else "")
        raise PlatformError(f"platform failed to start: {why}")
    if args.quiet:
        print(info["name"])
    else:
        print(f"hdemu platform {info['name']} up (supervisor pid {info['pid']})")
        print(f"export HDEMU_PLATFORM={info['name']}")
    return 0


def cmd_down(args) -> int:
    name = _platform_name(args.name)
    with_boot = PlatformMap.attach(name)
    try:
        embedded = bool(with_boot.boot_hdr["embedded"][0])
    finally:
        with_boot.close()
    if embedded:
        raise PlatformError(f"{name} is an embedded platform: it stops with the process that owns it")
    ok = request_shutdown(name)
    print(f"hdemu platform {name} {'down' if ok else 'did not stop in time (sent SIGTERM)'}")
    return 0 if ok else 1


def cmd_ls(args) -> int:
    plats = live_platforms(all_users=args.all)
    if args.json:
        print(json.dumps(plats, indent=2))
        return 0
    if not plats:
        print("no live platform")
        return 0
    print(f"{'name':40} {'mode':10} {'state':9} {'pid':>8} {'uid':>6} {'age':>9}")
    for p in plats:
        age = "-" if p["age_s"] is None else f"{p['age_s']:.1f}s"
        print(f"{p['name']:40} {p['mode']:10} {p['state']:9} {p['supervisor_pid']:>8} {p['uid']:>6} {age:>9}")
    return 0


def cmd_status(args) -> int:
    st = status(_platform_name(args.name))
    print(json.dumps(st, indent=2) if args.json else format_status(st))
    return 0


def cmd_clean(args) -> int:
    removed = sweep(alive=run_alive)
    for n in removed:
        print(f"removed /dev/shm/{n}")
    if not args.quiet:
        print(f"hdemu clean: {len(removed)} segment(s) of dead runs removed")
    return 0


def cmd_trace(args) -> int:
    pm = PlatformMap.attach(_platform_name(args.name))
    try:
        _open_output(args.out, "a", "the trace").close()    # a path that cannot be written: one line
        n = write_trace(pm, args.out)
    finally:
        pm.close()
    print(f"wrote {n} trace events to {args.out}")
    return 0


def _exec_module(module: str, argv: list) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *argv])
    return 127  # not reached


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hdemu", description="host/device boundary emulator")
    ap.add_argument("--version", action="version", version=f"hdemu {hdemu.__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up", help="start a standalone platform that outlives its clients")
    p.add_argument("--config", help="TOML file with a [platform] table")
    p.add_argument("--log", help="append the platform's log (every role's logger) to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the platform name")
    p.set_defaults(fn=cmd_up)
    p = sub.add_parser("down", help="stop one of your standalone platforms")
    p.add_argument("name", nargs="?")
    p.set_defaults(fn=cmd_down)
    p = sub.add_parser("ls", help="list live platforms (standalone and embedded): owner, pid, age")
    p.add_argument("--all", action="store_true", help="other users' platforms too")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_ls)
    p = sub.add_parser("status", help="roles, pids, queues and statistics")
    p.add_argument("name", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_status)
    p = sub.add_parser("clean", help="remove your segments whose creator is dead")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_clean)
    p = sub.add_parser("trace", help="write a Chrome/Perfetto JSON trace of a running platform")
    p.add_argument("out")
    p.add_argument("--name")
    p.set_defaults(fn=cmd_trace)
    p = sub.add_parser("demo", help="run the demo workload on an embedded platform")
    p.set_defaults(fn=lambda a: _exec_module("hostside.demo", []))
    p = sub.add_parser("counters", add_help=False, prefix_chars="\0",
                       help="[-o out.csv] -- [python] prog.py args: every counter of every dispatch (kernel replay)")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=lambda a: _exec_module("hostside.replay.counters", a.args))
    p = sub.add_parser("run", add_help=False, prefix_chars="\0",
                       help="SCENARIO.toml|NAME [--out DIR] [--list]: run a fault-injection scenario, check its promises")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=lambda a: _exec_module("hostside.faults", ["run", *a.args]))
    p = sub.add_parser("study", add_help=False, prefix_chars="\0",
                       help="NAME [--small] [--out DIR] [--list]: a timing study: CSV, PNG plots, trace, summary")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=lambda a: _exec_module("hostside.studies", a.args))
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except HdemuError as exc:
        print(f"hdemu {args.cmd}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (`hdemu ls | head`): say so once, without a traceback at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print(f"hdemu {args.cmd}: output closed", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"hdemu {args.cmd}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
