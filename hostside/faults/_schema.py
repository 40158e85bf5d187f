"""The scenario file: one TOML document with ``[platform]`` (exactly the platform config schema of
``shm_layout.config``), ``[workload]``, ``[[fault]]`` entries and ``[[promise]]`` entries.

Validated by pydantic in strict mode (a bool is not an integer, a string is not a number), unknown
keys refused; every error is one line naming the key: ``s.toml: fault[1].duration_s is required
for kind 'stop'``. A built-in scenario (``hostside/faults/scenarios/<name>.toml``) is found by its
name alone.
"""
from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from shm_layout.config import parse_config

from ._corrupt import READY_FIELDS
from shm_layout.errors import ConfigError

__all__ = ["Scenario", "Workload", "Fault", "Promise", "load_scenario", "load_scenario_text", "builtin_scenarios",
           "resolve_scenario", "BUILTINS", "FAULT_KINDS", "PROMISE_KINDS", "TRIGGERS", "CORRUPT_KINDS",
           "AT_START_KINDS", "DURATION_KINDS", "COLLECTOR_KINDS", "ENGINE_KINDS", "DB_FAULTS", "MIOPEN_PROMISES",
           "MIOPEN_STATUSES", "RELEASED_KINDS"]

#: Built-in workloads (``[workload] builtin = ...``), each in ``_workload``.
BUILTINS = ("launch_loop", "async_pipeline", "graph_loop", "dfx_synthetic", "replay_loop", "miopen")
#: Fault kinds of this slice.
FAULT_KINDS = ("kill", "stop", "corrupt_header", "shrink_pool", "stall_engine", "corrupt_kernel_object",
               "corrupt_kernarg", "corrupt_dependency", "corrupt_read_index", "corrupt_doorbell", "memory_pressure",
               "slow_collector", "stall_shard", "slow_wakeup", "corrupt_ready_entry", "miopen_db")
#: Corruptions of the workload's queue (``_corrupt``): target omitted or ``workload``, ``queue`` says which.
CORRUPT_KINDS = ("corrupt_header", "corrupt_kernel_object", "corrupt_kernarg", "corrupt_dependency",
                 "corrupt_read_index", "corrupt_doorbell")
#: Kinds applied before the workload starts (no trigger).
AT_START_KINDS = ("shrink_pool", "memory_pressure")
#: Kinds that last ``duration_s`` (required).
DURATION_KINDS = ("stop", "stall_engine", "slow_collector", "stall_shard", "slow_wakeup")
#: ``miopen_db``'s ``how``: ``hostside.miopen._kerndb.FAULTS``, and the ``miopenStatus_t`` names a
#: ``miopen_error`` promise may expect. Written out, not imported: only the processes that touch a binary
#: cache import ``hostside.miopen`` (``_miopen``); tests/scenarios/test_run_miopen.py checks they agree.
DB_FAULTS = ("malformed_file", "md5_mismatch", "locked", "readonly_dir")
MIOPEN_STATUSES = ("miopenStatusSuccess", "miopenStatusNotInitialized", "miopenStatusInvalidValue",
                   "miopenStatusBadParm", "miopenStatusAllocFailed", "miopenStatusInternalError",
                   "miopenStatusNotImplemented", "miopenStatusUnknownError", "miopenStatusUnsupportedOp",
                   "miopenStatusGpuOperationsSkipped", "miopenStatusVersionMismatch")
#: Kinds that may last ``duration_s`` (then released; without it, released when the workload has ended).
RELEASED_KINDS = ("miopen_db",)
#: Kinds that act on one engine of a command processor (target ``cp<i>``, ``engine``).
ENGINE_KINDS = ("stall_engine", "slow_wakeup")
#: Kinds that act on the DFX collector (target omitted or ``collector``; profiling must be on).
COLLECTOR_KINDS = ("slow_collector", "stall_shard", "corrupt_ready_entry")
#: What a fault's ``when`` can be (exactly one of them, except for the kinds applied at start): a time,
#: a count, or an event (``on_lane_stall``: DFX lane i's first stall, as its lane_status counts it;
#: ``on_replay_window``: the workload entered its n-th replay window, 1-based; ``after_calls``: the
#: workload's n-th MIOpen call ended, from its ``miopen_call`` events).
TRIGGERS = ("at_s", "after_dispatches", "after_records", "on_lane_stall", "on_replay_window", "after_calls")
#: Promise kinds (``_promises``).
PROMISE_KINDS = ("host_error", "no_host_error", "workload_completes", "role_dead", "roles_alive",
                 "others_served", "probe_served", "reclaimed", "queue_error", "dfx_balanced", "dfx_no_loss",
                 "engine_stalled", "roles_exit", "segments_removed", "dfx_lanes_stalled", "dfx_drops_counted",
                 "shard_stalled", "latency_rose", "dfx_loss_reported", "miopen_error", "miopen_no_error",
                 "miopen_busy_waits", "miopen_recovered", "miopen_others_served")
#: Promise kinds about a workload's MIOpen calls (``_promises_miopen``).
MIOPEN_PROMISES = ("miopen_error", "miopen_no_error", "miopen_busy_waits", "miopen_recovered", "miopen_others_served")
_ROLE = r"^(workload|collector|supervisor|cp(0|[1-9][0-9]*)|lane(0|[1-9][0-9]*))$"
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
#: The longest fault (``duration_s``): its deadline is written in nanoseconds into 64-bit words
#: (``stall_until_ns``): about 292 years would not fit; 10^6 s (11.6 days) is far above any useful run.
MAX_FAULT_S = 1e6


def _bad(msg: str) -> PydanticCustomError:
    return PydanticCustomError("scenario", "{msg}", {"msg": msg})


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Workload(_Strict):
    """``[workload]``: what the client process runs."""
    builtin: Optional[Literal[BUILTINS]] = None
    entry: Optional[Annotated[str, Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")]] = None
    program: Optional[str] = None
    args: list[str] = Field(default_factory=list)
    streams: int = Field(2, ge=1, le=16)
    device: int = Field(0, ge=0)
    batch: int = Field(8, ge=1, le=512)            # launches per synchronisation
    iterations: Count = 0                          # 0: run for duration_s
    duration_s: Seconds = 1.0
    nodes: int = Field(8, ge=1, le=256)            # graph_loop: kernels per graph
    elements: int = Field(1024, ge=1, le=1 << 20)  # async_pipeline: floats per stream
    threads: bool = False                          # launch_loop: each stream in a thread of its own
    wait_events: bool = False                      # launch_loop: an event record + same-stream wait per batch
    passes: int = Field(2, ge=2, le=16)            # replay_loop: replay passes per dispatch
    wait_timeout_s: Seconds = 10.0                 # HDEMU_WAIT_TIMEOUT_S of the workload
    timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 60.0   # the run's bound
    # miopen: the x shapes pooled (NCHW or NCDHW), backward calls too, the binary cache's busy limit
    shapes: list[Annotated[list[Annotated[int, Field(ge=1, le=4096)]], Field(min_length=4, max_length=5)]] = Field(
        default_factory=lambda: [[2, 4, 8, 8]], min_length=1, max_length=8)
    backward: bool = True
    db_busy_limit_s: Seconds = 30.0                # HDEMU_MIOPEN_DB_BUSY_LIMIT_S (MIOpen waits 30 s)

    @model_validator(mode="after")
    def _one_source(self):
        given = [k for k in ("builtin", "entry", "program") if getattr(self, k) is not None]
        if len(given) != 1:
            raise _bad("needs exactly one of builtin, entry, program" + (f" (given: {', '.join(given)})"
                                                                        if given else ""))
        for i, sh in enumerate(self.shapes):
            if min(sh[2:]) < 2:
                raise _bad(f"shapes[{i}] {sh}: every spatial length must be at least 2 (the pooling window)")
            n = 1
            for v in sh:
                n *= v
            if n > 1 << 20:
                raise _bad(f"shapes[{i}] {sh} has {n} elements, more than {1 << 20}")
        return self


class Fault(_Strict):
    """One ``[[fault]]``: kind, target, when, duration."""
    kind: Literal[FAULT_KINDS]
    target: Optional[Annotated[str, Field(pattern=_ROLE)]] = None
    at_s: Optional[Seconds] = None
    after_dispatches: Optional[Count] = None
    after_records: Optional[Count] = None
    on_lane_stall: Optional[Count] = None          # the DFX lane whose first stall triggers it
    on_replay_window: Optional[Annotated[int, Field(ge=1)]] = None   # the n-th replay window (1-based)
    after_calls: Optional[Annotated[int, Field(ge=1)]] = None        # the workload's n-th MIOpen call ended
    duration_s: Optional[Annotated[float, Field(gt=0, le=MAX_FAULT_S, allow_inf_nan=False)]] = None
    queue: int = Field(0, ge=0)                    # corrupt_header: the workload's n-th AQL queue
    packet_type: int = Field(4, ge=0, le=255)      # corrupt_header: the type written (4 = AGENT_DISPATCH)
    thread: int = Field(0, ge=0)                   # shrink_pool, corrupt_ready_entry: AICPU thread
    buffers: int = Field(1, ge=1, le=1024)         # shrink_pool: its buffers per pool
    engine: int = Field(0, ge=0)                   # stall_engine: the engine of the CP (n_engines = SDMA)
    free_bytes: int = Field(65536, ge=0)           # memory_pressure: device memory left free
    delay_s: Optional[Annotated[float, Field(gt=0, le=1.0, allow_inf_nan=False)]] = None   # slow_collector, slow_wakeup
    shard: int = Field(0, ge=0)                    # stall_shard: the collector's drain shard
    field: Optional[Literal[READY_FIELDS]] = None  # corrupt_ready_entry: the ready_entry field changed
    how: Optional[Literal[DB_FAULTS]] = None       # miopen_db: what is done to the binary cache (_kerndb)

    @model_validator(mode="after")
    def _shape(self):
        when = [k for k in TRIGGERS if getattr(self, k) is not None]
        if self.kind in AT_START_KINDS:
            if when:
                raise _bad(f"{when[0]} does not apply to kind {self.kind!r} (applied when the platform starts)")
        elif len(when) != 1:
            raise _bad(f"needs exactly one of {', '.join(TRIGGERS)}" + (f" (given: {', '.join(when)})" if when else ""))
        if self.kind in DURATION_KINDS and self.duration_s is None:
            raise _bad(f"duration_s is required for kind {self.kind!r}")
        if self.kind not in DURATION_KINDS + RELEASED_KINDS and self.duration_s is not None:
            raise _bad(f"duration_s does not apply to kind {self.kind!r}")
        if self.kind in ("kill", "stop") and self.target is None:
            raise _bad(f"target is required for kind {self.kind!r} (workload, cp<i>, lane<i>, collector or "
                       f"supervisor)")
        if self.target == "supervisor" and self.kind not in ("kill", "stop"):
            raise _bad(f"target 'supervisor' takes kind 'kill' or 'stop', not {self.kind!r}")
        if self.kind in ENGINE_KINDS and (self.target is None or not self.target.startswith("cp")):
            raise _bad(f"target of kind {self.kind!r} is a command processor: cp<i> (and engine = its engine)")
        if self.kind in CORRUPT_KINDS and self.target not in (None, "workload"):
            raise _bad(f"target of kind {self.kind!r} is a queue of the workload: omit it or say 'workload'")
        if self.kind in COLLECTOR_KINDS and self.target not in (None, "collector"):
            raise _bad(f"target of kind {self.kind!r} is the DFX collector: omit it or say 'collector'")
        if (self.kind in ("slow_collector", "slow_wakeup")) != (self.delay_s is not None):
            raise _bad(f"kind {self.kind!r} needs delay_s (seconds " + ("per buffer drained)" if self.kind ==
                       "slow_collector" else "per wake-up)") if self.delay_s is None
                       else f"delay_s does not apply to kind {self.kind!r}")
        if self.kind == "miopen_db" and self.how is None:
            raise _bad(f"kind 'miopen_db' needs how (one of {', '.join(map(repr, DB_FAULTS))})")
        if self.how is not None and self.kind != "miopen_db":
            raise _bad(f"how does not apply to kind {self.kind!r}")
        if self.kind == "miopen_db" and self.target not in (None, "workload"):
            raise _bad("target of kind 'miopen_db' is the workload's MIOpen binary cache: omit it or say 'workload'")
        if self.field is not None and self.kind != "corrupt_ready_entry":
            raise _bad(f"field does not apply to kind {self.kind!r}")
        if self.kind == "shrink_pool" and self.target is not None:
            raise _bad("target does not apply to kind 'shrink_pool' (say thread and buffers)")
        if self.kind == "memory_pressure" and self.target is not None:
            raise _bad("target does not apply to kind 'memory_pressure' (the workload's device; say free_bytes)")
        return self

    @property
    def trigger(self) -> tuple[str, float] | None:
        for k in TRIGGERS:
            v = getattr(self, k)
            if v is not None:
                return k, v
        return None


class Promise(_Strict):
    """One ``[[promise]]``: a kind and its parameters (see docs/FAULTS.md)."""
    kind: Literal[PROMISE_KINDS]
    fault: int = Field(0, ge=0)                    # the fault it is about (index into [[fault]])
    error: Optional[str] = None                    # host_error: the hipError_t name; miopen_error: in the message
    within_s: Optional[Seconds] = None             # host_error, reclaimed: the bound
    roles: list[Annotated[str, Field(pattern=_ROLE)]] = Field(default_factory=list)   # roles_alive
    role: Optional[Annotated[str, Field(pattern=_ROLE)]] = None                       # role_dead
    status: Optional[str] = None                   # queue_error: the HSA status name; miopen_error: miopenStatus_t
    description: str = ""

    @model_validator(mode="after")
    def _params(self):
        if self.kind == "miopen_error" and self.error is None:
            raise _bad("kind 'miopen_error' needs error (a part of the message, e.g. \"Possible database corruption\")")
        if self.kind == "host_error" and (self.error is None or self.within_s is None):
            raise _bad("kind 'host_error' needs error and within_s")
        if self.kind == "roles_exit" and self.within_s is None:
            raise _bad("kind 'roles_exit' needs within_s")
        if self.kind == "role_dead" and self.role is None:
            raise _bad("kind 'role_dead' needs role")
        if self.kind == "queue_error" and self.status is None:
            raise _bad("kind 'queue_error' needs status")
        return self


class Scenario(_Strict):
    name: str = ""
    description: str = ""
    workload: Workload
    fault: list[Fault] = Field(default_factory=list)
    promise: list[Promise] = Field(min_length=1)
    platform: dict = Field(default_factory=dict)   # checked by shm_layout.config, then replaced by its dict


def _where(loc) -> str:
    out = ""
    for x in loc:
        out += f"[{x}]" if isinstance(x, int) else (f".{x}" if out else str(x))
    return out


def _line(err: dict) -> str:
    key, typ, ctx = _where(err["loc"]), err["type"], err.get("ctx") or {}
    shown = repr(err.get("input"))
    if typ == "scenario":
        return f"{key}: {ctx['msg']}" if key else ctx["msg"]
    if typ == "missing":
        return f"{key} is required"
    if typ == "extra_forbidden":
        return f"{key} is not a known key"
    if typ == "literal_error":
        return f"{key} must be {ctx.get('expected')}, not {shown}"
    if typ == "string_pattern_mismatch":
        return f"{key} must match {ctx.get('pattern')}, not {shown}"
    if typ in ("int_type", "int_from_float"):
        return f"{key} must be an integer, not {shown}"
    if typ in ("float_type", "finite_number"):
        return f"{key} must be a number, not {shown}"
    if typ in ("greater_than_equal", "greater_than", "less_than_equal", "too_short"):
        return f"{key} {err['msg'].lower().replace('input should be', 'must be')}, not {shown}"
    return f"{key}: {err['msg']}, not {shown}"


def _cross_check(sc: Scenario, cfg: dict) -> list[str]:
    """Checks across the tables: targets exist on this platform, promise fault indexes exist."""
    errs, prof = [], cfg["profiling"]
    threads = prof["lanes"] * prof["threads_per_lane"]

    def role_ok(key, r):
        if r is None or r == "workload" or r == "supervisor":
            return
        if r == "collector" or r.startswith("lane"):
            if not prof["enabled"]:
                errs.append(f"{key} {r!r} needs [platform.profiling] enabled = true")
            elif r.startswith("lane") and int(r[4:]) >= prof["lanes"]:
                errs.append(f"{key} {r!r}: the platform has {prof['lanes']} lane(s)")
        elif int(r[2:]) >= cfg["agents"]:
            errs.append(f"{key} {r!r}: the platform has {cfg['agents']} agent(s)")
    for i, f in enumerate(sc.fault):
        role_ok(f"fault[{i}].target", f.target)
        if f.kind == "shrink_pool":
            if not prof["enabled"]:
                errs.append(f"fault[{i}] (shrink_pool) needs [platform.profiling] enabled = true")
            elif f.thread >= threads:
                errs.append(f"fault[{i}].thread must be below {threads} (lanes * threads_per_lane), not {f.thread}")
        if f.after_records is not None and not prof["enabled"]:
            errs.append(f"fault[{i}].after_records needs [platform.profiling] enabled = true")
        if f.on_lane_stall is not None:
            if not prof["enabled"]:
                errs.append(f"fault[{i}].on_lane_stall needs [platform.profiling] enabled = true")
            elif f.on_lane_stall >= prof["lanes"]:
                errs.append(f"fault[{i}].on_lane_stall must be below {prof['lanes']} (the platform's lanes), "
                            f"not {f.on_lane_stall}")
        if f.on_replay_window is not None and sc.workload.builtin not in ("replay_loop", None):
            errs.append(f"fault[{i}].on_replay_window needs a workload that enters replay windows "
                        f"(builtin 'replay_loop', or a user's entry/program recording 'replay_window' events)")
        if f.kind in COLLECTOR_KINDS and not prof["enabled"]:
            errs.append(f"fault[{i}] ({f.kind}) needs [platform.profiling] enabled = true")
        elif f.kind == "corrupt_ready_entry" and f.thread >= threads:
            errs.append(f"fault[{i}].thread must be below {threads} (lanes * threads_per_lane), not {f.thread}")
        elif f.kind == "stall_shard" and f.shard >= min(prof["drain_shards"], threads):
            errs.append(f"fault[{i}].shard must be below {min(prof['drain_shards'], threads)} (the collector's drain "
                        f"shards: drain_shards, at most one per AICPU thread), not {f.shard}")
        uses_miopen = sc.workload.builtin in ("miopen", None)   # the builtin, or a user's code that says so
        if f.after_calls is not None and not uses_miopen:
            errs.append(f"fault[{i}].after_calls needs a workload that makes MIOpen calls (builtin 'miopen', or a "
                        f"user's entry/program recording 'miopen_call' events)")
        if f.kind == "miopen_db" and not uses_miopen:
            errs.append(f"fault[{i}] (miopen_db) acts on the workload's MIOpen binary cache: builtin 'miopen' (or a "
                        f"user's entry/program recording a 'miopen_db' event with its .ukdb path), not "
                        f"{sc.workload.builtin!r}")
        if f.kind in ENGINE_KINDS and f.engine > cfg["engines"]:
            errs.append(f"fault[{i}].engine must be at most {cfg['engines']} (engines; {cfg['engines']} is the "
                        f"SDMA engine), not {f.engine}")
        if f.kind in ("memory_pressure", *CORRUPT_KINDS) and sc.workload.device >= cfg["agents"]:
            errs.append(f"fault[{i}] ({f.kind}) acts on workload.device {sc.workload.device}: the platform has "
                        f"{cfg['agents']} agent(s)")
    for i, p in enumerate(sc.promise):
        about_fault = p.kind in ("host_error", "role_dead", "others_served", "reclaimed", "queue_error",
                                 "engine_stalled", "roles_exit", "shard_stalled", "latency_rose", "dfx_loss_reported",
                                 "miopen_error", "miopen_busy_waits", "miopen_recovered", "miopen_others_served")
        if about_fault and p.fault >= len(sc.fault):
            errs.append(f"promise[{i}].fault must name one of the {len(sc.fault)} [[fault]] entries, not {p.fault}")
        role_ok(f"promise[{i}].role", p.role)
        for r in p.roles:
            role_ok(f"promise[{i}].roles", r)
        if (p.role == "supervisor" or "supervisor" in p.roles) and not any(f.target == "supervisor"
                                                                          for f in sc.fault):
            errs.append(f"promise[{i}] names the supervisor, which only a scenario with a fault on target "
                        f"'supervisor' runs in a process of its own")
        if p.kind == "shard_stalled" and p.fault < len(sc.fault) and sc.fault[p.fault].kind != "stall_shard":
            errs.append(f"promise[{i}] (shard_stalled) is about a stall_shard fault, not {sc.fault[p.fault].kind!r}")
        if p.kind == "dfx_loss_reported" and p.fault < len(sc.fault) and sc.fault[p.fault].kind != "corrupt_ready_entry":
            errs.append(f"promise[{i}] (dfx_loss_reported) is about a corrupt_ready_entry fault, not "
                        f"{sc.fault[p.fault].kind!r}")
        about = sc.fault[p.fault] if about_fault and p.fault < len(sc.fault) else None
        if p.kind in ("miopen_busy_waits", "miopen_recovered") and about is not None:
            if about.kind != "miopen_db":
                errs.append(f"promise[{i}] ({p.kind}) is about a miopen_db fault, not {about.kind!r}")
            elif p.kind == "miopen_busy_waits" and about.how != "locked":
                errs.append(f"promise[{i}] (miopen_busy_waits) is about a miopen_db fault with how = 'locked', not "
                            f"{about.how!r}")
            elif p.kind == "miopen_recovered" and about.duration_s is None:
                errs.append(f"promise[{i}] (miopen_recovered) is about a fault that is released: fault[{p.fault}] "
                            f"needs duration_s")
        if p.kind == "miopen_error" and p.status is not None and p.status not in MIOPEN_STATUSES:
            errs.append(f"promise[{i}].status must be a miopenStatus_t name such as 'miopenStatusInternalError', not "
                        f"{p.status!r}")
        if p.kind in MIOPEN_PROMISES and sc.workload.builtin not in ("miopen", None):
            errs.append(f"promise[{i}] ({p.kind}) is about MIOpen calls: the workload must be builtin 'miopen' (or a "
                        f"user's entry/program recording 'miopen_call' events), not {sc.workload.builtin!r}")
        if (p.kind.startswith("dfx_") or p.kind == "shard_stalled") and not prof["enabled"]:
            errs.append(f"promise[{i}] ({p.kind}) needs [platform.profiling] enabled = true")
    if sc.workload.builtin == "dfx_synthetic" and (not prof["enabled"] or prof["mode"] != "synthetic"):
        errs.append("workload.builtin 'dfx_synthetic' needs [platform.profiling] enabled = true, mode = \"synthetic\"")
    return errs


def _apply_shrinks(table: dict, faults: list[Fault], source: str) -> dict:
    """The platform table with every shrink_pool fault written into profiling.pool_overrides."""
    shrinks = [f for f in faults if f.kind == "shrink_pool"]
    if not shrinks:
        return table
    table = dict(table)
    prof = dict(table.get("profiling") or {})
    over = dict(prof.get("pool_overrides") or {})
    for f in shrinks:
        over[str(f.thread)] = f.buffers
    prof["pool_overrides"] = over
    table["profiling"] = prof
    return table


def load_scenario_text(text: str, source: str = "<scenario>") -> tuple[Scenario, dict]:
    """(scenario, the platform config dict, fully defaulted, shrink_pool faults applied); raises
    ``ConfigError`` with one line per problem, each naming its key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        raise ConfigError(f"{source}{':' + m.group(1) if m else ''}: not valid TOML: {e}", "") from None
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        lines = [f"{source}: {_line(err)}" for err in e.errors(include_url=False)]
        first = _where(e.errors()[0]["loc"])
        raise ConfigError("\n".join(lines), first) from None
    if not isinstance(data.get("platform", {}), dict):
        raise ConfigError(f"{source}: platform must be a table", "platform")
    cfg = parse_config(_apply_shrinks(sc.platform, sc.fault, source), source=source)
    errs = _cross_check(sc, cfg)
    if errs:
        raise ConfigError("\n".join(f"{source}: {m}" for m in errs), errs[0].split(" ")[0])
    if not sc.name:
        sc = sc.model_copy(update={"name": Path(source).stem})
    return sc, cfg


def builtin_scenarios() -> dict[str, Path]:
    """Name -> path of every scenario shipped in this package (``scenarios/*.toml``)."""
    root = resources.files(__package__) / "scenarios"
    return {Path(p.name).stem: Path(str(p)) for p in root.iterdir() if p.name.endswith(".toml")}


def resolve_scenario(arg: str) -> Path:
    """A path to an existing file, or the name of a built-in scenario."""
    p = Path(arg)
    if p.is_file():
        return p
    known = builtin_scenarios()
    if arg in known:
        return known[arg]
    raise ConfigError(f"no scenario {arg!r}: not a file, and not a built-in one "
                      f"(built-in: {', '.join(sorted(known))})", "")


def load_scenario(arg: str) -> tuple[Scenario, dict, Path]:
    """(scenario, platform config, path) of a file or a built-in name; ``ConfigError`` if bad."""
    path = resolve_scenario(arg)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise ConfigError(f"{arg}: cannot read the scenario: {e.strerror or e}", "") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{arg}: not valid TOML: not UTF-8 ({e.reason} at byte {e.start})", "") from None
    sc, cfg = load_scenario_text(text, str(path) if path.name != arg else arg)
    return sc, cfg, path
