"""``hdemu study NAME [--small] [--out DIR]``, ``--list``, and sweeps: ``hdemu study NAME --sweep SPEC
[--executor {local,dask}] [--scheduler ADDRESS] [--resume] [--repeats N] [--out DIR]`` (docs/SWEEPS.md).

Exit status: 0 when the study ran (whether or not its claim held: a study measures, the summary says
``claim_held``) or every point of a sweep ran, 1 when it could not run (a platform that does not
start, an hdemu error, no Dask cluster), 2 for a bad name, option or sweep spec, 3 when a sweep ran
but some of its points failed (each with its error in ``sweep.csv`` and the summary), 130 when
interrupted (a sweep keeps its finished points: ``--resume`` runs the others). The last line printed
is the summary as one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from shm_layout.errors import HdemuError

from . import _backpressure, _coherence, _dispatch, _graphs, _miopen, _replay
from ._common import Study, clean_env
from ._sweep import SweepError, run_sweep
from ._sweep_spec import SpecError, load_spec

__all__ = ["main", "run_study", "STUDIES"]

#: name -> (module, one line)
STUDIES = {
    "dispatch": (_dispatch, "doorbell-to-fetch and launch-to-completion latency against queues, engines, "
                            "threads, agents and roles per core"),
    "backpressure": (_backpressure, "DFX pool-size sweep: per-lane stall time, drops, finish_time inflation; "
                                    "per-lane policy vs common_mode"),
    "graphs": (_graphs, "host cost per kernel of a graph launch against graph size, vs stream launches"),
    "replay": (_replay, "replay bytes and time against footprint x passes; the copy fence's cost"),
    "coherence": (_coherence, "SVM vs non-SVM: the explicit write-backs' cost per record and per buffer"),
    "miopen": (_miopen, "first-call latency of miopenPoolingForward cold / warm binary cache / warm invoker; "
                        "two processes sharing one .ukdb"),
}


def run_study(name: str, out_dir: str | None = None, small: bool = False) -> dict:
    """Run one study; returns its summary (also written to ``<out_dir>/summary.json``)."""
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; known: {', '.join(STUDIES)}")
    clean_env()
    out = out_dir or os.path.join("studies-out", f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
    return STUDIES[name][0].run(Study(name, out, small))


#: the worker processes a study starts: ``python -m hostside.studies _worker NAME SPEC_JSON``
WORKERS = {"replay": _replay.worker, "dispatch": _dispatch.client}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["_worker"]:
        if len(argv) != 3 or argv[1] not in WORKERS:
            print(f"hdemu study _worker: usage _worker {{{','.join(WORKERS)}}} SPEC_JSON", file=sys.stderr)
            return 2
        print(json.dumps(WORKERS[argv[1]](json.loads(argv[2]))))
        return 0
    ap = argparse.ArgumentParser(prog="hdemu study", description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?", help="the study: " + ", ".join(STUDIES))
    ap.add_argument("--small", action="store_true", help="a small run (seconds): the suite's size")
    ap.add_argument("--out", help="run directory (default studies-out/NAME-TIMESTAMP)")
    ap.add_argument("--list", action="store_true", help="list the studies")
    sw = ap.add_argument_group("sweeps (docs/SWEEPS.md)")
    sw.add_argument("--sweep", metavar="SPEC", help="a sweep TOML file, or inline \"axis=v1,v2; axis2=v; repeats=2\"")
    sw.add_argument("--executor", choices=("local", "dask"), default=None,
                    help="local (default): one point after another, each in a fresh process; dask: Dask tasks")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (tcp://host:8786)")
    sw.add_argument("--resume", action="store_true", help="complete the sweep in --out: run only its missing points")
    sw.add_argument("--repeats", type=int, metavar="N", help="repeats of each point (overrides the spec's)")
    args = ap.parse_args(argv)
    if args.list:
        for n, (_m, what) in STUDIES.items():
            print(f"{n:14} {what}")
        return 0
    if args.name not in STUDIES:
        print(f"hdemu study: {'name a study' if not args.name else f'unknown study {args.name!r}'} "
              f"(one of: {', '.join(STUDIES)})", file=sys.stderr)
        return 2
    if args.sweep or args.resume:
        return _sweep_main(args)
    extra = [o for o, v in (("--executor", args.executor), ("--scheduler", args.scheduler),
                            ("--repeats", args.repeats)) if v is not None]
    if extra:
        print(f"hdemu study {args.name}: {', '.join(extra)} apply to a sweep: give --sweep SPEC", file=sys.stderr)
        return 2
    try:
        summary = run_study(args.name, args.out, args.small)
    except HdemuError as exc:
        print(f"hdemu study {args.name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"hdemu study {args.name}: interrupted", file=sys.stderr)
        return 130
    print(f"study {args.name}: {summary['claim']}: "
          f"{'HELD' if summary['claim_held'] else 'NOT HELD' if summary['claim_held'] is False else 'n/a'} "
          f"({summary['duration_s']:.1f} s; {summary['out_dir']})")
    print(json.dumps(summary))
    return 0


def _sweep_main(args) -> int:
    if args.small:
        print(f"hdemu study {args.name}: --small is a study's size; a sweep sets its axes (mode = \"study\" "
              f"has the axis small)", file=sys.stderr)
        return 2
    clean_env()
    try:
        spec = load_spec(args.sweep, args.name) if args.sweep else None
        if spec is None and not args.out:
            raise SweepError("--resume needs --out DIR: the sweep directory to complete")
        s = run_sweep(spec, args.out, executor=args.executor, scheduler=args.scheduler,
                      resume=args.resume, repeats=args.repeats)
    except SpecError as exc:
        print(f"hdemu study {args.name}: {exc}", file=sys.stderr)
        return 2
    except (SweepError, HdemuError) as exc:
        print(f"hdemu study {args.name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"hdemu study {args.name}: sweep interrupted; finished points kept, --resume runs the others",
              file=sys.stderr)
        return 130
    if s["study"] != args.name:
        print(f"hdemu study {args.name}: the sweep in {args.out} is of {s['study']}", file=sys.stderr)
    for f in s["failed"]:
        print(f"hdemu study {args.name}: point {f['key']} repeat {f['repeat']} failed: {f['error']}", file=sys.stderr)
    print(f"sweep {s['study']}: {s['ok']}/{s['tasks']} points ok, {len(s['failed'])} failed "
          f"({s['duration_s']:.1f} s; {s['out_dir']})")
    print(json.dumps(s))
    return 3 if s["failed"] else 0
