"""hipGraphExecMemcpyNodeSetParams1D: an exec's copy node (added one byte off, one byte short) given
the full copy, in each direction; argument errors; and a copy kind that may not change."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._memcpy1d_common import ROUNDED, SECTIONS, SHELLS, SIZES, offset

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecMemcpyNodeSetParams1D.cc"

E = hip.hipError_t


def _f(res):
    def f(dst, src, count, kind):
        graph = res.graph()
        node = hip.hipGraphAddMemcpyNode1D(graph, None, offset(dst), offset(src), count - 1, kind)
        exe = res.instantiate(graph)
        hip.hipGraphExecMemcpyNodeSetParams1D(exe, node, dst, src, count, kind)
        hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
    return f


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("section,kind", SECTIONS)
def test_Unit_hipGraphExecMemcpyNodeSetParams1D_Positive_Basic(mod, res, section, kind, size):
    # the "Peer access enabled" sections are listed in NOT_PORTED.md (as for hipGraphAddMemcpyNode1D)
    SHELLS[section](mod, res, _f(res), kind, size)


@pytest.mark.parametrize("section", ["exec_null", "node_null", "dst_null", "src_null", "count_0",
                                     pytest.param("count_over_dst", marks=ROUNDED),
                                     pytest.param("count_over_src", marks=ROUNDED)])
def test_Unit_hipGraphExecMemcpyNodeSetParams1D_Negative_Parameters(mod, res, section):
    graph = res.graph()
    src, dst = np.zeros(2, np.int32), np.zeros(2, np.int32)
    node = hip.hipGraphAddMemcpyNode1D(graph, None, dst, src, dst.nbytes, hip.hipMemcpyDefault)
    exe = res.instantiate(graph)
    args = [exe, node, dst, src, dst.nbytes, hip.hipMemcpyDefault]
    if section == "exec_null":
        args[0] = None
    elif section == "node_null":
        args[1] = None
    elif section == "dst_null":
        args[2] = None
    elif section == "src_null":
        args[3] = None
    elif section == "count_0":
        args[4] = 0
    elif section == "count_over_dst":
        args[2] = res.malloc(4)
    else:
        args[3] = res.malloc(4)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemcpyNodeSetParams1D, *args)


_DIRS = [hip.hipMemcpyHostToHost, hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost,
         hip.hipMemcpyDeviceToDevice]


@pytest.mark.parametrize("direction", _DIRS, ids=[d.name for d in _DIRS])
def test_Unit_hipGraphExecMemcpyNodeSetParams1D_Negative_Changing_Memcpy_Direction(mod, res, direction):
    host1, _v1 = res.pinned(np.int32, 1)
    host2, _v2 = res.pinned(np.int32, 1)
    dev1, dev2 = res.malloc(4), res.malloc(4)
    src, dst = {hip.hipMemcpyHostToHost: (host1, host2), hip.hipMemcpyHostToDevice: (host1, dev1),
                hip.hipMemcpyDeviceToHost: (dev1, host1), hip.hipMemcpyDeviceToDevice: (dev1, dev2)}[direction]
    graph = res.graph()
    node = hip.hipGraphAddMemcpyNode1D(graph, None, dst, src, 4, direction)
    exe = res.instantiate(graph)
    for set_dir in _DIRS + [hip.hipMemcpyDefault]:
        if set_dir == direction:
            continue
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemcpyNodeSetParams1D, exe, node, dst, src, 4, set_dir)
