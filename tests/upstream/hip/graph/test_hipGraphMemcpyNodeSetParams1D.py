"""hipGraphMemcpyNodeSetParams1D: a copy node added the other way round (half the size) set to the
copy under test, in each direction; and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._memcpy1d_common import ROUNDED, SECTIONS, SHELLS, SIZES

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemcpyNodeSetParams1D.cc"

E = hip.hipError_t
_REVERSE = {hip.hipMemcpyHostToDevice: hip.hipMemcpyDeviceToHost, hip.hipMemcpyDeviceToHost: hip.hipMemcpyHostToDevice}


def _f(res):
    def f(dst, src, count, kind):
        graph = res.graph()
        node = hip.hipGraphAddMemcpyNode1D(graph, None, src, dst, count // 2, _REVERSE.get(kind, kind))
        hip.hipGraphMemcpyNodeSetParams1D(node, dst, src, count, kind)
        exe = res.instantiate(graph)
        hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
    return f


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("section,kind", SECTIONS)
def test_Unit_hipGraphMemcpyNodeSetParams1D_Positive_Basic(mod, res, section, kind, size):
    # the "Peer access enabled" sections are listed in NOT_PORTED.md (as for hipGraphAddMemcpyNode1D)
    SHELLS[section](mod, res, _f(res), kind, size)


@pytest.mark.parametrize("section", ["node_null", "dst_null", "src_null", "count_0",
                                     pytest.param("count_over_dst", marks=ROUNDED),
                                     pytest.param("count_over_src", marks=ROUNDED)])
def test_Unit_hipGraphMemcpyNodeSetParams1D_Negative_Parameters(mod, res, section):
    graph = res.graph()
    src, dst = np.zeros(2, np.int32), np.zeros(2, np.int32)
    node = hip.hipGraphAddMemcpyNode1D(graph, None, dst, src, dst.nbytes, hip.hipMemcpyDefault)
    args = [node, dst, src, dst.nbytes, hip.hipMemcpyDefault]
    if section == "node_null":
        args[0] = None
    elif section == "dst_null":
        args[1] = None
    elif section == "src_null":
        args[2] = None
    elif section == "count_0":
        args[3] = 0
    elif section == "count_over_dst":
        args[1] = res.malloc(4)
    else:
        args[2] = res.malloc(4)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphMemcpyNodeSetParams1D, *args)
