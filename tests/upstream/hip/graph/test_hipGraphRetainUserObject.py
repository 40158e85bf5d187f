"""hipGraphRetainUserObject with hipGraphReleaseUserObject: a graph owning user-object references
(moved or new), through instantiate and launch; argument checks; CLR's no-op over-releases."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._userobj_common import OBJECTS, Destroyed

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphRetainUserObject.cc"

E = hip.hipError_t
INT_MAX = 2 ** 31 - 1
NO_SYNC = hip.hipUserObjectNoDestructorSync
MOVE = hip.hipGraphUserObjectMove


@pytest.mark.parametrize("kind", OBJECTS)
def test_Unit_hipGraphRetainUserObject_Functional_1(mod, res, kind):
    obj, destroy = kind(), Destroyed()
    graph = res.graph()
    h = hip.hipUserObjectCreate(obj, destroy, 1, NO_SYNC)
    hip.hipGraphRetainUserObject(graph, h, 1, MOVE)
    hip.hipGraphReleaseUserObject(graph, h)
    hip.hipUserObjectRelease(h)             # a no-op: the moved reference is gone already (CLR)
    assert destroy == [obj]


def test_Unit_hipGraphRetainUserObject_Functional_2(mod, res):
    n = 1024
    nbytes = n * 4
    a_h, b_h, c_h = np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32) * 2, np.zeros(n, np.int32)
    a_d, b_d, c_d = res.malloc(nbytes), res.malloc(nbytes), res.malloc(nbytes)
    stream = res.stream()
    graph = res.graph()
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, [m1, m2], kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, n], 4, 256))
    hip.hipGraphAddMemcpyNode1D(graph, [k], c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    destroy = Destroyed()
    h = hip.hipUserObjectCreate(1.0, destroy, 2, NO_SYNC)
    hip.hipUserObjectRetain(h, 3)
    hip.hipGraphRetainUserObject(graph, h, 3, MOVE)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (c_h == a_h + b_h).all()
    hip.hipUserObjectRelease(h, 2 + 3)      # the graph and the exec hold theirs still
    hip.hipGraphReleaseUserObject(graph, h, 3)
    assert destroy == []
    hip.hipGraphExecDestroy(exe)            # the exec's reference was the last
    assert destroy == [1.0]


@pytest.mark.parametrize("section", ["null_graph", "null_object", "count_0", "count_INT_MAX", "flag_0",
                                     "flag_INT_MAX"])
def test_Unit_hipGraphRetainUserObject_Negative(mod, res, section):
    graph = res.graph()
    h = hip.hipUserObjectCreate(0.0, Destroyed(), 1, NO_SYNC)
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, None, h, 1, MOVE)
    elif section == "null_object":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, graph, None, 1, MOVE)
    elif section == "count_0":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, graph, h, 0, MOVE)
    elif section == "count_INT_MAX":
        hip.hipGraphRetainUserObject(graph, h, INT_MAX, MOVE)
    elif section == "flag_0":
        hip.hipGraphRetainUserObject(graph, h, 1, 0)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, graph, h, 1, INT_MAX)
    hip.hipUserObjectRelease(h, 1)


def test_Unit_hipGraphRetainUserObject_Negative_Basic(mod, res):
    graph = res.graph()
    h = hip.hipUserObjectCreate(0.0, Destroyed(), 1, NO_SYNC)
    hip.hipGraphRetainUserObject(graph, h, 2, MOVE)
    hip.hipGraphReleaseUserObject(graph, h, 4)
    hip.hipGraphRetainUserObject(graph, h, 8, MOVE)
    hip.hipGraphReleaseUserObject(graph, h, 1)
    hip.hipUserObjectRelease(h, 1)


def test_Unit_hipGraphRetainUserObject_Negative_Null_Object(mod, res):
    graph = res.graph()
    h = hip.hipUserObjectCreate(None, Destroyed(), 1, NO_SYNC)
    hip.hipGraphRetainUserObject(graph, h, 2, MOVE)
    hip.hipGraphReleaseUserObject(graph, h, 4)
    hip.hipGraphRetainUserObject(graph, h, 8, 0)
    hip.hipGraphReleaseUserObject(graph, h, 1)
    hip.hipUserObjectRelease(h, 1)
