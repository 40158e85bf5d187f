"""``hdemu run SCENARIO [--out DIR] [--list] [-q] [--no-plot]`` (the ``hdemu`` CLI runs ``python -m hostside.faults
run ...`` in its place) and the short terminal report.

Exit status: 0 when every promise held, 1 when one FAILED (or the platform could not start), 2 for a
bad scenario file (one line per problem, naming the key) or run directory, 130 when interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from shm_layout.errors import ConfigError, HdemuError

from ._remote import supervise
from ._run import run_scenario
from ._schema import builtin_scenarios, load_scenario
from ._workload import run_workload

__all__ = ["main", "format_report"]


def format_report(rep: dict) -> str:
    wl = rep["workload"]
    what = wl["builtin"] or wl["entry"] or wl["program"]
    lines = [f"scenario {rep['scenario']}: {rep['description']}".rstrip(": "),
             f"  platform {rep['platform']}, workload {what} (pid {wl['pid']}, exit {wl['exit_code']}), "
             f"{rep['duration_s']:.1f} s",
             "  faults:"]
    for f in rep["faults"]:
        ev = f.get("evidence") or {}
        tgt = f.get("target") or {"shrink_pool": f"thread {ev.get('thread', '?')} to {ev.get('buffers', '?')} buffer(s)",
                                  "memory_pressure": f"agent {ev.get('agent', '?')} ({ev.get('free_after', '?')} bytes "
                                                     f"left)"}.get(f["kind"], "")
        if f["kind"] == "corrupt_ready_entry":
            tgt = f"DFX ready queue of thread {ev.get('thread', '?')} entry {ev.get('entry', '?')} {ev.get('field', '')}"
        elif f["kind"].startswith("corrupt_"):
            what = f"packet {ev['packet']}" if "packet" in ev else ev.get("field", "")
            tgt = f"workload queue {ev.get('queue', '?')} {what}".rstrip()
        elif f["kind"] == "miopen_db":
            tgt = f"{f.get('how', '')} on {ev.get('path', 'the workload binary cache')}"
        elif f["kind"] == "stall_engine":
            tgt = f"{tgt} engine {ev.get('engine', '?')}"
        trig = ", ".join(f"{k} {v}" for k, v in (f.get("trigger") or {}).items()) or "at platform start"
        if f["state"] == "injected":
            end = f" until {f['end_t_s']:.3f} s" if "end_t_s" in f else ""
            lines.append(f"    [{f['index']}] {f['kind']} {tgt} ({trig}): injected at {f['t_s']:.3f} s{end}")
        else:
            lines.append(f"    [{f['index']}] {f['kind']} {tgt} ({trig}): NOT injected: {f.get('reason', f['state'])}")
    if not rep["faults"]:
        lines.append("    (none)")
    lines.append("  promises:")
    for p in rep["promises"]:
        desc = f" ({p['description']})" if p["description"] else ""
        lines.append(f"    [{p['index']}] {p['verdict']:6} {p['kind']}{desc}: {p['evidence']}")
    lines.append(f"  verdict: {rep['verdict']}; report {rep['out_dir']}/report.json")
    return "\n".join(lines)


def _run(args) -> int:
    if args.list:
        for name, path in sorted(builtin_scenarios().items()):
            print(f"{name:28} {path}")
        return 0
    if not args.scenario:
        print("hdemu run: name a scenario file or a built-in scenario (--list shows them)", file=sys.stderr)
        return 2
    try:
        sc, cfg, _path = load_scenario(args.scenario)
    except ConfigError as exc:
        print(f"hdemu run: {exc}", file=sys.stderr)
        return 2
    prog = sc.workload.program
    if prog is not None and not os.path.isfile(prog):     # the workload runs it from this directory
        print(f"hdemu run: {args.scenario}: workload.program {prog!r} is not a file (a relative path is taken "
              f"from the current directory, {os.getcwd()})", file=sys.stderr)
        return 2
    out = args.out or f"hdemu-run-{sc.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        print(f"hdemu run: cannot create the run directory {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    say = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
    say(f"hdemu run {sc.name}: {len(sc.fault)} fault(s), {len(sc.promise)} promise(s) -> {out}")
    try:
        rep = run_scenario(sc, cfg, out, progress=say, plot=not args.no_plot)
    except KeyboardInterrupt:
        print("hdemu run: interrupted (every process reaped, every segment removed)", file=sys.stderr)
        return 130
    except HdemuError as exc:
        print(f"hdemu run: {exc}", file=sys.stderr)
        return 1
    print(format_report(rep))
    return 0 if rep["verdict"] == "HELD" else 1


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["workload"] and len(args) == 3:
        return run_workload(args[1], args[2])
    if args[:1] == ["supervise"] and len(args) == 3:
        return supervise(args[1], args[2])
    ap = argparse.ArgumentParser(prog="hdemu run", description="run a fault-injection scenario")
    ap.add_argument("scenario", nargs="?", help="a scenario TOML file, or the name of a built-in scenario")
    ap.add_argument("--out", help="the run directory (default ./hdemu-run-<name>-<time>)")
    ap.add_argument("--list", action="store_true", help="list the built-in scenarios")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the report")
    ap.add_argument("--no-plot", action="store_true", help="skip latency.png (matplotlib is not imported)")
    if args[:1] == ["run"]:
        args = args[1:]
    return _run(ap.parse_args(args))
