"""The ``hdemu`` command: up, down, status, clean, trace, demo."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _platform_name(arg: str | None) -> str:
    name = arg or os.environ.get("HDEMU_PLATFORM")
    if name:
        return name
    from shm_layout.segments import list_segments
    from shm_layout.sync import pid_alive
    boots = [n for n, pid, _t in list_segments() if n.endswith("-boot") and pid_alive(pid)]
    if len(boots) == 1:
        return boots[0]
    if not boots:
        raise SystemExit("hdemu: no running platform (start one with `hdemu up`)")
    raise SystemExit(f"hdemu: several platforms run ({', '.join(boots)}); name one or set HDEMU_PLATFORM")


def cmd_up(args) -> int:
    from .platform import STARTUP_TIMEOUT_S, role_env
    r, w = os.pipe()
    cmd = [sys.executable, "-m", "hostside.platform", "serve", "--ready-fd", str(w)]
    if args.config:
        cmd += ["--config", os.path.abspath(args.config)]
    log = open(args.log, "ab") if args.log else subprocess.DEVNULL
    p = subprocess.Popen(cmd, pass_fds=(w,), start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, env=role_env())
    os.close(w)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S + 5
    data = b""
    with os.fdopen(r, "rb") as f:
        data = f.readline()
    if not data:
        p.wait(max(0.1, deadline - time.monotonic()))
        print(f"hdemu: platform failed to start (exit code {p.returncode})", file=sys.stderr)
        return 1
    info = json.loads(data)
    if args.quiet:
        print(info["name"])
    else:
        print(f"hdemu platform {info['name']} up (supervisor pid {info['pid']})")
        print(f"export HDEMU_PLATFORM={info['name']}")
    return 0


def cmd_down(args) -> int:
    from .platform import request_shutdown
    name = _platform_name(args.name)
    ok = request_shutdown(name)
    print(f"hdemu platform {name} {'down' if ok else 'did not stop in time (sent SIGTERM)'}")
    return 0 if ok else 1


def cmd_status(args) -> int:
    from .status import status
    name = _platform_name(args.name)
    st = status(name)
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        from .status import format_status
        print(format_status(st))
    return 0


def cmd_clean(args) -> int:
    from shm_layout.segments import sweep
    removed = sweep()
    for n in removed:
        print(f"removed /dev/shm/{n}")
    if not args.quiet:
        print(f"hdemu clean: {len(removed)} segment(s) of dead runs removed")
    return 0


def cmd_trace(args) -> int:
    from shm_layout.topology import PlatformMap
    from .trace_export import write_trace
    pm = PlatformMap.attach(_platform_name(args.name))
    n = write_trace(pm, args.out)
    print(f"wrote {n} trace events to {args.out}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="hdemu", description="host/device boundary emulator")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up", help="start a standalone platform that outlives its clients")
    p.add_argument("--config", help="TOML file with a [platform] table")
    p.add_argument("--log", help="append the platform's output to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the platform name")
    p.set_defaults(fn=cmd_up)
    p = sub.add_parser("down", help="stop a standalone platform")
    p.add_argument("name", nargs="?")
    p.set_defaults(fn=cmd_down)
    p = sub.add_parser("status", help="roles, pids, queues and statistics")
    p.add_argument("name", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_status)
    p = sub.add_parser("clean", help="remove segments whose creator is dead")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_clean)
    p = sub.add_parser("trace", help="write a Chrome/Perfetto JSON trace of a running platform")
    p.add_argument("out")
    p.add_argument("--name")
    p.set_defaults(fn=cmd_trace)
    p = sub.add_parser("demo", help="run the demo workload on an embedded platform")
    p.set_defaults(fn=lambda a: __import__("hostside.demo", fromlist=["main"]).main([]))
    p = sub.add_parser("counters", add_help=False, prefix_chars="\0",
                       help="[-o out.csv] -- [python] prog.py args: every counter of every dispatch (kernel replay)")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=lambda a: __import__("hostside.counters", fromlist=["main"]).main(a.args))
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
