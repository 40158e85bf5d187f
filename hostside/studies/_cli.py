"""``hdemu study NAME [--small] [--out DIR]`` and ``--list``.

Exit status: 0 when the study ran (whether or not its claim held: a study measures, the summary says
``claim_held``), 1 when it could not run (a platform that does not start, an hdemu error), 2 for a bad
name or option, 130 when interrupted. The last line printed is the summary as one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from shm_layout.errors import HdemuError

from . import _backpressure, _coherence, _dispatch, _graphs, _replay
from ._common import Study, clean_env

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
    args = ap.parse_args(argv)
    if args.list:
        for n, (_m, what) in STUDIES.items():
            print(f"{n:14} {what}")
        return 0
    if args.name not in STUDIES:
        print(f"hdemu study: {'name a study' if not args.name else f'unknown study {args.name!r}'} "
              f"(one of: {', '.join(STUDIES)})", file=sys.stderr)
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
