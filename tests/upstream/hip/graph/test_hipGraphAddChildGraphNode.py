"""hipGraphAddChildGraphNode: argument errors, child graphs as root nodes, several child nodes, a clone
of a graph with a child node, a graph added as its own child, an empty child, the three-level nested
graph (launched repeatedly, cloned, its innermost kernel node changed or replaced by another, on each
device) and child nodes as barriers between groups of nodes."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import BLOCK, arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddChildGraphNode.cc"

E = hip.hipError_t
N = 1024
#: TEST_LOOP_SIZE is 50 upstream
LOOPS = 10


def _blocks(n=N):
    return (n + BLOCK - 1) // BLOCK


def _run(res, graph, stream=None):
    stream = stream if stream is not None else res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    return exe


@pytest.mark.parametrize("section", ["graph_null", "child_null", "dependency_null"])
def test_Unit_hipGraphAddChildGraphNode_Negative(mod, res, section):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    hip.hipGraphAddMemcpyNode1D(child, None, ar.a_h, ar.b_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    # "Pass nullptr to graph node" has no Python form; "invalid dependencies" (10 with no array) is a
    # dependency list holding a null node
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddChildGraphNode, None, None, child)
    elif section == "child_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddChildGraphNode, graph, None, None)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddChildGraphNode, graph, [None], child)


def test_Unit_hipGraphAddChildGraphNode_OrgGraphAsChildGraph(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.b_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddChildGraphNode(graph, None, graph)
    hip.hipGraphAddDependencies(graph, [h2d_b], [d2h_a])
    _run(res, graph)
    assert len(hip.hipGraphGetNodes(graph)) == 3


def test_Unit_hipGraphAddChildGraphNode_ExecuteChildGraph(mod, res):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    h2d_b = hip.hipGraphAddMemcpyNode1D(child, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h_a = hip.hipGraphAddMemcpyNode1D(child, None, ar.a_h, ar.b_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddChildGraphNode(graph, None, child)
    hip.hipGraphAddDependencies(child, [h2d_b], [d2h_a])
    _run(res, child)
    np.testing.assert_array_equal(ar.b_h, ar.a_h)


def test_Unit_hipGraphAddChildGraphNode_CloneChildGraph(mod, res):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    hip.hipGraphAddMemcpyNode1D(child, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    child_node = hip.hipGraphAddChildGraphNode(graph, None, child)
    d2h_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_h, ar.a_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddDependencies(graph, [child_node], [d2h_b])
    cloned = res.keep(hip.hipGraphClone(graph))
    _run(res, cloned)
    np.testing.assert_array_equal(ar.b_h, ar.a_h)


def test_Unit_hipGraphAddChildGraphNode_MultipleChildNodes(mod, res):
    ar = arrays(res, N)
    graph, child1, child2 = res.graph(), res.graph(), res.graph()
    hip.hipGraphAddMemcpyNode1D(child1, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemcpyNode1D(child2, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    node1 = hip.hipGraphAddChildGraphNode(graph, None, child1)
    node2 = hip.hipGraphAddChildGraphNode(graph, None, child2)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                         _blocks(), BLOCK))
    hip.hipGraphAddDependencies(graph, [node1], [node2])
    hip.hipGraphAddDependencies(graph, [node2], [add])
    hip.hipGraphAddDependencies(graph, [add], [d2h_c])
    _run(res, graph)
    ar.check_add()


def test_Unit_hipGraphAddChildGraphNode_SingleChildNode(mod, res):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    memset_a = hip.hipGraphAddMemsetNode(child, None, hip.hipMemsetParams(ar.a_d, 0, ar.nbytes, 1))
    memset_b = hip.hipGraphAddMemsetNode(child, None, hip.hipMemsetParams(ar.b_d, 0, ar.nbytes, 1))
    memset_c = hip.hipGraphAddKernelNode(child, None, kparams(mod, "set_value", [ar.c_d, 0, N], _blocks(), BLOCK))
    h2d_a = hip.hipGraphAddMemcpyNode1D(child, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(child, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(child, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    add = hip.hipGraphAddKernelNode(child, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                         _blocks(), BLOCK))
    for a, b in [(memset_a, h2d_a), (memset_b, h2d_b), (h2d_a, add), (h2d_b, add), (memset_c, add), (add, d2h_c)]:
        hip.hipGraphAddDependencies(child, [a], [b])
    hip.hipGraphAddChildGraphNode(graph, None, child)
    _run(res, graph)
    ar.check_add()


class NestedGraph:
    """The nestedGraph class: graph[0] copies A1, A2 in, runs graph[1] as a child and copies C1 out;
    graph[1] sets B1 = 11, B2 = 7, runs graph[2] as a child, then C1 = C1 * C1; graph[2] computes
    C1 = A1 * B1, C2 = A2 * B2, then C1 += C2. graph[3] is for the cases that add a child."""

    VAL1, VAL2 = 11, 7
    THREADS, THREADS_UPD = 256, 128

    def __init__(self, mod, res, seed=0):
        self.mod, self.rng = mod, np.random.default_rng(seed)
        nb = N * 4
        self.blocks, self.blocks_upd = N // self.THREADS, N // self.THREADS_UPD
        self.a1_d, self.a2_d, self.b1_d, self.b2_d, self.c1_d, self.c2_d = (res.malloc(nb) for _ in range(6))
        self.a1_h, self.a2_h, self.a3_h = (np.zeros(N, np.int32) for _ in range(3))
        g = self.graph = [res.graph() for _ in range(4)]
        mul1 = hip.hipGraphAddKernelNode(g[2], None, self._k("graph_ker_vec_mul", [self.a1_d, self.b1_d, self.c1_d]))
        mul2 = hip.hipGraphAddKernelNode(g[2], None, self._k("graph_ker_vec_mul", [self.a2_d, self.b2_d, self.c2_d]))
        add = hip.hipGraphAddKernelNode(g[2], None, self._k("graph_ker_vec_add", [self.c1_d, self.c2_d]))
        hip.hipGraphAddDependencies(g[2], [mul1], [add])
        hip.hipGraphAddDependencies(g[2], [mul2], [add])
        memset_b1 = hip.hipGraphAddMemsetNode(g[1], None, hip.hipMemsetParams(self.b1_d, self.VAL1, nb, 4))
        memset_b2 = hip.hipGraphAddMemsetNode(g[1], None, hip.hipMemsetParams(self.b2_d, self.VAL2, nb, 4))
        child1 = hip.hipGraphAddChildGraphNode(g[1], None, g[2])
        sqr = hip.hipGraphAddKernelNode(g[1], None, self._k("graph_ker_vec_sqr", [self.c1_d, self.c1_d]))
        hip.hipGraphAddDependencies(g[1], [memset_b1], [child1])
        hip.hipGraphAddDependencies(g[1], [memset_b2], [child1])
        hip.hipGraphAddDependencies(g[1], [child1], [sqr])
        h2d_a1 = hip.hipGraphAddMemcpyNode1D(g[0], None, self.a1_d, self.a1_h, nb, hip.hipMemcpyHostToDevice)
        h2d_a2 = hip.hipGraphAddMemcpyNode1D(g[0], None, self.a2_d, self.a2_h, nb, hip.hipMemcpyHostToDevice)
        d2h_a3 = hip.hipGraphAddMemcpyNode1D(g[0], None, self.a3_h, self.c1_d, nb, hip.hipMemcpyDeviceToHost)
        self.child_node2 = hip.hipGraphAddChildGraphNode(g[0], None, g[1])
        hip.hipGraphAddDependencies(g[0], [h2d_a1], [self.child_node2])
        hip.hipGraphAddDependencies(g[0], [h2d_a2], [self.child_node2])
        hip.hipGraphAddDependencies(g[0], [self.child_node2], [d2h_a3])

    def _k(self, name, args, blocks=None, threads=None):
        return kparams(self.mod, name, args, blocks or self.blocks, threads or self.THREADS)

    def fill_rand_inp_data(self):
        self.a1_h[:] = self.rng.integers(0, 256, N)
        self.a2_h[:] = self.rng.integers(0, 256, N)

    @property
    def root(self):
        return self.graph[0]

    def update_innermost_node(self, update):
        """Find the vec_add kernel node in the graph the child node of the child node owns and change it."""
        emb2 = hip.hipGraphChildGraphNodeGetGraph(self.child_node2)
        nodes = hip.hipGraphGetNodes(emb2)
        child = next(n for n in nodes if hip.hipGraphNodeGetType(n) == hip.hipGraphNodeType.hipGraphNodeTypeGraph)
        emb1 = hip.hipGraphChildGraphNodeGetGraph(child)
        target = params = None
        for n in hip.hipGraphGetNodes(emb1):
            if hip.hipGraphNodeGetType(n) == hip.hipGraphNodeType.hipGraphNodeTypeKernel:
                p = hip.hipGraphKernelNodeGetParams(n)
                if p.func.name == "graph_ker_vec_add":
                    target, params = n, p
                    break
        assert target is not None
        if update == "delete_add":            # deleteAddNewKerNodTest: vec_add replaced by a new vec_sub node
            others = [n for n in hip.hipGraphGetNodes(emb1) if n is not target]
            hip.hipGraphDestroyNode(target)
            vec_sub = hip.hipGraphAddKernelNode(emb1, None, self._k("graph_ker_vec_sub", [self.c1_d, self.c2_d]))
            for n in others:
                hip.hipGraphAddDependencies(emb1, [n], [vec_sub])
            return
        if update == "kernel_function":
            params.func = hip.hipModuleGetFunction(self.mod, "graph_ker_vec_sub")
        else:
            params.blockDim = self.THREADS_UPD
            params.gridDim = self.blocks_upd
        hip.hipGraphKernelNodeSetParams(target, params)

    def validate_out_data(self, subtract=False):
        a1, a2 = self.a1_h.astype(np.int64), self.a2_h.astype(np.int64)
        r = self.VAL1 * a1 - self.VAL2 * a2 if subtract else self.VAL1 * a1 + self.VAL2 * a2
        np.testing.assert_array_equal(self.a3_h, (r * r).astype(np.int32))


def _nested_run(res, ng, graph, loops, subtract=False):
    stream = res.stream()
    exe = res.instantiate(graph)
    for _ in range(loops):
        ng.fill_rand_inp_data()
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        ng.validate_out_data(subtract)


def test_Unit_hipGraphAddChildGraphNode_Cmplx_NestedGraphs(mod, res):
    ng = NestedGraph(mod, res)
    _nested_run(res, ng, ng.root, LOOPS)


def test_Unit_hipGraphAddChildGraphNode_CmplxClone_NestedGraphs(mod, res):
    ng = NestedGraph(mod, res)
    cloned = res.keep(hip.hipGraphClone(ng.root))
    _nested_run(res, ng, cloned, LOOPS)


def test_Unit_hipGraphAddChildGraphNode_EmptyGraphAsChildNode(mod, res):
    graph, child = res.graph(), res.graph()
    node = hip.hipGraphAddChildGraphNode(graph, None, child)
    assert hip.hipGraphNodeGetType(node) == hip.hipGraphNodeType.hipGraphNodeTypeGraph


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_UpdKerFun(mod, res):
    ng = NestedGraph(mod, res)
    ng.update_innermost_node("kernel_function")
    _nested_run(res, ng, ng.root, 1, subtract=True)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_UpdKerFun_Clone(mod, res):
    ng = NestedGraph(mod, res)
    ng.update_innermost_node("kernel_function")
    cloned = res.keep(hip.hipGraphClone(ng.root))
    _nested_run(res, ng, cloned, 1, subtract=True)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_UpdKerDim(mod, res):
    ng = NestedGraph(mod, res)
    ng.update_innermost_node("grid_block")
    _nested_run(res, ng, ng.root, 1)


def _delete_add(mod, res, clone):
    """The DelAddNode / AddNode_Clone / AddChdNode / AddChdNode_Clone cases: upstream runs all four with
    deleteAddNewKerNodTest (the innermost vec_add node destroyed, a vec_sub node added in its place)."""
    ng = NestedGraph(mod, res)
    ng.update_innermost_node("delete_add")
    graph = res.keep(hip.hipGraphClone(ng.root)) if clone else ng.root
    _nested_run(res, ng, graph, 1, subtract=True)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_DelAddNode(mod, res):
    _delete_add(mod, res, False)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_AddNode_Clone(mod, res):
    _delete_add(mod, res, True)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_AddChdNode(mod, res):
    _delete_add(mod, res, False)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_AddChdNode_Clone(mod, res):
    _delete_add(mod, res, True)


def test_Unit_hipGraphAddChildGraphNode_MultGraphsAsSingleGraph(mod, res):
    size = N
    nb = size * 4
    graph1, graph2, graph3, graph4 = (res.graph() for _ in range(4))
    inp_d = [res.malloc(nb) for _ in range(3)]
    out_d = [res.malloc(nb) for _ in range(3)]
    inp_h = [np.zeros(size, np.int32) for _ in range(3)]
    out_h = [np.zeros(size, np.int32) for _ in range(3)]
    for d, h in zip(inp_d, inp_h):
        hip.hipGraphAddMemcpyNode1D(graph1, None, d, h, nb, hip.hipMemcpyHostToDevice)
    child1 = hip.hipGraphAddChildGraphNode(graph4, None, graph1)
    for i, o in zip(inp_d, out_d):
        hip.hipGraphAddKernelNode(graph2, None, kparams(mod, "graph_vector_square_i32", [i, o, size],
                                                        _blocks(size), BLOCK))
    child2 = hip.hipGraphAddChildGraphNode(graph4, [child1], graph2)
    for h, d in zip(out_h, out_d):
        hip.hipGraphAddMemcpyNode1D(graph3, None, h, d, nb, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddChildGraphNode(graph4, [child2], graph3)
    stream = res.stream()
    exe = res.instantiate(graph4)
    rng = np.random.default_rng(1)
    for _ in range(LOOPS):
        for h in inp_h:
            h[:] = rng.integers(0, 256, size)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        for i, o in zip(inp_h, out_h):
            np.testing.assert_array_equal(o, i * i)


def test_Unit_hipGraphAddChildGraphNode_CmplxNstGrph_MultGPU(mod, res):
    devcount = hip.hipGetDeviceCount()
    assert devcount >= 2
    objs, streams, execs = [], [], []
    for dev in range(devcount):
        hip.hipSetDevice(dev)
        ng = NestedGraph(mod, res, seed=dev)
        objs.append(ng)
        streams.append(res.stream())
        execs.append(res.instantiate(ng.root))
    for dev in range(devcount):
        hip.hipSetDevice(dev)
        objs[dev].fill_rand_inp_data()
        hip.hipGraphLaunch(execs[dev], streams[dev])
    for dev in range(devcount):
        hip.hipSetDevice(dev)
        hip.hipStreamSynchronize(streams[dev])
        objs[dev].validate_out_data()
