"""hipGraphAddKernelNode: argument errors, and kernel nodes whose function comes from a separately
loaded code object: in a graph and its clone, switched by hipGraphKernelNodeSetParams, inside a child
graph, and launched during stream capture."""
import numpy as np
import pytest

from hostside import hip
from tests.paths import kernel_file
from tests.upstream.hip.graph._common import expect_error, function, kparams

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddKernelNode.cc"

E = hip.hipError_t
SIZE = 1 << 12
THREADS_PER_BLOCK = 512


@pytest.mark.parametrize("section", ["null_graph", "node_params_null", "kernel_params_null", "destroyed_graph"])
def test_Unit_hipGraphAddKernelNode_Negative(mod, res, section):
    n = 1024
    a_d, b_d, c_d = res.malloc(n * 4), res.malloc(n * 4), res.malloc(n * 4)
    graph = res.graph()
    params = kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, n], (n + 255) // 256, 256)
    # null pGraphNode and the numDependencies sections have no Python form (a list carries its length);
    # "func as nullptr" is HT_NVIDIA only
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddKernelNode, None, None, params)
    elif section == "node_params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddKernelNode, graph, [], None)
    elif section == "kernel_params_null":
        params.kernelParams = None
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddKernelNode, graph, None, params)
    else:
        destroyed = hip.hipGraphCreate(0)
        hip.hipGraphDestroy(destroyed)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddKernelNode, destroyed, None, params)


@pytest.fixture
def code_object():
    """hipModuleLoad(CODEOBJ_FILE): the kernels loaded again as a module of their own."""
    m = hip.hipModuleLoad(kernel_file("upstream.py"))
    yield m
    hip.hipModuleUnload(m)


def _arrays(res, n):
    a_h = np.arange(n, dtype=np.int32)
    b_h = np.arange(n, dtype=np.int32) * 2 + 1
    c_h = np.zeros(n, np.int32)
    return a_h, b_h, c_h, res.malloc(n * 4), res.malloc(n * 4), res.malloc(n * 4)


def _validate(graph, a_h, b_h, c_h):
    stream = hip.hipStreamCreate()
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    hip.hipStreamDestroy(stream)
    assert (c_h == a_h + b_h).all()


def _add_params(f, a_d, b_d, c_d, n):
    return hip.hipKernelNodeParams(f, n // THREADS_PER_BLOCK, THREADS_PER_BLOCK, 0, [a_d, b_d, c_d])


@pytest.mark.parametrize("section", ["original", "cloned"])
def test_Unit_hipGraphAddKernelNode_moduleLoadKernelFn_graphNclonedGraph(mod, res, code_object, section):
    a_h, b_h, c_h, a_d, b_d, c_d = _arrays(res, SIZE)
    graph = res.graph()
    fn = hip.hipModuleGetFunction(code_object, "graph_add")
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, [m1, m2], _add_params(fn, a_d, b_d, c_d, SIZE))
    hip.hipGraphAddMemcpyNode1D(graph, [k], c_h, c_d, SIZE * 4, hip.hipMemcpyDeviceToHost)
    if section == "original":
        _validate(graph, a_h, b_h, c_h)
    else:
        cloned = res.keep(hip.hipGraphClone(graph))
        _validate(cloned, a_h, b_h, c_h)


@pytest.mark.parametrize("section", ["normal_to_code_object", "code_object_to_normal"])
def test_Unit_hipGraphAddKernelNode_moduleLoadKernelFn_kernelFnUpdate(mod, res, code_object, section):
    """kernelFnChange (upstream passes a 4th, ignored, argument to the 3-argument kernel)."""
    a_h, b_h, c_h, a_d, b_d, c_d = _arrays(res, SIZE)
    normal, obj = function(mod, "graph_add"), hip.hipModuleGetFunction(code_object, "graph_add")
    first, second = (normal, obj) if section == "normal_to_code_object" else (obj, normal)
    graph = res.graph()
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, [m1, m2], _add_params(first, a_d, b_d, c_d, SIZE))
    hip.hipGraphKernelNodeSetParams(k, _add_params(second, a_d, b_d, c_d, SIZE))
    assert hip.hipGraphKernelNodeGetParams(k).func == second
    hip.hipGraphAddMemcpyNode1D(graph, [k], c_h, c_d, SIZE * 4, hip.hipMemcpyDeviceToHost)
    _validate(graph, a_h, b_h, c_h)


@pytest.mark.parametrize("section", ["original", "cloned"])
def test_Unit_hipGraphAddKernelNode_moduleLoadKernelFn_childGraph(mod, res, code_object, section):
    a_h, b_h, c_h, a_d, b_d, c_d = _arrays(res, SIZE)
    fn = hip.hipModuleGetFunction(code_object, "graph_add")
    child = res.graph()
    hip.hipGraphAddKernelNode(child, None, _add_params(fn, a_d, b_d, c_d, SIZE))
    graph = res.graph()
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, SIZE * 4, hip.hipMemcpyHostToDevice)
    # the child depends on both copies. Upstream adds the child node with no dependencies and relies on
    # CLR running a graph's unconnected nodes serially in topological order; hdemu runs them concurrently,
    # and the kernel once read a_d/b_d before the copies landed
    child_node = hip.hipGraphAddChildGraphNode(graph, [m1, m2], child)
    hip.hipGraphAddMemcpyNode1D(graph, [m1, m2, child_node], c_h, c_d, SIZE * 4, hip.hipMemcpyDeviceToHost)
    if section == "original":
        _validate(graph, a_h, b_h, c_h)
    else:
        _validate(res.keep(hip.hipGraphClone(graph)), a_h, b_h, c_h)


def test_Unit_hipGraphAddKernelNode_moduleLoadKernelFn_streamCapture(mod, res, code_object):
    n = 512
    a_h, b_h, c_h, a_d, b_d, c_d = _arrays(res, n)
    fn = hip.hipModuleGetFunction(code_object, "graph_add")
    stream = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemcpyAsync(a_d, a_h, n * 4, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemcpyAsync(b_d, b_h, n * 4, hip.hipMemcpyHostToDevice, stream)
    hip.hipModuleLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, stream, [a_d, b_d, c_d])
    hip.hipMemcpyAsync(c_h, c_d, n * 4, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    hip.hipStreamDestroy(stream)
    _validate(graph, a_h, b_h, c_h)
