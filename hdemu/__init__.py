"""hdemu: an emulator of the host/device boundary of GPU and NPU runtimes.

This top-level name is only the version, the map of the packages and the ``hdemu`` console script's
entry (``hdemu._entry``: the CLI imported behind a Ctrl-C guard); the code lives in
``shm_layout`` (the shared contract), ``deviceside`` (command processor, AICPU lanes) and
``hostside`` (hip, clr, hsa, replay, dfx, platform, demo, faults, studies). See docs/ARCHITECTURE.md.
"""
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("hdemu")
except _metadata.PackageNotFoundError:      # a plain checkout that was not installed
    __version__ = "0.0.0+unknown"

#: package -> what it holds (import these, not ``hdemu``)
PACKAGES = {
    "shm_layout": "the shared contract: layouts, coherence helpers, rings, waits, segments, config, errors",
    "deviceside.cp": "the command processor of one GPU agent (AQL and SDMA engines)",
    "deviceside.aicpu": "AICPU writer lanes of the DFX profiling pipeline",
    "hostside.hip": "the HIP face: devices, memory, streams, events, modules, graphs",
    "hostside.replay": "kernel replay and counter collection (rocprofiler-sdk-like)",
    "hostside.clr": "the command layer: virtual GPUs, packets, batches, staging",
    "hostside.hsa": "the HSA runtime: agents, queues, signals, pools, async handler",
    "hostside.dfx": "the DFX collector process and the readers of its outputs",
    "hostside.platform": "supervisor, standalone server, status, trace export, the hdemu CLI",
    "hostside.demo": "the demo workload (./scripts/demo)",
    "hostside.faults": "scenario files, fault injection and promise checks (hdemu run)",
    "hostside.studies": "timing studies: CSV, plots, traces and summaries (hdemu study)",
}

__all__ = ["__version__", "PACKAGES"]
