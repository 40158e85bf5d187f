"""Five threads at once, each running all eight 1-D copy functions in turn on every device (host to
device and back, with a stream each for the asynchronous ones) and checking the data. The device-to-
device parts of upstream are guarded by hipDeviceCanAccessPeer and left out (ported before hdemu had it;
not yet ported): with two devices the DtoD and DtoDAsync steps copy nothing, as upstream does without peer
access."""
import threading

import numpy as np

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy_MultiThread.cc"

NUM_ELM = 1024
NUM_THREADS = 5
(TEST_MEMCPY, TEST_MEMCPYH2D, TEST_MEMCPYD2H, TEST_MEMCPYD2D, TEST_MEMCPYASYNC, TEST_MEMCPYH2DASYNC,
 TEST_MEMCPYD2HASYNC, TEST_MEMCPYD2DASYNC) = range(8)


def memcpy_and_verify(api: int) -> bool:
    """memcpyTests<int>::Memcpy_And_verify; True when every copied buffer matched."""
    a_h = np.full(NUM_ELM, 123, dtype=np.int32)
    b_h = np.zeros(NUM_ELM, dtype=np.int32)
    nbytes = a_h.nbytes
    gpus = hip.hipGetDeviceCount()
    a_d, stream = [], []
    for i in range(gpus):
        hip.hipSetDevice(i)
        a_d.append(hip.hipMalloc(nbytes))
        if api >= TEST_MEMCPYD2D:
            stream.append(hip.hipStreamCreate())
    hip.hipSetDevice(0)
    ok = True

    def check():
        return bool(np.array_equal(a_h, b_h))

    for i in range(gpus):
        b_h[:] = 0
        if api == TEST_MEMCPY:
            hip.hipMemcpy(a_d[i], a_h, nbytes, hip.hipMemcpyHostToDevice)
            hip.hipMemcpy(b_h, a_d[i], nbytes, hip.hipMemcpyDeviceToHost)
        elif api == TEST_MEMCPYH2D:
            hip.hipMemcpyHtoD(a_d[i], a_h, nbytes)
            hip.hipMemcpy(b_h, a_d[i], nbytes, hip.hipMemcpyDeviceToHost)
        elif api == TEST_MEMCPYD2H:
            hip.hipMemcpy(a_d[i], a_h, nbytes, hip.hipMemcpyHostToDevice)
            hip.hipMemcpyDtoH(b_h, a_d[i], nbytes)
        elif api == TEST_MEMCPYASYNC:
            hip.hipMemcpyAsync(a_d[i], a_h, nbytes, hip.hipMemcpyHostToDevice, stream[i])
            hip.hipMemcpyAsync(b_h, a_d[i], nbytes, hip.hipMemcpyDeviceToHost, stream[i])
            hip.hipStreamSynchronize(stream[i])
        elif api == TEST_MEMCPYH2DASYNC:
            hip.hipMemcpyHtoDAsync(a_d[i], a_h, nbytes, stream[i])
            hip.hipStreamSynchronize(stream[i])
            hip.hipMemcpy(b_h, a_d[i], nbytes, hip.hipMemcpyDeviceToHost)
        elif api == TEST_MEMCPYD2HASYNC:
            hip.hipMemcpy(a_d[i], a_h, nbytes, hip.hipMemcpyHostToDevice)
            hip.hipMemcpyDtoHAsync(b_h, a_d[i], nbytes, stream[i])
            hip.hipStreamSynchronize(stream[i])
        else:
            break                       # D2D / D2DAsync: only under hipDeviceCanAccessPeer (left out, see above)
        ok &= check()
    if api in (TEST_MEMCPYD2D, TEST_MEMCPYD2DASYNC) and gpus == 1:
        hip.hipMemcpy(b_h, a_h, nbytes, hip.hipMemcpyHostToHost)
        ok &= check()
    for i in range(gpus):
        hip.hipSetDevice(i)
        hip.hipFree(a_d[i])
        if api >= TEST_MEMCPYD2D:
            hip.hipStreamDestroy(stream[i])
    return ok


def test_Unit_hipMemcpy_MultiThread_AllAPIs(platform):
    ret_val = [None] * NUM_THREADS

    def thread_func(k):
        try:
            ret_val[k] = all([memcpy_and_verify(api) for api in range(TEST_MEMCPY, TEST_MEMCPYD2DASYNC + 1)])
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            ret_val[k] = exc

    threads = [threading.Thread(target=thread_func, args=(k,)) for k in range(NUM_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert ret_val == [True] * NUM_THREADS
