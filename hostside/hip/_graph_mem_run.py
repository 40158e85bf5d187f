"""Graph memory nodes at instantiate, launch and destroy, and captured hipMallocAsync / hipFreeAsync
(CLR: ihipGraphInstantiate, GraphExec::Run, GraphMemAllocNode / GraphMemFreeNode::CreateCommand,
capturehipMallocAsync / capturehipFreeAsync in hip_graph.cpp). See ``_graph_mem`` for the model."""
from __future__ import annotations

from ._context import _st
from ._errors import _raise, hipError_t
from ._graph_mem import (MEM_TYPES, T_ALLOC, T_FREE, AllocSpec, FreeSpec, _alloc_chunk, _free_chunk, _gm,
                         _gm_existing, _pool, _release, _reserve, _unref, free_async, hipMemAllocNodeParams, is_graph_address)
from ._graph_types import _T, _clone_hooks
from ._mempool import (hipMemAccessDesc, hipMemAllocationTypePinned, hipMemLocation, hipMemLocationTypeDevice,
                       hipMemPoolGetAccess, hipMemPoolProps)
from ._order import fresh_signal
from . import _ordered

#: hipGraphInstantiateFlagAutoFreeOnLaunch
AUTO_FREE = 1


def has_mem_nodes(g) -> bool:
    """``g`` has an alloc or free node of its own (CLR looks at the graph's nodes, not its children's)."""
    return any(n.type in MEM_TYPES for n in g.nodes)


def check_instantiate(g) -> None:
    """CLR's ihipGraphInstantiate: a graph with memory nodes is instantiated once only (even after
    that exec is destroyed): hipErrorNotSupported."""
    if getattr(g, "_instantiated", False) and has_mem_nodes(g):
        _raise(hipError_t.hipErrorNotSupported, "a graph with memory nodes can be instantiated only once")


def on_instantiate(g, exe, order) -> None:
    """The exec holds the addresses of its alloc nodes and a copy of the graph's set of addresses not
    yet freed by a free node (CLR: clonedGraph->memAllocNodePtrs_ = graph->memAllocNodePtrs_)."""
    g._instantiated = True
    exe._mem_nodes = tuple(en.node for en in order if en.node.type in MEM_TYPES)    # before_launch's, once
    specs = [en.node.spec for en in order if en.node.type == T_ALLOC]
    ptrs = set(g.__dict__.get("_mem_ptrs", ()))
    if not specs and not ptrs:
        return
    s = _gm()
    with s.lock:
        for spec in specs:
            spec.va.refs += 1
        exe._mem_specs, exe._mem_ptrs = specs, ptrs
        s.ptr_sets.append(exe)


def _drop_owner(owner) -> None:
    """``owner`` (a graph or an exec) is destroyed: out of the address sets, and its alloc nodes'
    addresses lose a reference. Looks at the live state only (a destroy after hipDeviceReset brings no
    runtime up; its addresses went with the old one: ``_VA.gone``)."""
    specs = owner.__dict__.pop("_mem_specs", ())
    s = _gm_existing()
    if s is None:
        for spec in specs:
            _unref(spec.va)
        return
    with s.lock:
        if owner in s.ptr_sets:
            s.ptr_sets.remove(owner)
        for spec in specs:
            _unref(spec.va)


def on_exec_destroy(exe) -> None:
    _drop_owner(exe)


def on_graph_destroy(g) -> None:
    """The graph's alloc nodes (and its child graphs') give up their addresses."""
    for n in g.nodes:
        if n.type == _T.hipGraphNodeTypeGraph:
            on_graph_destroy(n.spec.graph)
    _drop_owner(g)


def _copy_refs(orig, dup) -> None:
    """A copy of a graph (a child graph node's) holds its alloc nodes' addresses too."""
    specs = [n.spec for n in dup.nodes if n.type == T_ALLOC]
    if not specs:
        return
    s = _gm()
    with s.lock:
        for spec in specs:
            spec.va.refs += 1
        dup._mem_specs = specs
        s.ptr_sets.append(dup)


_clone_hooks.append(_copy_refs)


# -- launch ---------------------------------------------------------------------------------------------
def before_launch(exe, ex, stream) -> object:
    """What a launch of ``exe`` checks before its packets go out: an alloc node whose address hipFree
    gave back cannot be mapped again (hipErrorInvalidValue); freed chunks already passed are released.
    Returns what ``after_launch`` (the launch went out) or ``launch_failed`` (it did not) needs, or
    None for a graph without memory nodes nor AutoFreeOnLaunch."""
    mem = exe.__dict__.get("_mem_nodes")       # found at instantiate: a launch does not scan every node
    if mem is None:
        mem = [en.node for en in ex.order if en.node.type in MEM_TYPES]
    auto = getattr(exe, "flags", 0) & AUTO_FREE
    if not mem and not auto:
        return None
    s = _gm()
    for n in mem:
        if n.type == T_ALLOC and n.spec.va.gone():
            _raise(hipError_t.hipErrorInvalidValue, f"the allocation at {n.spec.va.ptr:#x} was given back by hipFree: "
                                                    "hdemu cannot map memory at that address again")
    _release(s)
    with s.lock:
        sig = fresh_signal(s.retired, _st().rt)
    return (s, ex, stream, mem, auto, sig)


def launch_failed(token) -> None:
    """The launch raised before its packets went out: the graph memory is as it was; the marker's
    signal, which no packet names, goes back."""
    if token is not None:
        token[-1].destroy()


def after_launch(token) -> None:
    """The graph memory work of a launch that went out, in CLR's order (GraphExec::Run): with
    AutoFreeOnLaunch, every chunk of the graph's pool in use is freed first; then, in topological
    order, each alloc node maps a chunk at its address (an address still mapped keeps its old chunk
    in use: CLR maps a new one over it) and each free node unmaps its address's chunk into the free
    list; then a marker behind the launch says when the freed chunks may be released. Its signal
    reads 1 before any free list names it (a 0 would let another thread's release take the chunks
    and sweep the signal before the marker is queued)."""
    if token is None:
        return
    s, ex, stream, mem, auto, sig = token
    v = stream.vgpu
    marker = [sig, []]
    sig.store_relaxed_nowake(1)
    with s.lock:
        if auto:
            device = ex.graph.device if getattr(ex, "graph", None) is not None and ex.graph.device is not None \
                else stream.device
            pool = _pool(s, device)
            for addr, m in list(s.mapped.items()):
                if m[0] is pool:
                    _free_chunk(s, addr, v, marker)
            for chunk in list(pool.busy):       # chunks no address maps any more (leaked by a relaunch)
                pool.free.append([chunk, pool.busy.pop(chunk), v] + marker)
        for n in mem:
            if n.type == T_ALLOC:
                pool = _pool(s, n.spec.device)
                chunk = _alloc_chunk(s, pool, n.spec.va.size, v)
                s.mapped[n.spec.va.ptr] = (pool, chunk, n.spec.va)
            else:
                _free_chunk(s, n.spec.dptr, v, marker)
    v.marker(signal=sig, waiters=marker[1])


# -- capture --------------------------------------------------------------------------------------------
def capture_malloc(s, pool, size: int) -> int:
    """capturehipMallocAsync: an alloc node of the pool's device, with the pool's access per device,
    after the stream's leaves; its address (reserved now) is the result."""
    cap = s.capture
    cap._live()
    n_dev = len(_st().rt.agents)
    descs = [hipMemAccessDesc(hipMemLocation(hipMemLocationTypeDevice, d),
                              int(hipMemPoolGetAccess(pool, hipMemLocation(hipMemLocationTypeDevice, d))))
             for d in range(n_dev)]
    params = hipMemAllocNodeParams(hipMemPoolProps(hipMemAllocationTypePinned,
                                                   location=hipMemLocation(hipMemLocationTypeDevice, pool.device)),
                                   descs, len(descs), size)
    va = _reserve(size, pool.device)
    params.dptr = va.ptr
    spec = AllocSpec(params, va, s.device)
    try:
        cap._append(s, T_ALLOC, spec)
    except BaseException:
        _unref(va)
        raise
    g = cap.graph
    st = _gm()
    with st.lock:
        g.__dict__.setdefault("_mem_specs", []).append(spec)
        if g not in st.ptr_sets:
            st.ptr_sets.append(g)
    return va.ptr


def capture_free(s, ptr: int) -> None:
    """capturehipFreeAsync: a free node of ``ptr`` after the stream's leaves (CLR checks nothing more)."""
    s.capture._append(s, T_FREE, FreeSpec(int(ptr)))


_ordered.graph_mem = (capture_malloc, capture_free, is_graph_address, free_async)
