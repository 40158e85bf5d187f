"""The host HSA runtime: agents, memory pools and the allocation tracker, code objects, and the
process's runtime object (``hsa_init`` / ``hsa_shut_down``).

Waits: every wait spins ``WAIT_SPIN_S`` then sleeps on the object's wake word in slices of
``WAIT_SLICE_S``; after each slice it checks that the command processor of the agent involved is
alive and that the queue involved is not in error, and raises ``HsaError`` if not. So a dead device
turns every host wait into an error within ``DEVICE_LOSS_BOUND_S``, never a hang. Every host wait on
device work is bounded by ``Runtime.wait_timeout_s`` (``HDEMU_WAIT_TIMEOUT_S``, read at hsa_init).

Multi-writer fields (documented in shm_layout.layouts): a queue's write index has one writer, this
process, serialised by the queue's ``threading.Lock``; signal values change by atomic add; slot
ownership (queues, signals, code objects) by cas.

Embedded platforms: hsa sits below the platform layer and does not import it. ``hostside.platform``
registers a factory with ``set_platform_factory``; a ``Runtime`` created with no platform name (and
no ``HDEMU_PLATFORM``) calls it to start an embedded platform.
"""
from __future__ import annotations

import atexit
import gc
import logging
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from shm_layout import layouts as L
from shm_layout.alloc import AllocError, AllocTable
from shm_layout.coherence import wmb
from shm_layout.errors import ConfigError, PlatformError
from shm_layout.kernels import NUMPY_TYPES, Signature, encode_blob, read_globals, read_metadata
from shm_layout.sync import WAIT_SLICE_S, cas, pid_alive
from shm_layout.topology import PlatformMap
from shm_layout.trace import TraceRing

from ._async import AsyncHandler
from ._errors import DeviceLost, HsaError
from ._queue import QUEUE_DESTROY_TIMEOUT_S, Queue
from ._signal import SignalPool

__all__ = ["Runtime", "Agent", "AgentStatistics", "CodeObject", "Allocation", "configure", "runtime", "shutdown",
           "set_platform_factory", "DEVICE_LOSS_BOUND_S", "DEFAULT_WAIT_TIMEOUT_S", "wait_timeout_from_env"]

#: A dead command processor is reported by any host wait within this bound (one wait slice plus
#: the liveness check).
DEVICE_LOSS_BOUND_S = WAIT_SLICE_S + 0.05
#: Longest a host wait on device work (stream/event sync, a full queue, a busy completion signal)
#: may take before it fails loudly with HostWaitTimeout, naming the queue and its indices. A live
#: device that simply runs long kernels needs a larger value: set HDEMU_WAIT_TIMEOUT_S.
DEFAULT_WAIT_TIMEOUT_S = 600.0


def wait_timeout_from_env() -> float:
    """``HDEMU_WAIT_TIMEOUT_S`` (a number of seconds > 0), or ``DEFAULT_WAIT_TIMEOUT_S``."""
    raw = os.environ.get("HDEMU_WAIT_TIMEOUT_S", "")
    if not raw:
        return DEFAULT_WAIT_TIMEOUT_S
    try:
        v = float(raw)
    except ValueError:
        v = -1.0
    if not v > 0:
        raise ConfigError(f"HDEMU_WAIT_TIMEOUT_S must be a number of seconds > 0, not {raw!r}",
                          "HDEMU_WAIT_TIMEOUT_S")
    return v


_log = logging.getLogger("hdemu.hsa")
_platform_factory = None


def set_platform_factory(factory) -> None:
    """Register ``factory(config) -> platform`` (an object with ``.name`` and ``.stop(trace_out=)``),
    used when a Runtime has no platform to attach to. ``hostside.platform`` registers its embedded
    platform here when it is imported."""
    global _platform_factory
    _platform_factory = factory


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AgentStatistics:
    """``Agent.statistics()``: an agent's device counters at one moment."""
    cp_pid: int
    state: int              # AGENT_* of shm_layout.layouts
    copies: int
    reclaimed_queues: int
    reclaimed_allocs: int
    packets: int


class Agent:
    def __init__(self, rt: "Runtime", index: int):
        self.rt = rt
        self.index = index
        self.map = rt.pm.agents[index]
        self.a64 = memoryview(self.map.seg.buf).cast("Q")
        self.a16 = memoryview(self.map.seg.buf).cast("H")
        self.name = f"hdemu-gpu{index}"
        self._dead = None

    @property
    def cp_pid(self) -> int:
        return int(self.map.hdr["cp_pid"][0])

    def alive(self) -> bool:
        if self._dead:
            return False
        st = int(self.map.hdr["state"][0])
        if st != L.AGENT_READY or not pid_alive(self.cp_pid):
            self._dead = f"command processor of agent {self.index} (pid {self.cp_pid}) is gone"
            return False
        return True

    def check_alive(self) -> None:
        if not self.alive():
            raise DeviceLost(self.index, self._dead)

    def statistics(self) -> "AgentStatistics":
        """A snapshot of the agent's device counters (packets summed over its engines)."""
        h = self.map.hdr[0]
        return AgentStatistics(cp_pid=int(h["cp_pid"]), state=int(h["state"]), copies=int(h["copies"]),
                               reclaimed_queues=int(h["reclaimed_queues"]),
                               reclaimed_allocs=int(h["reclaimed_allocs"]),
                               packets=int(self.map.engine_stats["packets"].sum()))


class CodeObject:
    """A loaded code object: its slot in the table and its kernels' metadata.

    Unloading has two steps: ``retire()`` refuses new dispatches of its kernels (``unloaded``), and
    ``unload()`` frees the slot and the device globals. Whoever calls ``unload()`` first makes sure no
    packet in flight still uses them (``hipModuleUnload`` synchronises every stream in between): the
    command processor looks the kernel up by slot and generation, and a global's memory may belong to
    a new allocation once it is freed."""

    def __init__(self, rt, slot, gen, name, meta):
        self.rt, self.slot, self.gen, self.name, self.meta = rt, slot, gen, name, meta
        self.kernels = {m["name"]: (L.make_kernel_object(slot, gen, i), Signature(m["signature"]))
                        for i, m in enumerate(meta)}
        self._unloaded = False          # no new dispatch of its kernels (retire)
        self._released = False          # slot and device globals given back (unload)
        self._lock = threading.Lock()
        # device globals: name -> (type, count, [address per agent], bytes) (hipModuleGetGlobal)
        self.globals = {k: (t, c, a, c * np.dtype(NUMPY_TYPES[t]).itemsize)
                        for k, (t, c, a) in (meta[0].get("globals", {}) if meta else {}).items()}

    # a code object goes with its runtime (hipDeviceReset): its kernel objects name a slot of a table
    # that is gone, or that the next runtime of a standalone platform refills, so a launch of one is
    # refused at the call and a late unload frees nothing of the runtime after it
    @property
    def unloaded(self) -> bool:
        """No new dispatch of its kernels (retired, or its runtime was shut down)."""
        return self._unloaded or self.rt.closed

    @property
    def released(self) -> bool:
        """Its slot and device globals were given back (unloaded, or its runtime was shut down)."""
        return self._released or self.rt.closed

    def retire(self) -> None:
        """Refuse new dispatches of its kernels; the slot and the globals stay until ``unload``."""
        self._unloaded = True

    def unload(self) -> None:
        """Retire it and free its slot and device globals (once; later calls do nothing)."""
        with self._lock:
            if self.released:
                return
            self._released = True
        self._unloaded = True
        cas(self.rt.pm.segs["codeobj"].addr + self.slot * L.codeobj_entry.itemsize,
            L.own_word(os.getpid(), L.CO_LOADED), 0)
        for _t, _c, addrs, _n in self.globals.values():
            for addr in addrs:
                try:
                    self.rt.free(addr)
                except HsaError as exc:     # already freed (hipFree of a global's address)
                    _log.warning("unloading %s: device global at %#x: %s", self.name, addr, exc)


class Allocation:
    __slots__ = ("base", "size", "agent", "kind")

    def __init__(self, base, size, agent, kind):
        self.base, self.size, self.agent, self.kind = base, size, agent, kind


class Runtime:
    """hsa_init(): attach to a platform (``HDEMU_PLATFORM``) or start an embedded one."""

    def __init__(self, boot_name: str | None = None, *, config: dict | None = None):
        self.platform = None
        if boot_name is None:
            boot_name = os.environ.get("HDEMU_PLATFORM") or None
        if boot_name is None:
            if _platform_factory is None:
                raise PlatformError("no platform to attach to: set HDEMU_PLATFORM, or import hostside.platform "
                                    "(hostside.hip does) so that an embedded platform can be started")
            self.platform = _platform_factory(config)
            boot_name = self.platform.name
        self.pm = PlatformMap.attach(boot_name, wait_up_s=10.0)
        if self.pm.state != L.BOOT_UP:
            raise HsaError(L.HSA_STATUS_ERROR_NOT_INITIALIZED,
                           f"platform {boot_name} is {L.BOOT_STATE_NAMES.get(self.pm.state, '?')}, not up")
        self.boot_name = boot_name
        self.wait_timeout_s = wait_timeout_from_env()
        self.s64 = memoryview(self.pm.segs["signals"].buf).cast("Q")
        self.agents = [Agent(self, a) for a in range(self.pm.topo.n_agents)]
        self.signals = SignalPool(self)
        self.queues: list[Queue] = []
        self.trace = TraceRing.claim(self.pm, 0, f"host{os.getpid()}")
        self.host_table = AllocTable(self.pm.alloc_hdrs[0], self.pm.alloc_recs[0], L.HOST_POOL_BASE,
                                     self.pm.topo.host_pool_bytes, -1)
        self.device_tables = [AllocTable(self.pm.alloc_hdrs[1 + a], self.pm.alloc_recs[1 + a],
                                         L.device_base(a), self.pm.topo.memory_bytes, a)
                              for a in range(self.pm.topo.n_agents)]
        self.tracker: dict[int, Allocation] = {}    # base -> Allocation: the allocation tracker
        self.tracker_lock = threading.Lock()
        self.code_objects: list[CodeObject] = []
        self.async_handler = AsyncHandler(self)
        self.closed = False
        self.unmapped = False           # shutdown could unmap every segment at once
        atexit.register(self.shutdown)

    # -- liveness ----------------------------------------------------------------------------------
    def check_devices(self) -> None:
        for ag in self.agents:
            ag.check_alive()

    # -- memory pools --------------------------------------------------------------------------
    def allocate(self, agent: int | None, nbytes: int, kind: int) -> int:
        """hsa_amd_memory_pool_allocate: ``agent`` None = fine-grained system memory."""
        table = self.host_table if agent is None else self.device_tables[agent]
        try:
            addr = table.allocate(nbytes, kind)
        except AllocError as exc:
            raise HsaError(exc.status, str(exc)) from None
        with self.tracker_lock:
            self.tracker[addr] = Allocation(addr, -(-nbytes // L.ALLOC_ALIGN) * L.ALLOC_ALIGN,
                                            -1 if agent is None else agent, kind)
        return addr

    def free(self, addr: int) -> None:
        with self.tracker_lock:
            a = self.tracker.pop(addr, None)
        if a is None:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ALLOCATION, f"{addr:#x} is not a live allocation of this process")
        table = self.host_table if a.agent < 0 else self.device_tables[a.agent]
        table.free(addr)

    def pointer_info(self, addr: int) -> Allocation | None:
        """hsa_amd_pointer_info: the allocation (with its owning agent) that contains ``addr``."""
        with self.tracker_lock:
            a = self.tracker.get(addr)
            if a is not None:
                return a
            for a in self.tracker.values():
                if a.base <= addr < a.base + a.size:
                    return a
        return None

    def allocations(self, agent: int | None = None, kinds=None) -> list[Allocation]:
        """The tracker's inventory, filtered by owning agent and kind (kernel replay's snapshot set)."""
        with self.tracker_lock:
            return [a for a in self.tracker.values()
                    if (agent is None or a.agent == agent) and (kinds is None or a.kind in kinds)]

    def host_view(self, addr: int, nbytes: int) -> np.ndarray:
        """u8 view of fine-grained system memory (hipHostMalloc'ed or staging) at ``addr``."""
        off = addr - L.HOST_POOL_BASE
        if off < 0 or off + nbytes > self.pm.topo.host_pool_bytes:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                           f"[{addr:#x}, +{nbytes}) is not fine-grained system memory")
        return self.pm.segs["hostpool"].u8[off:off + nbytes]

    # -- code objects --------------------------------------------------------------------------
    def load_code_object(self, source: str, name: str = "<code object>") -> CodeObject:
        try:
            meta = read_metadata(source, name)
            gdecl = read_globals(source, name)
        except ValueError as exc:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, str(exc)) from None
        if gdecl and meta:      # device globals: one zeroed copy per agent, listed in every kernel's entry
            table = {}
            for g, (ty, count) in gdecl.items():
                nbytes = count * np.dtype(NUMPY_TYPES[ty]).itemsize
                addrs = [self.allocate(a, nbytes, L.ALLOC_DEVICE) for a in range(len(self.agents))]
                for a, addr in enumerate(addrs):
                    off = addr - L.device_base(a)
                    self.pm.segs[f"mem{a}"].u8[off:off + nbytes] = 0
                table[g] = [ty, count, addrs]
            for m in meta:
                m["globals"] = table
        blob, meta_len = encode_blob(source, meta)
        if len(blob) > L.CODEOBJ_BLOB_BYTES:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                           f"code object {name} is {len(blob)} bytes; at most {L.CODEOBJ_BLOB_BYTES}")
        seg = self.pm.segs["codeobj"]
        me = os.getpid()
        for slot in range(L.CODEOBJ_SLOTS):
            if cas(seg.addr + slot * L.codeobj_entry.itemsize, 0, L.own_word(me, L.CO_LOADING)):
                break
        else:
            raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"all {L.CODEOBJ_SLOTS} code-object slots are in use")
        e = self.pm.codeobj[slot:slot + 1]
        gen = (int(e["gen"][0]) + 1) & 0xFFFF
        self.pm.codeobj_blob(slot)[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        e["gen"] = gen
        e["src_len"] = len(blob) - meta_len
        e["meta_len"] = meta_len
        e["n_kernels"] = len(meta)
        e["name"] = name.encode()[:63]
        wmb()
        cas(seg.addr + slot * L.codeobj_entry.itemsize, L.own_word(me, L.CO_LOADING), L.own_word(me, L.CO_LOADED))
        co = CodeObject(self, slot, gen, name, meta)
        self.code_objects.append(co)
        return co

    # -- queues --------------------------------------------------------------------------------
    def queue_create(self, agent: int, size: int, kind: int = L.QKIND_AQL, callback=None, data=None,
                     avoid_engines=()) -> Queue:
        if not 0 <= agent < len(self.agents):
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_AGENT, f"agent must be in [0, {len(self.agents)}), not {agent}")
        self.agents[agent].check_alive()
        q = Queue(self, self.agents[agent], size, kind, callback, data, avoid_engines)
        if callback is not None:
            self.async_handler.watch_queue(q)
        return q

    # -- teardown ------------------------------------------------------------------------------
    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        # the exit hook held this runtime (its mappings of every segment, device memory included)
        # for the life of the process: a program that resets the device again and again kept each
        # platform's deleted segments mapped, and their memory in /dev/shm, until it exited
        atexit.unregister(self.shutdown)
        try:
            self.async_handler.stop()
            queues = list(self.queues)
            for q in queues:                # every engine told first, then one deadline for all
                q.request_destroy()
            deadline = time.monotonic() + QUEUE_DESTROY_TIMEOUT_S
            for q in queues:
                try:
                    q.destroy(deadline)
                except Exception as exc:  # noqa: BLE001 - teardown goes on; the CP reclaims the slot
                    _log.warning("shutdown: queue %d of agent %d: %s", q.slot, q.agent.index, exc)
        finally:
            # a Ctrl-C in the queue teardown above (a queue of a stopped CP waits for its drain) still
            # stops the embedded platform: the exit hook is gone, nothing else would remove its segments
            try:
                if self.trace is not None:
                    self.trace.release() if self.platform is None else None
                if self.platform is not None:
                    trace_out = os.environ.get("HDEMU_TRACE_OUT")
                    self.platform.stop(trace_out=trace_out)
                else:
                    self._release_shared()
            finally:
                self.unmapped = self.pm.close()

    def _release_shared(self) -> None:
        """Give back what this process holds on a platform that outlives it."""
        for a in list(self.tracker.values()):
            try:
                self.free(a.base)
            except Exception as exc:  # noqa: BLE001 - teardown goes on; the CP reclaims dead owners' memory
                _log.warning("shutdown: allocation %#x: %s", a.base, exc)
        for co in self.code_objects:
            co.unload()
        me = os.getpid()
        owners = self.pm.signals["owner"]
        mine = np.flatnonzero(L.owner_pid(owners) == me)
        for s in mine:
            cas(self.pm.signal_addr(int(s)) + L.offset_of(L.signal_slot, "owner"), int(owners[s]), 0)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()
_default_config: dict | None = None


def configure(config: dict | None) -> None:
    """Config for the next embedded platform this process starts (keys of shm_layout.topology.DEFAULTS)."""
    global _default_config
    _default_config = config


def runtime(config: dict | None = None) -> Runtime:
    """The process's runtime (hsa_init on first use)."""
    global _runtime
    rt = _runtime
    if rt is not None and not rt.closed:
        return rt
    with _runtime_lock:
        if _runtime is None or _runtime.closed:
            cfg = config if config is not None else _default_config
            _runtime = Runtime(config=cfg)
        return _runtime


def shutdown() -> None:
    """hsa_shut_down: tear down this process's runtime (and its embedded platform)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            return
        rt, _runtime = _runtime, None
        rt.shutdown()
        unmapped = rt.unmapped
        del rt
    if not unmapped:
        # a mapping with live numpy views cannot be unmapped at once; the views sit in reference
        # cycles of the runtime's objects (streams, tables, pools): collect them now, so that the
        # segments' memory (device memory included) goes back to /dev/shm at the reset, not at some
        # later collection. Outside the lock: a finalizer the collection runs may call HIP again
        # (a __del__ that frees device memory starts a new runtime).
        gc.collect()
