"""Timing studies: ``hdemu study NAME [--small] [--out DIR]``, and sweeps of them:
``hdemu study NAME --sweep SPEC [--executor {local,dask}] [--scheduler ADDRESS] [--resume] [--repeats N]``.

Each study starts the platforms it measures, shows its progress on stderr, and writes into one
directory its CSV tables, its PNG figures (matplotlib, Agg), the merged trace where it applies and
``summary.json`` (the claim it reproduces, whether this run bears it out, the headline figures),
whose content is also the last line printed. ``_dispatch`` (latency distributions against queues,
engines, threads, agents and roles per core), ``_backpressure`` (a DFX pool-size sweep, per-lane
policy against common_mode), ``_graphs`` (host cost per kernel against graph size), ``_replay``
(bytes and time against footprint x passes, the copy fence), ``_coherence`` (SVM against non-SVM);
``_client`` is the client process of the dispatch study. Latency distributions are
``shm_layout.histogram`` records filled in place by each process and merged by adding buckets.
docs/STUDIES.md shows each figure and the command that regenerates it.

A sweep (``_sweep*``, docs/SWEEPS.md) runs every point of a study as an independent emulator run in
a fresh process pinned to its own cores, one after another or as Dask tasks, and merges the rows,
the plots (error bars across repeats) and a manifest into one directory.
"""
from ._cli import STUDIES, main, run_study
from ._sweep import run_sweep

__all__ = ["main", "run_study", "STUDIES", "run_sweep"]
