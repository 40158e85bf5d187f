"""hipGraphNodeSetEnabled: kernel, copy and memset nodes of an exec switched off and on again (read back
with hipGraphNodeGetEnabled); the other node types are refused; a kernel, a memset and a copy node
disabled and enabled again in an exec and in the exec of a clone, with the results checked; and the
argument errors of Negative_Functional."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._enabled_common import N, NEGATIVE, all_types_exec, negative_functional

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeSetEnabled.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["kernel", "memcpy", "memset", "host", "empty", "child_graph", "event_wait",
                                     "event_record"])
def test_Unit_hipGraphNodeSetEnabled_Functional_Basic(mod, res, section):
    exe, nodes = all_types_exec(mod, res)
    node = nodes[section]
    if section in ("kernel", "memcpy", "memset"):
        for set_enable in (0, 1):
            hip.hipGraphNodeSetEnabled(exe, node, set_enable)
            assert hip.hipGraphNodeGetEnabled(exe, node) == set_enable
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeSetEnabled, exe, node, 1)


NBYTES = N * 4
BLOCK = 256
H2D, D2H, D2D = hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost, hip.hipMemcpyDeviceToDevice
#: the four sections: (exec, enable) with exec the graph's or the clone's
SECTIONS = [pytest.param(w, e, id=f"{w}-{'enable' if e else 'disable'}") for w in ("graph", "clone") for e in (0, 1)]


def _launch(exe, stream):
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)


def _toggle(res, graph, node, which, enable, stream, before, check):
    """The common part of the three functional cases: a launch checked, the section (on the graph's
    exec or on the clone's), a clone launched and checked. ``before()`` runs before each launch of a
    section; ``check(enabled)`` checks the result."""
    exe = res.instantiate(graph)
    _launch(exe, stream)
    check(True)
    if which == "graph":
        hip.hipGraphNodeSetEnabled(exe, node, enable)
        assert hip.hipGraphNodeGetEnabled(exe, node) == enable
        before()
        _launch(exe, stream)
        check(bool(enable))
    cloned = res.keep(hip.hipGraphClone(graph))
    cloned_exe = res.instantiate(cloned)
    cloned_node = hip.hipGraphNodeFindInClone(node, cloned)
    _launch(cloned_exe, stream)
    check(True)
    if which == "clone":
        hip.hipGraphNodeSetEnabled(cloned_exe, cloned_node, enable)
        assert hip.hipGraphNodeGetEnabled(cloned_exe, cloned_node) == enable
        before()
        _launch(cloned_exe, stream)
        check(bool(enable))


@pytest.mark.parametrize("which,enable", SECTIONS)
def test_Unit_hipGraphNodeSetEnabled_Functional_KernelNode(mod, res, which, enable):
    a_h, c_h = np.arange(N, dtype=np.int32) + 3, np.zeros(N, np.int32)
    a_d, c_d = res.malloc(NBYTES), res.malloc(NBYTES)
    stream = res.stream()
    graph = res.graph()
    memcpy_a = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NBYTES, H2D)
    square = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "graph_vector_square_i32", [a_d, c_d, N],
                                                            N // BLOCK, BLOCK))
    memcpy_c = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, NBYTES, D2H)
    hip.hipGraphAddDependencies(graph, [memcpy_a, square], [square, memcpy_c])

    def check(enabled):
        assert np.array_equal(c_h, a_h * a_h) == enabled

    _toggle(res, graph, square, which, enable, stream, lambda: hip.hipMemset(c_d, 0, NBYTES), check)


@pytest.mark.parametrize("which,enable", SECTIONS)
def test_Unit_hipGraphNodeSetEnabled_Functional_MemSet(mod, res, which, enable):
    val = 9
    a_h = (np.arange(N) % 100 + 20).astype(np.int8)
    b_h, c_h = np.full(N, val, np.int8), np.zeros(N, np.int8)
    a_d, c_d = res.malloc(N), res.malloc(N)
    stream = res.stream()
    graph = res.graph()
    memcpy_a = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, N, H2D)
    memset_node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, val, 0, 1, width=N, height=1))
    memcpy_ac = hip.hipGraphAddMemcpyNode1D(graph, None, c_d, a_d, N, D2D)
    memcpy_c = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, N, D2H)
    hip.hipGraphAddDependencies(graph, [memcpy_a, memset_node, memcpy_ac], [memset_node, memcpy_ac, memcpy_c])

    def check(enabled):
        np.testing.assert_array_equal(c_h, b_h if enabled else a_h)

    _toggle(res, graph, memset_node, which, enable, stream, lambda: None, check)


@pytest.mark.parametrize("which,enable", SECTIONS)
def test_Unit_hipGraphNodeSetEnabled_Functional_MemCpy(mod, res, which, enable):
    a_h, b_h = np.arange(N, dtype=np.int32) + 3, np.arange(N, dtype=np.int32) + 11
    c_h = np.zeros(N, np.int32)
    a_d, c_d = res.malloc(NBYTES), res.malloc(NBYTES)
    stream = res.stream()
    graph = res.graph()
    memcpy_a = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NBYTES, H2D)
    memcpy_b = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, b_h, NBYTES, H2D)
    square = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "graph_vector_square_i32", [a_d, c_d, N],
                                                            N // BLOCK, BLOCK))
    memcpy_c = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, NBYTES, D2H)
    hip.hipGraphAddDependencies(graph, [memcpy_a, memcpy_b, square], [memcpy_b, square, memcpy_c])

    def check(enabled):
        src = b_h if enabled else a_h
        np.testing.assert_array_equal(c_h, src * src)

    _toggle(res, graph, memcpy_b, which, enable, stream, lambda: None, check)


@pytest.mark.parametrize("section", NEGATIVE + ["set_enable_int_max"])
def test_Unit_hipGraphNodeSetEnabled_Negative_Functional(mod, res, section):
    if section == "set_enable_int_max":
        exe, nodes = all_types_exec(mod, res)
        hip.hipGraphNodeSetEnabled(exe, nodes["memcpy"], 2**31 - 1)
        return
    negative_functional(mod, res, lambda exe, node: hip.hipGraphNodeSetEnabled(exe, node, 1), section)
