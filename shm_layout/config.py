"""The platform config: one typed schema for the TOML ``[platform]`` table and ``[platform.profiling]``.

Every key is declared exactly once, below, as a field of ``Platform`` or ``Profiling``: its type, its
range (``ge``/``le``, ``POW2``, a ``Literal`` of choices), its default and a one-line description.
Everything else is derived from those declarations:

* validation: pydantic v2 in strict mode (a bool is not an integer, a string is not a number; an
  integer is a fine number), unknown keys refused, models frozen. Each structured pydantic error
  (loc/type/ctx/input) becomes one line of a ``ConfigError`` that names the full key path and what
  was expected: ``platform.agents must be an integer in [1, 16], not 0``; ``exc.key`` is the path
  of the first one;
* ``parse_config(table)``: the fully defaulted plain dict that ``Topology``, ``DfxGeometry`` and the
  roles read (also behind ``topology.DEFAULTS`` / ``validate_config`` and ``dfx.PROFILING_DEFAULTS`` /
  ``validate_profiling``); ``load_config_file(path)`` / ``load_config_text(text, source)`` for TOML;
* ``config_table_markdown()``: the key table in README.md (``python -m shm_layout.config --markdown``).

Checks that involve several keys are the ``model_validator`` of each model; ``CROSS_CHECKS`` states
them for the docs.

To add a key: add one field to ``Platform`` or ``Profiling`` with ``Field(default, description=...)``
and its range (ge/le, ``POW2``, a Literal), read it where it is used, then regenerate the README
table (``python -m shm_layout.config --markdown``, paste between the markers; the test in
tests/unit/shm_layout/test_config.py fails until you do) and add the key to that test's table. A type
other than bool, int, float, str, Literal, list, dict or the policy union needs a case in
``_expect`` / ``_doc_type`` / ``_doc_range``.

Imports only ``layouts``, ``dfx_records`` and ``errors``: ``dfx`` and ``topology`` import this module.
"""
import json
import re
import sys
import tomllib
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Discriminator, Field,
                      StringConstraints, Tag, ValidationError, model_validator)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from . import layouts as L
from .dfx_records import ARCHS, DFX_BUF_MAX_BYTES, KIND_NAMES, POLICIES, SUBSYSTEMS, DfxBuffers
from .errors import ConfigError

__all__ = ["Platform", "Profiling", "CROSS_CHECKS", "parse_config", "parse_profiling", "load_config_file",
           "load_config_text", "platform_defaults", "profiling_defaults", "config_table_markdown"]

#: At most this many AICPU threads (lanes * threads_per_lane) in all.
MAX_AICPU_THREADS = 64


# ---- building blocks of the field types ------------------------------------------------------------
def _power_of_two(v: int) -> int:
    if v & (v - 1):
        raise PydanticCustomError("power_of_two", "not a power of two")
    return v


#: Marks an integer field that must be a power of two (``Annotated[int, POW2]``).
POW2 = AfterValidator(_power_of_two)


class _Key:
    """Names the keys of a per-kind or per-thread table, for messages and docs."""

    def __init__(self, name: str, known: str):
        self.name, self.known = name, known


def _int_key(v: Any) -> Any:
    # Python callers may key pool_overrides by int; TOML keys are strings. Both become "3".
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


KindName = Annotated[Literal[tuple(KIND_NAMES)], _Key("kind name", "known: " + ", ".join(KIND_NAMES))]
ThreadIndex = Annotated[str, BeforeValidator(_int_key), StringConstraints(pattern=r"^(0|[1-9][0-9]*)$"),
                        _Key("thread index", "keys are thread indexes 0 .. lanes * threads_per_lane - 1")]
Policy = Literal[POLICIES]
PolicySpec = Annotated[Union[Annotated[Policy, Tag("name")], Annotated[dict[KindName, Policy], Tag("table")]],
                       Discriminator(lambda v: "name" if isinstance(v, str) else "table")]
Buffers = Annotated[int, Field(ge=1, le=1024)]
Records = Annotated[int, Field(ge=1, le=1 << 20)]   # the segment-size check below bounds the product
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _cross(key: str, msg: str) -> PydanticCustomError:
    """A failed check across keys; ``key`` is relative to the model it is raised in."""
    return PydanticCustomError("cross_field", "{msg}", {"key": key, "msg": msg})


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# ---- the schema --------------------------------------------------------------------------------------
class Profiling(_Strict):
    """``[platform.profiling]``: the DFX profiling pipeline (docs/profiling.md)."""

    enabled: bool = Field(False, description="start the AICPU writer lanes and the host collector")
    lanes: int = Field(2, ge=1, le=MAX_AICPU_THREADS, description="AICPU writer lane processes")
    threads_per_lane: int = Field(1, ge=1, le=MAX_AICPU_THREADS, description="AICPU threads in each lane")
    mode: Literal["real", "synthetic"] = Field(
        "real", description="profile the executed dispatches, or generate a synthetic load")
    subsystems: list[Literal[tuple(SUBSYSTEMS)]] = Field(
        default_factory=lambda: list(SUBSYSTEMS),
        description="record families to collect (the in-band stall records always flow)")
    buffers_per_pool: Buffers = Field(
        8, description="buffers per (thread, kind) pool: the pool the host may allocate from")
    pool_overrides: dict[ThreadIndex, Buffers] = Field(
        default_factory=dict, description="buffers per pool of one thread, by thread index (to shrink one)")
    records_per_buffer: dict[KindName, Records] = Field(
        default_factory=dict, description="records per buffer, by kind (else dfx.DEFAULT_RECORDS_PER_BUFFER)")
    ready_depth: int = Field(64, ge=1, le=1 << 16, description="ready-queue entries per thread")
    policy: PolicySpec = Field(
        "block", description="what a writer does when the host falls behind: for every kind, or by kind")
    block_timeout_s: Seconds = Field(1.0, description="how long a writer blocks under policy block_timeout")
    backpressure_timeout_s: Seconds = Field(
        30.0, description="the backstop of policies block and common_mode (counted in system-counter cycles)")
    drain_shards: int = Field(
        2, ge=1, le=MAX_AICPU_THREADS, description="collector drain shards (at most one per AICPU thread)")
    on_host_gone: Literal["idle", "exit"] = Field(
        "idle", description="what a lane does once the collector is gone")
    output_dir: str = Field("", description='where the collector writes; "" = ./hdemu-dfx-<platform name>')
    synthetic_records_per_s: int = Field(
        0, ge=0, le=10**9, description="synthetic records per second per thread; 0 = as fast as possible")
    synthetic_duration_s: Seconds = Field(
        1.0, description="how long a synthetic writer runs (when synthetic_records is 0)")
    synthetic_records: int = Field(
        0, ge=0, le=10**9, description="synthetic records per thread per kind; 0 = run for the duration")
    synthetic_batch: int = Field(
        256, ge=1, le=1 << 16, description="records a synthetic writer hands to write() at a time")
    skip_writeback_thread: int = Field(
        -1, ge=-1, le=MAX_AICPU_THREADS - 1,
        description="fault injection: the collector omits one write_range_to_device for it; -1 = none")
    synthetic_wait_go: bool = Field(False, description="synthetic lanes wait for ctl.go (benchmarks time from it)")
    autostart: bool = Field(
        True, description="start lanes and collector; false = segments only (a test drives them)")

    @model_validator(mode="after")
    def _threads(self):
        n = self.lanes * self.threads_per_lane
        if n > MAX_AICPU_THREADS:
            raise _cross("threads_per_lane", f"must be at most {MAX_AICPU_THREADS // self.lanes} with "
                         f"{self.lanes} lanes (lanes * threads_per_lane <= {MAX_AICPU_THREADS} AICPU "
                         f"threads), not {self.threads_per_lane}")
        for t in self.pool_overrides:
            if int(t) >= n:
                raise _cross(f"pool_overrides.{t}", f"names thread {t}, but lanes * threads_per_lane "
                             f"gives threads 0 .. {n - 1}")
        if self.skip_writeback_thread >= n:
            raise _cross("skip_writeback_thread", f"must be -1 or a thread in [0, {n - 1}] "
                         f"(lanes * threads_per_lane), not {self.skip_writeback_thread}")
        return self


def _arch_doc() -> str:
    def hz(f: int) -> str:
        return f"{f / 1e9:g} GHz" if f >= 10**9 else f"{f / 1e6:g} MHz"
    return ", ".join(f'"{a}" ({"SVM" if v["svm"] else "non-SVM"}, {hz(v["freq_hz"])} counter)'
                     for a, v in ARCHS.items())


class Platform(_Strict):
    """``[platform]``: the shape of one emulated platform."""

    agents: int = Field(2, ge=1, le=16, description="emulated GPUs, one command processor each")
    engines: int = Field(2, ge=1, le=L.AGENT_MAX_ENGINES - 1,
                         description="AQL execution engines per agent; each agent also has one SDMA engine")
    max_queues: int = Field(16, ge=1, le=256, description="queue slots per agent, shared by all processes; a "
                            "stream takes 1 (+1 once it copies, +1 once it runs a graph with parallel branches) "
                            "while its process holds under half the slots, then shares that process's queues")
    queue_size_max: Annotated[int, POW2] = Field(
        4096, ge=2, le=1 << 16, description="largest queue, in packets; a HIP stream uses min(1024, this)")
    memory_mib: int = Field(64, ge=1, le=16384, description="coarse-grained device memory per agent, MiB")
    host_pool_mib: int = Field(
        64, ge=1, le=16384, description="fine-grained system memory (hipHostMalloc, staging buffers), MiB")
    signals: int = Field(8192, ge=64, le=1 << 20, description="signal slots on the platform")
    max_allocs: int = Field(4096, ge=16, le=1 << 20, description="allocation records per memory region")
    trace_rings: int = Field(32, ge=4, le=1024, description="trace rings: one per process")
    trace_events: Annotated[int, POW2] = Field(16384, ge=64, le=1 << 22, description="events per trace ring")
    arch: Literal[tuple(ARCHS)] = Field("a2a3", description="the DFX memory model: " + _arch_doc())
    profiling: Profiling = Field(default_factory=Profiling,
                                 description="the DFX profiling pipeline, off unless enabled (docs/profiling.md)")
    counter_slots: int = Field(
        4, ge=1, le=16, description="counters the device's counter unit reads per dispatch (docs/replay.md)")

    @model_validator(mode="after")
    def _roles_and_dfxbuf(self):
        p = self.profiling
        if p.enabled and self.agents + 1 + p.lanes > L.BOOT_MAX_ROLES:
            raise _cross("profiling.lanes", f"must be at most {L.BOOT_MAX_ROLES - 1 - self.agents} with "
                         f"{self.agents} agents (agents + 1 collector + lanes <= {L.BOOT_MAX_ROLES} roles), "
                         f"not {p.lanes}")
        size = DfxBuffers(p.model_dump(), self.arch).buf_region_bytes
        if size > DFX_BUF_MAX_BYTES:
            key = "records_per_buffer" if p.records_per_buffer else "buffers_per_pool"
            raise _cross(f"profiling.{key}", f"must be smaller, not {getattr(p, key)!r}: the dfxbuf segment "
                         f"would be {size >> 20} MiB, more than {DFX_BUF_MAX_BYTES >> 20} MiB (threads * "
                         f"kinds * buffers_per_pool * records_per_buffer * record size)")
        return self


#: The checks across keys (the model validators above), for the docs.
CROSS_CHECKS = [
    f"`platform.profiling.lanes` * `threads_per_lane` <= {MAX_AICPU_THREADS} (AICPU threads); "
    "`pool_overrides` keys and `skip_writeback_thread` (unless -1) are thread indexes below that product",
    f"with profiling enabled: `platform.agents` + 1 collector + `platform.profiling.lanes` <= "
    f"{L.BOOT_MAX_ROLES} roles",
    f"the dfxbuf segment (every pool's buffers and records, for the arch's record sizes) <= "
    f"{DFX_BUF_MAX_BYTES >> 20} MiB",
]


# ---- public functions ----------------------------------------------------------------------------------
def parse_config(table: dict | None, *, source: str = "") -> dict:
    """The contents of ``[platform]`` (a dict, maybe with a ``"profiling"`` dict), checked, as the fully
    defaulted plain dict the platform reads; raises ``ConfigError`` (``source`` prefixes its message)."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise ConfigError(f"{_prefix(source)}platform must be a table, not {table!r}", "platform")
    try:
        return Platform.model_validate(table).model_dump()
    except ValidationError as e:
        raise _config_error(e, source) from None


def parse_profiling(table: dict | None, arch: str = "a2a3", *, source: str = "") -> dict:
    """``[platform.profiling]`` alone, checked as part of a ``[platform]`` with this arch (other keys at
    their defaults), defaulted; raises ``ConfigError``."""
    return parse_config({"arch": arch, "profiling": {} if table is None else table}, source=source)["profiling"]


def platform_defaults() -> dict:
    """Every key with its default (a fresh dict): ``parse_config({})``."""
    return Platform().model_dump()


def profiling_defaults() -> dict:
    """Every ``[platform.profiling]`` key with its default (a fresh dict)."""
    return Profiling().model_dump()


def load_config_text(text: str, source: str = "<config>") -> dict:
    """A TOML document holding one ``[platform]`` table, parsed and checked (see ``parse_config``)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        where = f"{source}:{m.group(1)}" if m else source
        raise ConfigError(f"{where}: not valid TOML: {e}", "") from None
    other = [k for k in data if k != "platform"]
    if other:
        what = ", ".join(f"unknown table [{k}]" if isinstance(data[k], dict) else f"key {k} outside [platform]"
                         for k in other)
        raise ConfigError(f"{_prefix(source)}{what}; the config is a single [platform] table", other[0])
    if "platform" not in data:
        raise ConfigError(f"{_prefix(source)}no [platform] table; the config is a single [platform] table",
                          "platform")
    return parse_config(data["platform"], source=source)


def load_config_file(path: str, *, source: str | None = None) -> dict:
    """The config in TOML file ``path``; errors are ``ConfigError``s prefixed with ``source`` (default:
    the path), e.g. ``source="HDEMU_CONFIG=p.toml"``."""
    source = path if source is None else source
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except OSError as e:
        raise ConfigError(f"{source}: cannot read the config: {e.strerror or e}", "") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: not UTF-8 ({e.reason} at byte {e.start})", "") from None
    return load_config_text(text, source)


# ---- pydantic errors -> ConfigError ---------------------------------------------------------------------
def _prefix(source: str) -> str:
    return f"{source}: " if source else ""


def _unwrap(tp: Any, meta: list) -> tuple[Any, list]:
    """(bare type, constraints) of a possibly Annotated type; Field()s inside are flattened."""
    meta = list(meta)
    while get_origin(tp) is Annotated:
        tp, *more = get_args(tp)
        meta += more
    flat = []
    for m in meta:
        flat += m.metadata if isinstance(m, FieldInfo) else [m]
    return tp, flat


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _tag_of(member: Any) -> str | None:
    return next((m.tag for m in _unwrap(member, [])[1] if isinstance(m, Tag)), None)


def _message(err: dict) -> tuple[str, str]:
    """(full key path, message) of one pydantic error."""
    loc, typ, ctx = list(err["loc"]), err["type"], err.get("ctx") or {}
    if typ == "cross_field":
        loc += ctx["key"].split(".")
    path, tp, meta, item, model = ["platform"], Platform, [], None, Platform
    i = 0
    while i < len(loc):
        x, base = loc[i], _unwrap(tp, meta)[0]
        if _is_model(base):
            model, f = base, base.model_fields.get(x)
            path.append(str(x))
            if f is None:
                break
            tp, meta = f.annotation, f.metadata
        elif get_origin(base) is Union:                 # the policy union: loc holds the member's tag
            if i == len(loc) - 1:
                break                                   # the error is about the value as a whole
            tp, meta = next(m for m in get_args(base) if _tag_of(m) == x), []
        elif get_origin(base) is dict:
            ktype, vtype = get_args(base)
            path.append(str(x))
            if i + 1 < len(loc) and loc[i + 1] == "[key]":
                known = next(m for m in _unwrap(ktype, [])[1] if isinstance(m, _Key)).known
                return ".".join(path), f"{'.'.join(path)} is not a known key ({known})"
            tp, meta = vtype, []
        elif get_origin(base) is list:
            item, tp, meta = x, get_args(base)[0], []
        i += 1
    key = ".".join(path)
    shown = key if item is None else f"{key}[{item}]"
    if typ == "extra_forbidden":
        return key, f"{key} is not a known key (known: {', '.join(sorted(model.model_fields))})"
    if typ == "cross_field":
        return key, f"{key} {ctx['msg']}"
    if typ == "power_of_two":
        return key, f"{shown} must be a power of two, not {err['input']!r}"
    return key, f"{shown} must be {_expect(tp, meta)}, not {err['input']!r}"


def _fallback(err: dict) -> tuple[str, str]:
    """An error shape ``_message`` does not know (a new kind of type): pydantic's own words."""
    key = ".".join(["platform", *(str(x) for x in err["loc"])])
    return key, f"{key}: {err['msg']}, not {err['input']!r}"


def _config_error(e: ValidationError, source: str) -> ConfigError:
    msgs = []
    for err in e.errors(include_url=False):
        try:
            msgs.append(_message(err))
        except (StopIteration, KeyError, TypeError):
            msgs.append(_fallback(err))
    return ConfigError("\n".join(_prefix(source) + m for _k, m in msgs), msgs[0][0])


# ---- what a type expects, in words (messages) and in the docs table ----------------------------------------
def _bounds(meta: list) -> tuple[Any, Any]:
    lo = next((m.ge for m in meta if isinstance(m, annotated_types.Ge)), None)
    hi = next((m.le for m in meta if isinstance(m, annotated_types.Le)), None)
    return lo, hi


def _range(meta: list) -> str:
    lo, hi = _bounds(meta)
    if lo is not None and hi is not None:
        return f" in [{lo}, {hi}]"
    return f" >= {lo}" if lo is not None else (f" <= {hi}" if hi is not None else "")


def _choices(values: tuple, quote=repr) -> str:
    q = [quote(v) for v in values]
    return q[0] if len(q) == 1 else (f"{q[0]} or {q[1]}" if len(q) == 2 else "one of " + ", ".join(q))


def _expect(tp: Any, meta: list = ()) -> str:
    """What a value of this type must be: "an integer in [1, 16]", "true or false", ..."""
    base, meta = _unwrap(tp, meta)
    origin = get_origin(base)
    if base is bool:
        return "true or false"
    if base is int:
        return ("a power-of-two integer" if POW2 in meta else "an integer") + _range(meta)
    if base is float:
        return "a number" + _range(meta)
    if base is str:
        return "a string"
    if origin is Literal:
        return _choices(get_args(base))
    if origin is list:
        return "a list, each item " + _expect(get_args(base)[0])
    if origin is dict:
        ktype, vtype = get_args(base)
        label = next(m for m in _unwrap(ktype, [])[1] if isinstance(m, _Key)).name
        return f"a table of {label} -> {_expect(vtype)}"
    if origin is Union:
        return " or ".join(_expect(m) for m in get_args(base))
    if _is_model(base):
        return "a table"
    raise TypeError(f"no description for type {base!r}; add a case to _expect")


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _doc_type(tp: Any) -> str:
    base, _meta = _unwrap(tp, [])
    origin = get_origin(base)
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if base in names:
        return names[base]
    if origin is Literal:
        return "string"
    if origin is list:
        return f"array of {_doc_type(get_args(base)[0])}s"
    if origin is dict:
        ktype, vtype = get_args(base)
        label = next(m for m in _unwrap(ktype, [])[1] if isinstance(m, _Key)).name
        return f"table: {label} → {_doc_type(vtype)}"
    if origin is Union:
        return " or ".join(_doc_type(m) for m in get_args(base))
    if _is_model(base):
        return "table"
    raise TypeError(f"no docs type for {base!r}; add a case to _doc_type")


def _doc_range(tp: Any, meta: list = ()) -> str:
    base, meta = _unwrap(tp, meta)
    origin = get_origin(base)
    if base in (int, float):
        lo, hi = _bounds(meta)
        r = f"{lo} – {hi}" if lo is not None and hi is not None else (f"≥ {lo}" if lo is not None else "")
        return f"power of two, {r}" if POW2 in meta else r
    if origin is Literal:
        return ", ".join(f"`{json.dumps(v)}`" for v in get_args(base))
    if origin is list:
        return "each of " + _doc_range(get_args(base)[0])
    if origin is dict:
        ktype, vtype = get_args(base)
        kbase, kmeta = _unwrap(ktype, [])
        keys = _doc_range(kbase) if get_origin(kbase) is Literal else \
            next(m for m in kmeta if isinstance(m, _Key)).known.removeprefix("keys are ")
        return f"keys: {keys}; values: {_doc_range(vtype)}"
    if origin is Union:
        return "; or ".join(r for r in (_doc_range(m) for m in get_args(base)) if r)
    return ""


def _rows(model: type[BaseModel], prefix: str):
    for name, f in model.model_fields.items():
        path = f"{prefix}.{name}"
        default = "" if _is_model(f.annotation) else f"`{_toml(f.get_default(call_default_factory=True))}`"
        yield path, _doc_type(f.annotation), default, _doc_range(f.annotation, f.metadata), f.description
        if _is_model(f.annotation):
            yield from _rows(f.annotation, path)


def config_table_markdown() -> str:
    """A Markdown table of every key (path, type, default, range or choices, description), then the
    checks across keys; generated from the schema (README.md holds a copy between markers)."""
    def cell(s: str) -> str:
        return s.replace("|", "\\|")
    out = ["| key | type | default | range / choices | description |", "|---|---|---|---|---|"]
    out += ["| " + " | ".join(cell(c) for c in (f"`{p}`", t, d, r, desc)) + " |"
            for p, t, d, r, desc in _rows(Platform, "platform")]
    out += ["", "Checks across keys:", ""] + [f"- {c}" for c in CROSS_CHECKS]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m shm_layout.config --markdown`` prints the README table; ``... FILE`` checks a config
    file and prints it fully defaulted, as JSON."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--markdown"]:
        sys.stdout.write(config_table_markdown())
        return 0
    if len(args) == 1 and not args[0].startswith("-"):
        try:
            print(json.dumps(load_config_file(args[0]), indent=2))
        except ConfigError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    print("usage: python -m shm_layout.config --markdown | FILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
