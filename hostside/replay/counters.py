"""The counter-collection tool: every emulated counter of every dispatch of a program.

The emulated GPU computes N counters per dispatch but the device reads only K of them
(``counter_slots``, default 4). The tool therefore replays every dispatch ``ceil(N / K)`` times
(``hostside.replay``), one counter group per pass: group g lives in its own profiling context with a
``DispatchCounting`` service, all contexts are active when a loop begins, and at PASS ENTER of pass g
the tool starts context g and stops the others (localized context control). A dispatch the service
declines runs once; it then reports only the counters the device had slots for.

API::

    from hostside.replay.counters import CounterCollector
    tool = CounterCollector()           # all counters; CounterCollector(["WAVEFRONTS", ...]) for some
    tool.install()                      # configures the replay service (once per process)
    ... run HIP work ...
    rows = tool.results()               # one dict per dispatch, in submission order
    tool.write_csv("out.csv")

CLI: ``hdemu counters [-o out.csv] [--counters A,B] [--policy decline|fatal] [--footprint-budget B]
-- [python] prog.py args`` (also ``python -m hostside.replay.counters ...``) runs the program in this
process with the tool installed and prints the table (dispatch x counter), or writes it as CSV with
``-o``. The program imports HIP itself; the tool uses only the replay service and the HSA runtime.
A program that does not exist is one line on stderr and exit status 2; a program that calls
``sys.exit`` still gets its table, and the tool exits with the program's status.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import os
import runpy
import sys
import threading

from shm_layout import counters as C

from .. import hsa
from .. import replay          # the tool uses the service's public face, as any tool would

__all__ = ["CounterCollector", "main"]


class CounterCollector:
    def __init__(self, counters=None, *, policy: str = "decline", footprint_budget: int = 0, **bounds):
        ids = [C.counter_id(c) for c in counters] if counters is not None else list(range(C.N_COUNTERS))
        self.ids = list(dict.fromkeys(ids))
        self.names = [C.COUNTER_NAMES[i] for i in self.ids]
        self.policy, self.footprint_budget, self.bounds = policy, footprint_budget, bounds
        self.lock = threading.Lock()
        self.rows: dict[int, dict] = {}
        self.contexts: tuple[replay.Context, ...] = ()     # one per counter group, set once
        self.slots = None
        self.seq = 0

    # -- setup ----------------------------------------------------------------------------------
    def install(self) -> "CounterCollector":
        replay.configure(self._callback, policy=self.policy, footprint_budget=self.footprint_budget,
                         log=lambda line: None, **self.bounds)
        return self

    def _groups(self) -> tuple:
        """The contexts, one per group of ``counter_slots`` counters (made at the first dispatch,
        once, whichever thread submits it)."""
        with self.lock:
            if self.slots is None:
                k = int(hsa.runtime().pm.topo.cfg.get("counter_slots", C.DEFAULT_SLOTS))
                groups = []
                for g in range(0, len(self.ids), k):
                    ctx = replay.Context(f"counters[{g // k}]")
                    replay.DispatchCounting(ctx, self.ids[g:g + k], self._record)
                    ctx.start()
                    groups.append(ctx)
                self.contexts, self.slots = tuple(groups), k
            return self.contexts

    # -- callbacks ------------------------------------------------------------------------------
    def _callback(self, op, phase, d) -> None:
        if op == replay.CONFIG and phase == replay.ENTER:
            d.replay_pass_count = len(self._groups())
            with self.lock:
                self.rows[d.dispatch_id] = {"seq": self.seq, "dispatch_id": d.dispatch_id, "agent": d.agent,
                                            "kernel": d.kernel, "status": "", "passes": 0, "values": {}}
                self.seq += 1
        elif op == replay.PASS and phase == replay.ENTER:
            for g, ctx in enumerate(self._groups()):
                ctx.start() if g == d.current_pass else ctx.stop()
        elif op == replay.CONFIG and phase == replay.EXIT:
            with self.lock:
                row = self.rows.get(d.dispatch_id)
                if row is not None:
                    row["status"] = d.outcome.status + (f":{d.outcome.reason}" if d.outcome.status == "declined"
                                                        else "")
                    row["passes"] = d.outcome.executed

    def _record(self, rec: replay.CounterRecord) -> None:
        with self.lock:
            row = self.rows.get(rec.dispatch_id)
            if row is None:         # a dispatch counted outside the replay service (reentrant)
                row = self.rows[rec.dispatch_id] = {"seq": self.seq, "dispatch_id": rec.dispatch_id,
                                                    "agent": rec.agent, "kernel": rec.kernel,
                                                    "status": "counted", "passes": 1, "values": {}}
                self.seq += 1
            row["values"].update({k: v for k, v in rec.values.items() if v is not None})

    # -- results ---------------------------------------------------------------------------------
    def results(self, timeout_s: float = 10.0) -> list[dict]:
        """One dict per dispatch in submission order: seq, dispatch_id, agent, kernel, status,
        passes, and every counter by name (None where it was not read)."""
        replay.flush(timeout_s)
        with self.lock:
            rows = sorted(self.rows.values(), key=lambda r: r["seq"])
            return [{**{k: r[k] for k in ("seq", "dispatch_id", "agent", "kernel", "status", "passes")},
                     **{n: r["values"].get(n) for n in self.names}} for r in rows]

    def columns(self) -> list[str]:
        return ["seq", "dispatch_id", "agent", "kernel", "status", "passes"] + self.names

    def write_csv(self, path_or_file) -> int:
        rows = self.results()
        f = open(path_or_file, "w", newline="") if isinstance(path_or_file, str) else path_or_file
        try:
            w = csv.DictWriter(f, fieldnames=self.columns())
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else v) for k, v in r.items()})
        finally:
            if isinstance(path_or_file, str):
                f.close()
        return len(rows)

    def table(self) -> str:
        """The results as a text table: one line per dispatch, one column per counter."""
        rows = self.results()
        cols = self.columns()
        cells = [cols] + [[("-" if r[c] is None else str(r[c])) for c in cols] for r in rows]
        width = [max(len(row[j]) for row in cells) for j in range(len(cols))]
        out = io.StringIO()
        for row in cells:
            out.write("  ".join(c.rjust(width[j]) for j, c in enumerate(row)).rstrip() + "\n")
        return out.getvalue()


def _missing(cmd: list[str]) -> str:
    """Why the program ``cmd`` names cannot be run (it does not exist), or ''."""
    if cmd[0] == "-m":
        try:
            spec = importlib.util.find_spec(cmd[1])
        except (ImportError, ValueError) as exc:        # a parent package that is missing or broken
            return f"cannot find module {cmd[1]!r}: {exc}"
        return "" if spec is not None else f"no module named {cmd[1]!r}"
    if not os.path.isfile(cmd[0]):
        return f"no such program: {cmd[0]}" + (" (a directory)" if os.path.isdir(cmd[0]) else "")
    return ""


def _exit_status(code) -> int:
    """The process status of ``sys.exit(code)``, printing a message code as the interpreter does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _bytes_arg(text: str) -> int:
    """A byte count on the command line: an int >= 0 (argparse reports anything else in one line)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative (0 = no budget)")
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="hdemu counters",
                                 description="run a Python program with every dispatch's counters collected "
                                             "by kernel replay")
    ap.add_argument("-o", "--output", help="write the table as CSV to this file (default: print it)")
    ap.add_argument("--counters", help=f"comma-separated counter names (default: all of {', '.join(C.COUNTER_NAMES)})")
    ap.add_argument("--policy", choices=replay.POLICIES, default="decline",
                    help="what an expired drain does (default: decline)")
    ap.add_argument("--footprint-budget", type=_bytes_arg, default=0, help="bytes; larger snapshots are declined (0 = none)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="[--] [python] prog.py args | [--] [python] -m module args")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    cmd = list(args.command)
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if cmd and os.path.basename(cmd[0]).startswith("python"):
        cmd = cmd[1:]
    if not cmd:
        ap.error("no program to run")
    if cmd[0] == "-m" and len(cmd) < 2:
        ap.error("-m needs a module name")
    missing = _missing(cmd)
    if missing:
        print(f"hdemu counters: {missing}", file=sys.stderr)
        return 2
    try:
        tool = CounterCollector(args.counters.split(",") if args.counters else None, policy=args.policy,
                                footprint_budget=args.footprint_budget).install()
    except ValueError as exc:
        ap.error(str(exc))
    code = 0
    saved = sys.argv
    try:
        if cmd[0] == "-m":
            sys.argv = cmd[1:]
            runpy.run_module(cmd[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = cmd
            sys.path.insert(0, os.path.dirname(os.path.abspath(cmd[0])))
            runpy.run_path(cmd[0], run_name="__main__")
    except SystemExit as exc:               # the program called sys.exit(): its table is still written
        code = _exit_status(exc.code)
    finally:
        sys.argv = saved
    if args.output:
        n = tool.write_csv(args.output)
        print(f"hdemu counters: {n} dispatch(es), {len(tool.names)} counter(s) -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(tool.table())
    return code


if __name__ == "__main__":
    sys.exit(main())
