"""hipMemcpyAsync (the older file): copies around a vectorADD, host-to-host / pinned / device chains on
one stream, sixteen threads loading one non-blocking stream (SWDEV-181598) or four a stream each, and pinned
buffers reused across two devices. Vectors are 16 Ki elements (upstream: 1 Mi, and 32 Ki per thread).
The "DeviceContextChange" and "PeerGPU" SECTIONs (hipDeviceCanAccessPeer: in hdemu since, not yet ported)
and the registered-memory half of PinnedRegMemWithKernelLaunch (hipHostRegister, not in hdemu) are left
out."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import Arrays, set_num_blocks, vector_add, vector_square

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyAsync_old.cc"

NUM_THREADS = 16
#: threads of the stream-per-thread case (upstream: 16): the platform has 16 queues per device and a
#: stream that copies and launches holds two (an AQL and an SDMA queue)
NUM_STREAM_THREADS = 4
NUM_ELM = 16 * 1024
N_ELMTS = 4 * 1024
BLOCKS_PER_CU, THREADS_PER_BLOCK = 6, 256
TYPES = {"int": np.int32, "float": np.float32, "double": np.float64}
H2D, D2H, H2H, D2D = (hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost, hip.hipMemcpyHostToHost,
                      hip.hipMemcpyDeviceToDevice)


@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpyAsync_KernelLaunch(kmod, test_type):
    dtype = TYPES[test_type]
    hip.hipSetDevice(0)
    stream = hip.hipStreamCreate()
    with Arrays(dtype, NUM_ELM) as m:
        hip.hipMemcpyAsync(m.A_d, m.A_h.ptr, m.nbytes, H2D, stream)
        hip.hipMemcpyAsync(m.B_d, m.B_h.ptr, m.nbytes, H2D, stream)
        hip.hipStreamSynchronize(stream)
        vector_add(kmod, dtype, m.A_d, m.B_d, m.C_d, NUM_ELM)
        hip.hipGetLastError()
        hip.hipMemcpyAsync(m.C_h.ptr, m.C_d, m.nbytes, D2H, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipStreamDestroy(stream)
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)


@pytest.mark.parametrize("section", ["H2H, H2PinMem and PinMem2H", "H2D-D2D-D2H-SameGPU", "pH2D-D2D-D2pH-SameGPU"])
@pytest.mark.parametrize("test_type", ["char", "int", "float", "double"])
def test_Unit_hipMemcpyAsync_H2H_H2D_D2H_H2PinMem(platform, test_type, section):
    dtype = {"char": np.int8}.get(test_type) or TYPES[test_type]
    hip.hipSetDevice(0)
    stream = hip.hipStreamCreate()
    n = NUM_ELM
    nbytes = n * np.dtype(dtype).itemsize
    with Arrays(dtype, n, which="A_d B_d A_h B_h") as m, Arrays(dtype, n, pinned=True, which="A_h B_h") as p:
        a_h, b_h, a_ph, b_ph = m.A_h, m.B_h, p.A_h, p.B_h
        if section == "H2H, H2PinMem and PinMem2H":
            hip.hipMemcpyAsync(b_h.ptr, a_h.ptr, nbytes, H2H, stream)
            hip.hipMemcpyAsync(a_ph.ptr, b_h.ptr, nbytes, H2H, stream)
            hip.hipMemcpyAsync(b_ph.ptr, a_ph.ptr, nbytes, H2H, stream)
            hip.hipStreamSynchronize(stream)
            assert np.array_equal(b_ph.a, a_h.a)
        else:
            src, dst = (a_h, b_h) if section == "H2D-D2D-D2H-SameGPU" else (a_ph, b_ph)
            hip.hipMemcpyAsync(m.A_d, src.ptr, nbytes, H2D, stream)
            hip.hipMemcpyAsync(m.B_d, m.A_d, nbytes, D2D, stream)
            hip.hipMemcpyAsync(dst.ptr, m.B_d, nbytes, D2H, stream)
            hip.hipStreamSynchronize(stream)
            assert np.array_equal(dst.a, src.a)
        hip.hipStreamDestroy(stream)


def _run_threads(target, args_list):
    errors = []

    def wrap(*args):
        try:
            target(*args)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=args) for args in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpyAsync_hipMultiMemcpyMultiThread(kmod, test_type):
    dtype = TYPES[test_type]
    thread_count = []
    with Arrays(dtype, N_ELMTS) as m:
        nbytes = m.nbytes
        mystream = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
        hip.hipMemcpyAsync(m.A_d, m.A_h.ptr, nbytes, H2D, mystream)

        def thread_func():
            blocks = set_num_blocks(BLOCKS_PER_CU, THREADS_PER_BLOCK, N_ELMTS)
            vector_square(kmod, dtype, m.A_d, m.C_d, N_ELMTS, mystream, blocks, THREADS_PER_BLOCK)
            hip.hipGetLastError()
            hip.hipMemcpyAsync(m.C_h.ptr, m.C_d, nbytes, D2H, mystream)
            # only there to load the stream with more asynchronous work
            hip.hipMemcpyAsync(m.B_d, m.A_d, nbytes, D2D, mystream)
            hip.hipMemcpyAsync(m.B_d, m.A_d, nbytes, D2D, mystream)
            thread_count.append(1)

        _run_threads(thread_func, [() for _ in range(NUM_THREADS)])
        hip.hipStreamSynchronize(mystream)
        hip.hipStreamDestroy(mystream)
        data_mismatch = int(np.count_nonzero(m.C_h.a != m.A_h.a * m.A_h.a))
        assert len(thread_count) == NUM_THREADS
        assert data_mismatch == 0


@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpyAsync_hipMultiMemcpyMultiThreadMultiStream(kmod, test_type):
    dtype = TYPES[test_type]
    thread_count = []

    def thread_func_multi_stream():
        blocks = set_num_blocks(BLOCKS_PER_CU, THREADS_PER_BLOCK, N_ELMTS)
        with Arrays(dtype, N_ELMTS) as m:
            nbytes = m.nbytes
            mystream = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
            hip.hipMemcpyAsync(m.A_d, m.A_h.ptr, nbytes, H2D, mystream)
            vector_square(kmod, dtype, m.A_d, m.C_d, N_ELMTS, mystream, blocks, THREADS_PER_BLOCK)
            hip.hipGetLastError()
            hip.hipMemcpyAsync(m.C_h.ptr, m.C_d, nbytes, D2H, mystream)
            hip.hipMemcpyAsync(m.B_d, m.A_d, nbytes, D2D, mystream)
            thread_count.append(1)
            hip.hipStreamSynchronize(mystream)
            hip.hipStreamDestroy(mystream)
            data_mismatch = int(np.count_nonzero(m.C_h.a != m.A_h.a * m.A_h.a))
        assert data_mismatch == 0

    _run_threads(thread_func_multi_stream, [() for _ in range(NUM_STREAM_THREADS)])
    assert len(thread_count) == NUM_STREAM_THREADS


# GENERATE(0, 1): 0 is hipHostRegister'ed malloc memory (not in hdemu); 1, pinned memory, runs.
@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpyAsync_PinnedRegMemWithKernelLaunch(kmod, test_type):
    dtype = TYPES[test_type]
    num_devices = hip.hipGetDeviceCount()
    if num_devices < 2:
        return                          # SUCCEED("No of devices are less than 2")
    blocks = set_num_blocks(BLOCKS_PER_CU, THREADS_PER_BLOCK, NUM_ELM)
    m = Arrays(dtype, NUM_ELM, pinned=True)
    x = None
    try:
        nbytes = m.nbytes
        hip.hipMemcpy(m.A_d, m.A_h.ptr, nbytes, H2D)
        hip.hipMemcpy(m.B_d, m.B_h.ptr, nbytes, H2D)
        vector_add(kmod, dtype, m.A_d, m.B_d, m.C_d, NUM_ELM, None, blocks, THREADS_PER_BLOCK)
        hip.hipGetLastError()
        hip.hipMemcpy(m.C_h.ptr, m.C_d, nbytes, D2H)
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)

        hip.hipSetDevice(1)             # upstream: a random device other than 0
        x = Arrays(dtype, NUM_ELM, which="A_d B_d C_d")
        gpu1_stream = hip.hipStreamCreate()
        for buf in (m.A_h, m.B_h, m.C_h):
            buf.a[:] = 0
        hip.hipMemcpy(m.A_h.ptr, m.A_d, nbytes, D2H)
        hip.hipMemcpyAsync(x.A_d, m.A_h.ptr, nbytes, H2D, gpu1_stream)
        hip.hipMemcpy(m.B_h.ptr, m.B_d, nbytes, D2H)
        hip.hipMemcpyAsync(x.B_d, m.B_h.ptr, nbytes, H2D, gpu1_stream)
        vector_add(kmod, dtype, x.A_d, x.B_d, x.C_d, NUM_ELM, None, blocks, THREADS_PER_BLOCK)
        hip.hipGetLastError()
        hip.hipMemcpyAsync(m.C_h.ptr, x.C_d, nbytes, D2H, gpu1_stream)
        hip.hipStreamSynchronize(gpu1_stream)
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)
        hip.hipStreamDestroy(gpu1_stream)
    finally:
        m.free()
        if x is not None:
            x.free()
