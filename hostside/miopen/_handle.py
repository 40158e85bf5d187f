"""The handle (MIOpen's Handle): its stream and device, the invoker cache, the kernel cache (kernel_map
and program_map), Handle::LoadProgram and Handle::PrepareInvoker, and the per-call statistics.

Caches, as MIOpen keeps them (all three belong to one handle: MIOpen's KernelCache is a member of
HandleImpl, so a second handle starts with empty maps and finds its programs in the binary cache):

* invoker cache: ``{network_config: {solver_id: invoker}}`` plus ``{network_config: {algorithm:
  solver_id}}`` (``GetInvoker(config, None, algo)``); a registered invoker is never replaced.
* kernel cache: ``kernel_map[(algorithm, network_config)]`` -> kernels and ``program_map[(program_name,
  params)]`` -> Program (params without ``-mcpu``).
* LoadProgram: the binary cache (``KernDb.load(name + ".o", params + " -mcpu=<arch>")``), else compile
  and ``store``.

Levels a call is answered at (``statistics()["last"]["level"]``): ``invoker_cache``, ``kernel_cache``
(kernel_map), ``program_cache`` (program_map), ``binary_cache_user``, ``binary_cache_system``,
``compiled``; a call that needs several kernels reports the deepest.
"""
from __future__ import annotations

import collections
import threading
import time

from hostside import hip

from . import _log
from ._errors import MiopenError, miopenStatus_t
from ._program import Kernel, Program, binary_cache, compile_source

__all__ = ["miopenHandle_t", "miopenCreate", "miopenCreateWithStream", "miopenDestroy", "miopenSetStream",
           "miopenGetStream", "statistics"]

LEVELS = ("invoker_cache", "kernel_cache", "program_cache", "binary_cache_system", "binary_cache_user", "compiled")
_RANK = {lv: i for i, lv in enumerate(LEVELS)}
_COUNTERS = ("calls", "invoker_hits", "solver_searches", "invokers_built", "kernel_cache_hits",
             "program_cache_hits", "binary_cache_hits_user", "binary_cache_hits_system", "compilations",
             "binary_cache_stores", "binary_cache_errors")
_now = time.perf_counter
_all_counters: list[dict] = []              # every handle's counters (this process), for statistics(None)
_registry_lock = threading.Lock()


def _bump(h, name: str, n: int = 1) -> None:
    h.counters[name] += n


def _record(r) -> dict:
    """A call's record: a dict, or the tuple (api, algorithm, network_config, t0, t1, t2) an invoker hit
    leaves (execute_primitive's hot path), made into the same dict."""
    if type(r) is dict:
        return r
    api, algorithm, config, t0, t1, t2 = r
    return {"api": api, "algorithm": algorithm, "network_config": config, "level": "invoker_cache", "solver": None,
            "kernels": [], "steps": {"network_config_s": t1 - t0, "run_s": t2 - t1, "total_s": t2 - t0}}


class InvokerCache:
    __slots__ = ("invokers", "found")

    def __init__(self):
        self.invokers: dict[str, dict[str, object]] = {}
        self.found: dict[str, dict[str, str]] = {}

    def get(self, network_config: str, algorithm: str):
        """GetInvoker(config, nullopt, algo): the invoker of the solver found for ``algorithm``, or None."""
        f = self.found.get(network_config)
        if f is None:
            return None
        sid = f.get(algorithm)
        if sid is None:
            return None
        inv = self.invokers[network_config].get(sid)
        if inv is None:
            raise MiopenError(miopenStatus_t.miopenStatusInternalError,
                              f"No invoker with solver_id of {sid} was registered for {network_config}")
        return inv

    def register(self, invoker, network_config: str, solver_id: str, algorithm: str | None = None) -> None:
        """RegisterInvoker: keep ``invoker`` for (config, solver) unless one is registered already, and
        make ``solver_id`` the found solver of ``algorithm``."""
        self.invokers.setdefault(network_config, {}).setdefault(solver_id, invoker)
        _log.log_i2("Register", f"Invoker registered for algorithm {network_config} and solver {solver_id}")
        if algorithm:
            self.found.setdefault(network_config, {})[algorithm] = solver_id
            _log.log_i2("SetAsFound1_0", f"Solver {solver_id} registered as find 1.0 best for {algorithm} in "
                                         f"{network_config}")

    def __len__(self):
        return sum(len(v) for v in self.invokers.values())


class KernelCache:
    __slots__ = ("kernel_map", "program_map", "users")

    def __init__(self):
        self.kernel_map: dict[tuple[str, str], list[Kernel]] = {}
        self.program_map: dict[tuple[str, str], Program] = {}       # least recently used first
        self.users: dict[tuple[str, str], set[str]] = {}            # program -> network configs using it

    def get_kernels(self, algorithm: str, network_config: str) -> list[Kernel]:
        return self.kernel_map.get((algorithm, network_config), [])

    def add_kernel(self, h, algorithm, network_config, program_name, kernel_name, l_wk, g_wk, params,
                   cache_index, rec, keep=()) -> Kernel:
        key = (program_name, params)
        program = self.program_map.pop(key, None)
        if program is None:
            while True:
                try:
                    program = h.load_program(program_name, params, rec)
                    break
                except MiopenError as exc:
                    # the platform's code-object slots are all in use: give back this handle's least
                    # recently used program (not one this call holds) and try again
                    if not getattr(exc, "out_of_resources", False) or not self.evict_one(h, keep):
                        raise
        else:
            rec["level"] = "program_cache"
            _bump(h, "program_cache_hits")
        self.program_map[key] = program             # now the most recently used
        if network_config:
            self.users.setdefault(key, set()).add(network_config)
        k = Kernel(program, kernel_name, l_wk, g_wk)
        if algorithm and network_config:
            lst = self.kernel_map.setdefault((algorithm, network_config), [])
            if cache_index < len(lst):
                lst[cache_index] = k
            else:
                lst.append(k)
        return k

    def evict_one(self, h, keep) -> bool:
        """Unload the least recently used program not in ``keep`` (program keys), with every kernel and
        invoker of the network configs that use it (they are rebuilt on their next call); False when
        there is none."""
        for key in self.program_map:
            if key not in keep:
                break
        else:
            return False
        program = self.program_map.pop(key)
        program.unload()                    # hipModuleUnload waits for the work launched before
        for config in self.users.pop(key, ()):
            h.invokers.invokers.pop(config, None)
            h.invokers.found.pop(config, None)
            for mk in [mk for mk in self.kernel_map if mk[1] == config]:
                del self.kernel_map[mk]
        _log.log_i("LoadProgram", f"all code-object slots in use: unloaded {key[0]} ({key[1]}) to load another")
        return True


class miopenHandle_t:
    """A MIOpen handle: a device, a stream (None: the null stream) and its caches."""

    def __init__(self, stream=None):
        self.device = hip.hipGetDevice()
        props = hip.hipGetDeviceProperties(self.device)
        self.arch = str(props.gcnArchName).split(":")[0]
        self.num_cu = int(props.multiProcessorCount)
        self.wavefront = int(props.warpSize)
        self.stream = stream
        self.invokers = InvokerCache()
        self.cache = KernelCache()
        self.counters = dict.fromkeys(_COUNTERS, 0)
        with _registry_lock:
            _all_counters.append(self.counters)
        self.memo = {}                  # the API's checks per (descriptors, their versions)
        self.records = collections.deque(maxlen=256)
        self.destroyed = False
        self._db = False                # not resolved yet
        self._scratch = (0, 0)          # (pointer, bytes) of the transposes' device buffer
        _log.log_i("Handle", f"stream: {stream!r}, device_id: {self.device}, arch: {self.arch}, "
                             f"compute units: {self.num_cu}")

    # -- the binary cache ---------------------------------------------------------------------------------
    def binary_cache(self):
        if self._db is False:
            self._db = binary_cache(self.arch, self.num_cu)
        return self._db

    # -- Handle::LoadProgram ------------------------------------------------------------------------------
    def load_program(self, program_name: str, params: str, rec: dict) -> Program:
        full = params + " -mcpu=" + self.arch
        db = self.binary_cache()
        steps = rec["steps"]
        blob = None
        if db is not None:
            t = _now()
            _log.log_i2("LoadBinary", f"Loading binary for: {program_name}.o; args: {full}")
            hit = db.load(program_name + ".o", full)
            steps["binary_cache_load_s"] = steps.get("binary_cache_load_s", 0.0) + _now() - t
            if hit is not None:
                blob, where = hit
                level = "binary_cache_user" if where == "user" else "binary_cache_system"
                rec["level"] = level
                _bump(self, "binary_cache_hits_" + ("user" if where == "user" else "system"))
                _log.log_i2("LoadBinary", f"Successfully loaded binary for: {program_name}.o; args: {full}")
            else:
                _log.log_i2("LoadBinary", f"Unable to load binary for: {program_name}.o; args: {full}")
        if blob is None:
            t = _now()
            source = compile_source(program_name, params)
            blob = source.encode()
            dt = _now() - t
            steps["compile_s"] = steps.get("compile_s", 0.0) + dt
            rec["level"] = "compiled"
            _bump(self, "compilations")
            _log.log_i2("HIPOCProgram", f"Kernel {program_name} Compile Time, ms: {dt * 1e3:.3f}")
            if db is not None:
                t = _now()
                _log.log_i2("SaveBinary", f"Saving binary for: {program_name}.o; args: {full}")
                try:
                    db.store(program_name + ".o", full, blob)
                    _bump(self, "binary_cache_stores")
                except Exception as exc:   # noqa: BLE001 - MIOpen logs a failed save and goes on
                    _bump(self, "binary_cache_errors")
                    _log.log_w("SaveBinary", f"unable to save binary for {program_name}.o: {exc}")
                steps["binary_cache_store_s"] = steps.get("binary_cache_store_s", 0.0) + _now() - t
        t = _now()
        p = Program(program_name, params, blob, f"{program_name} {params}")
        steps["module_load_s"] = steps.get("module_load_s", 0.0) + _now() - t
        return p

    # -- Handle::PrepareInvoker ---------------------------------------------------------------------------
    def prepare_invoker(self, factory, kernels, algorithm: str, network_config: str, call: dict):
        """Build (or find in kernel_map) every kernel of a solution, then the invoker its factory makes."""
        built = []
        cached = self.cache.get_kernels(algorithm, network_config)
        for i, k in enumerate(kernels):
            rec = {"program": k.kernel_file, "kernel": k.kernel_name, "level": None, "steps": call["steps"]}
            _log.log_i2("PrepareInvoker", f"Preparing kernel: {k.kernel_name}")
            if i < len(cached) and cached[i].name == k.kernel_name and cached[i].program.name == k.kernel_file \
                    and cached[i].program.options == k.comp_options:
                kern = cached[i]
                rec["level"] = "kernel_cache"
                _bump(self, "kernel_cache_hits")
            else:
                kern = self.cache.add_kernel(self, algorithm, network_config, k.kernel_file, k.kernel_name, k.l_wk,
                                             k.g_wk, k.comp_options, i, rec,
                                             keep={(b.program.name, b.program.options) for b in built})
            built.append(kern)
            call["kernels"].append({"program": rec["program"], "kernel": rec["kernel"], "level": rec["level"]})
            if _RANK[rec["level"]] > _RANK.get(call["level"], -1):
                call["level"] = rec["level"]
        _bump(self, "invokers_built")
        return factory(built)

    # -- transposes' device buffer ------------------------------------------------------------------------
    def scratch(self, nbytes: int) -> int:
        ptr, size = self._scratch
        if size < nbytes:
            if ptr:
                hip.hipStreamSynchronize(self.stream)   # work queued with the old buffer ends first
                hip.hipFree(ptr)
            ptr = hip.hipMalloc(max(nbytes, 256))
            self._scratch = (ptr, max(nbytes, 256))
        return ptr

    def statistics(self) -> dict:
        """Counters, cache sizes, the binary cache's own statistics and the last calls' records."""
        db = self._db if self._db is not False else None
        out = dict(self.counters)
        out.update(invokers=len(self.invokers), kernel_map=len(self.cache.kernel_map),
                   program_map=len(self.cache.program_map),
                   binary_cache=(db.stats() if db is not None and hasattr(db, "stats") else None),
                   last=(_record(self.records[-1]) if self.records else None),
                   records=[_record(r) for r in self.records])
        return out

    def __repr__(self):
        return f"<miopenHandle_t device {self.device} {self.arch}_{self.num_cu} stream {self.stream!r}>"


def handle(h, what: str = "handle") -> miopenHandle_t:
    if type(h) is not miopenHandle_t:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} must be a miopenHandle_t, not {h!r}")
    if h.destroyed:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} was destroyed (miopenDestroy)")
    return h


def _check_stream(stream):
    if stream is None or stream == 0 or isinstance(stream, hip.hipStream_t):
        return None if stream == 0 else stream
    raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"stream must be a hipStream_t or None, not {stream!r}")


def miopenCreate() -> miopenHandle_t:
    """A handle on the current device and its null stream (as a release build of MIOpen)."""
    return _create(None)


def miopenCreateWithStream(stream) -> miopenHandle_t:
    return _create(_check_stream(stream))


def _create(stream) -> miopenHandle_t:
    try:
        return miopenHandle_t(stream)
    except hip.HipError as exc:
        raise MiopenError(miopenStatus_t.miopenStatusNotInitialized, f"no device for the handle: {exc}") from exc


def miopenDestroy(h) -> None:
    """Wait for the handle's stream, unload its programs and free its buffer."""
    h = handle(h)
    h.destroyed = True
    try:
        hip.hipStreamSynchronize(h.stream)
    except hip.HipError:
        pass
    for p in h.cache.program_map.values():
        p.unload()
    if h._scratch[0]:
        try:
            hip.hipFree(h._scratch[0])
        except hip.HipError:
            pass
    h.cache = KernelCache()
    h.invokers = InvokerCache()
    h.memo = {}


def miopenSetStream(h, streamID) -> None:
    handle(h).stream = _check_stream(streamID)


def miopenGetStream(h):
    return handle(h).stream


def statistics(h=None) -> dict:
    """The handle's statistics (``miopenHandle_t.statistics()``), or this process's totals over every
    handle when ``h`` is None."""
    if h is None:
        with _registry_lock:
            every = list(_all_counters)
        return {k: sum(c[k] for c in every) for k in _COUNTERS}
    return handle(h).statistics()
