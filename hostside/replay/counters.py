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
A program that does not exist, and an output file that cannot be written, are one line on stderr
and exit status 2, before the program runs. The table is written however the program ends: it
returns (after its non-daemon threads have ended, as the interpreter waits for them), calls
``sys.exit`` or ``os._exit`` (the tool wraps ``os._exit`` while the program runs, in this process
only), raises (its traceback is printed as the interpreter would, status 1) or is interrupted with
Ctrl-C (status 130); the tool then exits with the program's status.
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
import traceback

from shm_layout import counters as C

from .. import hsa
from .. import replay          # the tool uses the service's public face, as any tool would

__all__ = ["CounterCollector", "main"]


class CounterCollector:
    def __init__(self, counters=None, *, policy: str = "decline", footprint_budget: int = 0, **bounds):
        if isinstance(counters, str):               # "A,B": the command line's form
            counters = counters.split(",")
        if counters is None:
            ids = list(range(C.N_COUNTERS))
        else:
            ids = [C.counter_id(c.strip() if isinstance(c, str) else c) for c in counters]
            if not ids:
                raise ValueError("no counters named (give at least one, or none for all of them)")
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
                                            "kernel": d.kernel, "status": "incomplete", "passes": 0,
                                            "values": {}}
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
    if args.counters is not None and not args.counters.strip():
        ap.error("--counters is empty (leave it out for every counter)")
    try:
        tool = CounterCollector(args.counters, policy=args.policy,
                                footprint_budget=args.footprint_budget).install()
    except ValueError as exc:
        ap.error(str(exc))
    if args.output:
        try:                                # checked before the program runs, not after it
            open(args.output, "a").close()
        except OSError as exc:
            print(f"hdemu counters: cannot write the table to {args.output}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    done = []

    def finish() -> None:
        """Write the table once: at the program's end, or in its os._exit."""
        if not done:
            done.append(True)
            _write_output(tool, args.output)

    real_exit, pid = os._exit, os.getpid()

    def _exit(status):                      # the program's os._exit: the table first (not in a fork)
        if os.getpid() == pid:
            try:
                finish()
            except BaseException:           # noqa: BLE001 - the process must still exit
                traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
        real_exit(status)

    os._exit = _exit
    try:
        code = _run_program(cmd)
    finally:
        os._exit = real_exit
    try:
        finish()
    except OSError as exc:
        print(f"hdemu counters: cannot write the table to {args.output or 'stdout'}: {exc.strerror or exc}",
              file=sys.stderr)
        return code or 1
    return code


def _run_program(cmd: list[str]) -> int:
    """Run the program in this process as ``python cmd...`` would; its exit status. An uncaught
    exception prints its traceback (the program's frames only) and is status 1, Ctrl-C status 130;
    the program's non-daemon threads are waited for, as the interpreter does before it exits."""
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
    except KeyboardInterrupt as exc:
        _print_program_traceback(exc)
        code = 130
    except BaseException as exc:            # noqa: BLE001 - the program's own error: report, then the table
        _print_program_traceback(exc)
        code = 1
    finally:
        sys.argv = saved
    try:
        _join_program_threads()
    except KeyboardInterrupt:               # a second Ctrl-C: stop waiting, write what was collected
        code = 130
    return code


def _print_program_traceback(exc: BaseException) -> None:
    """The traceback the interpreter would print for the program, without the tool's frames."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__)
                              or tb.tb_frame.f_code.co_filename == "<frozen runpy>"):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)
    sys.stderr.flush()


def _join_program_threads() -> None:
    """Wait for the program's non-daemon threads (the interpreter would, before exiting): their
    dispatches belong in the table."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon and t.is_alive():
            t.join()


def _write_output(tool: CounterCollector, output) -> None:
    graphs = sum(1 for o in replay.outcomes() if o.reason == "graph_launch")
    if graphs:                              # their kernels ran, but are in no row: say so
        print(f"hdemu counters: {graphs} graph launch(es) ran without counters: kernels of a HIP graph are "
              f"not intercepted (docs/replay.md), so the table has no row for them", file=sys.stderr)
    if output:
        n = tool.write_csv(output)
        print(f"hdemu counters: {n} dispatch(es), {len(tool.names)} counter(s) -> {output}", file=sys.stderr)
    else:
        sys.stdout.write(tool.table())
        sys.stdout.flush()

if __name__ == "__main__":
    sys.exit(main())
