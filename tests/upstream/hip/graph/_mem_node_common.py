"""What the ported graph memory node cases share: hip-tests' hipMemAllocNodeParams set-up, its
createGraph helpers, and the attribute checks (sizes scaled down to the ported platform's 32 MiB)."""
from __future__ import annotations

import numpy as np

from hostside import hip

#: upstream's element_count (512 Mi or 64 Mi ints), scaled to the platform's memory
ELEMENTS = 256 * 1024


def alloc_params(nbytes: int, device: int = 0, desc: bool = False) -> hip.hipMemAllocNodeParams:
    """memset(&alloc_param, 0, ...) then bytesize, pinned, a device location (and one read-write
    access descriptor for device 0 when ``desc``)."""
    p = hip.hipMemAllocNodeParams(hip.hipMemPoolProps(hip.hipMemAllocationTypePinned,
                                                      location=hip.hipMemLocation(hip.hipMemLocationTypeDevice, device)),
                                  bytesize=nbytes)
    if desc:
        p.accessDescs = [hip.hipMemAccessDesc(hip.hipMemLocation(hip.hipMemLocationTypeDevice, 0),
                                              hip.hipMemAccessFlagsProtReadWrite)]
        p.accessDescCount = 1
    return p


def fill_graph(host: np.ndarray, fill_value: int, with_free: bool = True):
    """hipGraphAddMemAllocNode.cc's createGraph: alloc, memset of ints, copy to ``host``, and a free
    node unless the caller frees. Returns (exec, device pointer); the graph is destroyed."""
    nbytes = host.nbytes
    graph = hip.hipGraphCreate(0)
    p = alloc_params(nbytes)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    memset = hip.hipGraphAddMemsetNode(graph, alloc, hip.hipMemsetParams(p.dptr, fill_value, 0, 4,
                                                                         width=host.size, height=1))
    copy = hip.hipGraphAddMemcpyNode1D(graph, memset, host, p.dptr, nbytes, hip.hipMemcpyDeviceToHost)
    if with_free:
        hip.hipGraphAddMemFreeNode(graph, copy, p.dptr)
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphDestroy(graph)
    return exe, p.dptr


def attrs(device: int = 0) -> tuple:
    """(UsedMemCurrent, UsedMemHigh, ReservedMemCurrent, ReservedMemHigh)."""
    return tuple(hip.hipDeviceGetGraphMemAttribute(device, a) for a in
                 (hip.hipGraphMemAttrUsedMemCurrent, hip.hipGraphMemAttrUsedMemHigh,
                  hip.hipGraphMemAttrReservedMemCurrent, hip.hipGraphMemAttrReservedMemHigh))


def reset_attrs(device: int = 0) -> None:
    """ResetGraphMemAttribute."""
    hip.hipDeviceSetGraphMemAttribute(device, hip.hipGraphMemAttrUsedMemHigh, 0)
    hip.hipDeviceSetGraphMemAttribute(device, hip.hipGraphMemAttrReservedMemHigh, 0)
