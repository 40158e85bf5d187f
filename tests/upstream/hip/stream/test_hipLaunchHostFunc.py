"""hipLaunchHostFunc: the user data reaching the host function, host functions after copies and kernels on
created, null, per-thread, non-blocking, prioritised and per-device streams, and a host function captured
into a graph. Upstream allocates with hipMallocAsync / hipFreeAsync on the stream (not in hdemu): the port
allocates with hipMalloc before and frees with hipFree after the stream's work; the host functions are what
is tested."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch, wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipLaunchHostFunc.cc"

GRIDSIZE, BLOCKSIZE = 16, 256           # upstream: 512 blocks of 256 (kept small)
NSIZE = GRIDSIZE * BLOCKSIZE
NBYTES = NSIZE * 4
PTR_0XFF = 0xFFFFFFFF


class UserData:
    """usrDataS: the host buffers the host functions check and their verdicts."""

    def __init__(self, value: float):
        self.A_h = np.full(NSIZE, value, dtype=np.float32)
        self.C_h = np.zeros(NSIZE, dtype=np.float32)
        self.A_d = self.C_d = None
        self.isPassed = False
        self.isOpCompleted = False


def fn_validate_sq(user):
    """Fn_validateSq / Fn_validateMul_stream: C_h must be A_h squared."""
    assert user is not None
    user.isPassed = bool(np.array_equal(user.C_h, user.A_h * user.A_h))


def fn_completion_state(user):
    assert user is not None
    user.isOpCompleted = True


def _vector_square(mod, user, stream):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), GRIDSIZE, 1, 1, BLOCKSIZE, 1, 1, 0,
                              stream, [user.A_d, user.C_d, NSIZE])


def launch_operation_on_stream(mod, user, stream):
    """launchOperationOnStrm: copy in, square, copy out, a host function that checks the result."""
    user.isPassed = False
    user.A_d, user.C_d = hip.hipMalloc(NBYTES), hip.hipMalloc(NBYTES)
    try:
        hip.hipMemcpyAsync(user.A_d, user.A_h, NBYTES, hip.hipMemcpyHostToDevice, stream)
        _vector_square(mod, user, stream)
        hip.hipMemcpyAsync(user.C_h, user.C_d, NBYTES, hip.hipMemcpyDeviceToHost, stream)
        hip.hipLaunchHostFunc(stream, fn_validate_sq, user)
        hip.hipStreamSynchronize(stream)
    finally:
        hip.hipFree(user.A_d)
        hip.hipFree(user.C_d)
    assert user.isPassed


def test_Unit_hipLaunchHostFunc_basic(mod):
    seen = {}

    def fn_chk_userdata_ptr(user_data):
        seen["passed"] = user_data == PTR_0XFF

    s = hip.hipStreamCreate()
    hip.hipLaunchHostFunc(s, fn_chk_userdata_ptr, PTR_0XFF)
    hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)
    assert seen.get("passed") is True


def test_Unit_hipLaunchHostFunc_Negative(mod):
    s = hip.hipStreamCreate()
    with pytest.raises(hip.HipError) as ei:           # SECTION "Pass nullptr as function"
        hip.hipLaunchHostFunc(s, None, 0)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    hip.hipStreamDestroy(s)


def test_Unit_hipLaunchHostFunc_streams(mod):
    streams = [hip.hipStreamCreate(), None, hip.hipStreamPerThread]
    user = UserData(21.0)
    for s in streams:
        launch_operation_on_stream(mod, user, s)
    hip.hipStreamDestroy(streams[0])


def test_Unit_hipLaunchHostFunc_multistreams(mod):
    s1 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    s2 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    u1, u2 = UserData(11.0), UserData(9.0)
    for u, s in ((u1, s1), (u2, s2)):
        u.A_d, u.C_d = hip.hipMalloc(NBYTES), hip.hipMalloc(NBYTES)
        hip.hipMemcpyAsync(u.A_d, u.A_h, NBYTES, hip.hipMemcpyHostToDevice, s)
        _vector_square(mod, u, s)
        hip.hipMemcpyAsync(u.C_h, u.C_d, NBYTES, hip.hipMemcpyDeviceToHost, s)
        hip.hipLaunchHostFunc(s, fn_validate_sq, u)
    hip.hipStreamSynchronize(s1)
    hip.hipStreamSynchronize(s2)
    for u in (u1, u2):
        hip.hipFree(u.A_d)
        hip.hipFree(u.C_d)
    hip.hipStreamDestroy(s1)
    hip.hipStreamDestroy(s2)
    assert u1.isPassed
    assert u2.isPassed


def test_Unit_hipLaunchHostFunc_KernelHost(mod):
    s1, s2, s3 = hip.hipStreamCreate(), hip.hipStreamCreate(), hip.hipStreamCreate()
    u = UserData(7.0)
    u.A_d, u.C_d = hip.hipMalloc(NBYTES), hip.hipMalloc(NBYTES)
    hip.hipMemcpyAsync(u.A_d, u.A_h, NBYTES, hip.hipMemcpyHostToDevice, s1)
    hip.hipLaunchHostFunc(s1, fn_completion_state, u)
    wait_until(lambda: u.isOpCompleted, 30, "the host function after the copy on stream1")
    u.isOpCompleted = False
    _vector_square(mod, u, s2)
    hip.hipLaunchHostFunc(s2, fn_completion_state, u)
    wait_until(lambda: u.isOpCompleted, 30, "the host function after the kernel on stream2")
    u.isOpCompleted = False
    hip.hipMemcpyAsync(u.C_h, u.C_d, NBYTES, hip.hipMemcpyDeviceToHost, s3)
    hip.hipLaunchHostFunc(s2, fn_completion_state, u)
    wait_until(lambda: u.isOpCompleted, 30, "the second host function on stream2")
    # Upstream checks C_h here, before synchronizing stream3 (whose copy nothing orders before the host
    # function on stream2): the port synchronizes stream3 first, then checks.
    hip.hipStreamSynchronize(s3)
    assert np.array_equal(u.C_h, u.A_h * u.A_h)
    hip.hipFree(u.A_d)
    hip.hipFree(u.C_d)
    for s in (s3, s2, s1):
        hip.hipStreamDestroy(s)


def test_Unit_hipLaunchHostFunc_multidevice(mod):
    n = hip.hipGetDeviceCount()
    assert n >= 2
    user = UserData(21.0)
    for dev in range(n):
        hip.hipSetDevice(dev)
        s = hip.hipStreamCreate()
        launch_operation_on_stream(mod, user, s)
        hip.hipStreamDestroy(s)


def test_Unit_hipLaunchHostFunc_Samepriority(mod):
    user = UserData(21.0)
    for _ in range(3):
        s = hip.hipStreamCreateWithPriority(0, 0)
        launch_operation_on_stream(mod, user, s)
        hip.hipStreamDestroy(s)


def test_Unit_hipLaunchHostFunc_Diffpriority(mod):
    low, high = hip.hipDeviceGetStreamPriorityRange()
    streams = [None] + [hip.hipStreamCreateWithPriority(0, p) for p in range(high, low)]
    user = UserData(11.0)
    for s in streams:
        launch_operation_on_stream(mod, user, s)
    for s in streams[1:]:
        hip.hipStreamDestroy(s)


def test_Unit_hipLaunchHostFunc_Graph(mod):
    size, max_blocks, tpb = 1 << 12, 512, 512
    iterations = 10                                   # upstream: 1000
    # upstream: (rand & 0xFF) / RAND_MAX; the port divides by 256 so every partial sum is exact in float and
    # the GPU's tree order equals the CPU's sequential sum, as upstream's exact comparison needs
    rng = np.random.default_rng(7)
    input_h = ((rng.integers(0, 1 << 31, size) & 0xFF) / 256.0).astype(np.float32)
    input_d = hip.hipMalloc(4 * size)
    output_d = hip.hipMalloc(8 * max_blocks)
    result_d = hip.hipMalloc(8)
    s1, s2, s3, s_graph = (hip.hipStreamCreate() for _ in range(4))
    fork, memset1, memset2 = (hip.hipEventCreate() for _ in range(3))
    result_h = np.zeros(1, dtype=np.float64)
    state = {"iter": 0, "result_gpu": None}

    def my_host_node_callback(data):
        state["iter"] += 1
        state["result_gpu"] = float(data["data"][0])
        data["data"][0] = 0.0

    host_fn_data = {"fn_name": "hipGraphsUsingStreamCapture", "data": result_h}
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipStreamWaitEvent(s3, fork, 0)
    hip.hipMemcpyAsync(input_d, input_h, 4 * size, hip.hipMemcpyDefault, s1)
    hip.hipMemsetAsync(output_d, 0, 8 * max_blocks, s2)
    hip.hipEventRecord(memset1, s2)
    hip.hipMemsetAsync(result_d, 0, 8, s3)
    hip.hipEventRecord(memset2, s3)
    hip.hipStreamWaitEvent(s1, memset1, 0)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "stream_reduce"), size // tpb, 1, 1, tpb, 1, 1, 0,
                              s1, [input_d, output_d])
    hip.hipStreamWaitEvent(s1, memset2, 0)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "stream_reduce_final"), 1, 1, 1, tpb, 1, 1, 0,
                              s1, [output_d, result_d])
    hip.hipMemcpyAsync(result_h, result_d, 8, hip.hipMemcpyDefault, s1)
    hip.hipLaunchHostFunc(s1, my_host_node_callback, host_fn_data)
    graph = hip.hipStreamEndCapture(s1)
    hip.hipGraphGetNodes(graph)
    hip.hipGraphGetRootNodes(graph)
    exe = hip.hipGraphInstantiate(graph)
    for _ in range(iterations):
        hip.hipGraphLaunch(exe, s_graph)
    hip.hipStreamSynchronize(s_graph)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)
    for s in (s1, s2, s3, s_graph):
        hip.hipStreamDestroy(s)
    for e in (fork, memset1, memset2):
        hip.hipEventDestroy(e)
    result_h_cpu = 0.0
    for v in input_h:
        result_h_cpu += float(v)
    assert state["iter"] == iterations
    assert result_h_cpu == state["result_gpu"]
    for p in (input_d, output_d, result_d):
        hip.hipFree(p)
