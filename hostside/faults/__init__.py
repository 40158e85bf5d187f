"""Scenarios and fault injection: ``hdemu run SCENARIO.toml [--out DIR]``.

A scenario (TOML: ``[platform]``, ``[workload]``, ``[[fault]]``, ``[[promise]]``; ``_schema``) runs a
platform owned by this process, a workload in its own process (``_workload``), injects faults on
schedule (``_inject``: SIGKILL, SIGSTOP/SIGCONT of a role, a corrupted AQL header, a shrunk DFX pool),
records the history and judges each promise against it (``_promises``); a scenario whose faults hit
the supervisor runs the platform under a supervisor process of its own (``_remote``); ``_run`` ties it together and
``_cli`` is the command. The shipped scenarios are package data (``scenarios/*.toml``), found by name.
A room above ``hip``: imports ``hip`` (the workload), ``platform`` (the supervisor) and ``shm_layout``;
``hostside.miopen`` only in ``_miopen`` (the ``miopen`` workload and the process that damages its binary
cache, each a process of its own, so no other process of a run imports the library).
docs/FAULTS.md lists each fault kind, its promise and the scenario that checks it.
"""
from ._cli import format_report, main
from ._inject import Injector, InjectError
from ._promises import check_all
from ._run import run_scenario
from ._schema import (BUILTINS, FAULT_KINDS, PROMISE_KINDS, TRIGGERS, Fault, Promise, Scenario, Workload,
                      builtin_scenarios, load_scenario, load_scenario_text, resolve_scenario)
from ._workload import Events

__all__ = ["main", "run_scenario", "format_report", "load_scenario", "load_scenario_text", "resolve_scenario",
           "builtin_scenarios", "Scenario", "Workload", "Fault", "Promise", "Events", "Injector", "InjectError",
           "check_all", "BUILTINS", "FAULT_KINDS", "PROMISE_KINDS", "TRIGGERS"]
