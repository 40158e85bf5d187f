"""Graph kernel nodes whose arguments come packed in ``extra`` (HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END),
as hipModuleLaunchKernel takes them: added, set on the graph and set on an exec."""
import struct

import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(60)
E = hip.hipError_t
N = 64


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 1})


def _extra(ptr: int, n: int, size=None):
    buf = struct.pack("<QI", ptr, n) + b"\0" * 4          # i32* x, u32 n: 16 bytes with the tail padding
    return [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE,
            len(buf) if size is None else size, hip.HIP_LAUNCH_PARAM_END]


def _read(d):
    out = np.empty(N, np.int32)
    hip.hipMemcpy(out, d, 4 * N, hip.hipMemcpyDeviceToHost)
    return out


def test_kernel_node_arguments_from_extra(mod):
    inc = hip.hipModuleGetFunction(mod, "inc")
    a, b = hip.hipMalloc(4 * N), hip.hipMalloc(4 * N)
    for d in (a, b):
        hip.hipMemset(d, 0, 4 * N)
    g = hip.hipGraphCreate()
    node = hip.hipGraphAddKernelNode(g, None, hip.hipKernelNodeParams(inc, 1, N, extra=_extra(a, N // 2)))
    ex = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(ex, None)
    hip.hipStreamSynchronize(None)
    assert _read(a).tolist() == [1] * (N // 2) + [0] * (N // 2)
    # the exec's own setter: the next launches write b, the graph keeps a
    hip.hipGraphExecKernelNodeSetParams(ex, node, hip.hipKernelNodeParams(inc, 1, N, extra=_extra(b, N)))
    hip.hipGraphLaunch(ex, None)
    hip.hipStreamSynchronize(None)
    assert _read(b).tolist() == [1] * N and _read(a).tolist() == [1] * (N // 2) + [0] * (N // 2)
    # the graph's setter: an exec instantiated later uses it
    hip.hipGraphKernelNodeSetParams(node, hip.hipKernelNodeParams(inc, 1, N, extra=_extra(a, N)))
    ex2 = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(ex2, None)
    hip.hipStreamSynchronize(None)
    assert _read(a).tolist() == [2] * (N // 2) + [1] * (N // 2)
    for x in (ex, ex2):
        hip.hipGraphExecDestroy(x)
    hip.hipGraphDestroy(g)
    for d in (a, b):
        hip.hipFree(d)


def test_bad_extra_is_refused_and_the_graph_is_unchanged(mod):
    inc = hip.hipModuleGetFunction(mod, "inc")
    a = hip.hipMalloc(4 * N)
    g = hip.hipGraphCreate()
    P = hip.hipKernelNodeParams

    def err(params):
        with pytest.raises(hip.HipError) as ei:
            hip.hipGraphAddKernelNode(g, None, params)
        return ei.value.error

    assert err(P(inc, 1, N, kernelParams=[a, N], extra=_extra(a, N))) == E.hipErrorInvalidValue   # both
    assert err(P(inc, 1, N, extra=_extra(a, N, size=8))) == E.hipErrorInvalidValue      # too short a size
    assert err(P(inc, 1, N, extra=[hip.HIP_LAUNCH_PARAM_END])) == E.hipErrorInvalidValue
    assert err(P(inc, 1, N, extra=[hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, 12, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, 16,
                                   hip.HIP_LAUNCH_PARAM_END])) == E.hipErrorInvalidValue   # not bytes-like
    assert hip.hipGraphGetNodes(g) == []
    hip.hipGraphDestroy(g)
    hip.hipFree(a)
