"""hipGraphExecDestroy: null execs refused; an exec of a memset graph destroyed after its graph."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecDestroy.cc"


@pytest.mark.parametrize("section", ["nullptr", "uninitialized"])
def test_Unit_hipGraphExecDestroy_Negative_Parameters(mod, section):
    # hipGraphExec_t{} is a null handle as well
    expect_error(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphExecDestroy, None)


def test_Unit_hipGraphExecDestroy_Positive_Basic(mod, res):
    graph = hip.hipGraphCreate(0)
    stream = hip.hipStreamCreate()
    dev = res.malloc(1024)
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(dev, 0, 1024, 1))
    exe = hip.hipGraphInstantiate(graph)
    assert exe is not None
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphDestroy(graph)
    hip.hipGraphExecDestroy(exe)
    hip.hipStreamDestroy(stream)
