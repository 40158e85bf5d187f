"""Managed memory (hostside.hip._managed): one address for the host and the devices, kernels and
copies of every kind on it, prefetch and advice checked as CLR checks them."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
K = hip.hipMemcpyKind
N = 1024


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2})


def _err(code, fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == code, ei.value
    return str(ei.value)


def test_host_and_kernels_share_managed_memory(mod):
    inc = hip.hipModuleGetFunction(mod, "inc")
    p = hip.hipMallocManaged(N * 4)
    view = hip.host_array(p, np.int32, N)
    view[:] = np.arange(N, dtype=np.int32)          # the host writes, a kernel on each device adds one
    for dev in (0, 1):
        hip.hipSetDevice(dev)
        s = hip.hipStreamCreate()
        hip.hipMemPrefetchAsync(p, N * 4, dev, s)
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, s, [p, N])
        hip.hipMemPrefetchAsync(p, N * 4, hip.hipCpuDeviceId, s)
        hip.hipStreamSynchronize(s)
        hip.hipStreamDestroy(s)
    hip.hipSetDevice(0)
    assert (view == np.arange(N) + 2).all()
    # every copy kind takes it on either side, as HIP does
    d = hip.hipMalloc(N * 4)
    for kind in (K.hipMemcpyHostToDevice, K.hipMemcpyDeviceToDevice, K.hipMemcpyDefault):
        hip.hipMemcpy(d, p, N * 4, kind)
    out = np.zeros(N, np.int32)
    hip.hipMemcpy(out, d, N * 4, K.hipMemcpyDeviceToHost)
    assert (out == np.arange(N) + 2).all()
    hip.hipMemcpy(p, np.full(N, 7, np.int32), N * 4, K.hipMemcpyHostToDevice)
    assert (view == 7).all()
    hip.hipMemcpy(p, d, N * 4, K.hipMemcpyDeviceToHost)
    assert (view == np.arange(N) + 2).all()
    # pinned memory is still refused where the kind says device
    h = hip.hipHostMalloc(64)
    _err(E.hipErrorInvalidMemcpyDirection, hip.hipMemcpy, h, d, 64, K.hipMemcpyDeviceToDevice)
    a = hip.hipPointerGetAttributes(p + 8)
    assert a.type == hip.hipMemoryTypeManaged and a.isManaged == 1 and a.device == 0
    assert a.devicePointer == a.hostPointer == p + 8
    PA = hip.hipPointer_attribute
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED, p + 8) is True
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED, h) is False
    hip.hipFree(p)
    assert hip.hipPointerGetAttributes(p).type == hip.hipMemoryTypeUnregistered
    _err(E.hipErrorInvalidValue, hip.hipFree, p)                  # freed once
    hip.hipFree(d)
    hip.hipHostFree(h)


def test_managed_arguments_checked_as_clr(mod):
    for size in (0, -1, 1.5, "x", None):
        _err(E.hipErrorInvalidValue, hip.hipMallocManaged, size)
    for flags in (0, 3, hip.hipMemAttachSingle, -1, "g"):
        _err(E.hipErrorInvalidValue, hip.hipMallocManaged, 64, flags)
    p = hip.hipMallocManaged(4096, hip.hipMemAttachHost)
    try:
        assert "runs past its allocation" in _err(E.hipErrorInvalidValue, hip.hipMemPrefetchAsync, p, 8192, 0)
        _err(E.hipErrorInvalidValue, hip.hipMemPrefetchAsync, 0, 64, 0)
        _err(E.hipErrorInvalidValue, hip.hipMemPrefetchAsync, p, 0, 0)
        _err(E.hipErrorInvalidDevice, hip.hipMemPrefetchAsync, p, 64, 2)
        _err(E.hipErrorInvalidDevice, hip.hipMemPrefetchAsync, p, 64, -2)
        _err(E.hipErrorInvalidValue, hip.hipMemPrefetchAsync, 0xdead0000, 64, 0)
        A = hip.hipMemoryAdvise
        hip.hipMemAdvise(p, 4096, A.hipMemAdviseSetReadMostly, 99)   # the device is not checked for it
        hip.hipMemAdvise(p, 64, A.hipMemAdviseSetPreferredLocation, hip.hipCpuDeviceId)
        hip.hipMemAdvise(p, 64, A.hipMemAdviseSetAccessedBy, 1)
        _err(E.hipErrorInvalidDevice, hip.hipMemAdvise, p, 64, A.hipMemAdviseSetAccessedBy, 5)
        _err(E.hipErrorInvalidValue, hip.hipMemAdvise, p, 64, 7, 0)
        _err(E.hipErrorInvalidValue, hip.hipMemAdvise, p, 0, A.hipMemAdviseSetReadMostly, 0)
        s = hip.hipStreamCreate()
        hip.hipStreamDestroy(s)
        _err(E.hipErrorContextIsDestroyed, hip.hipMemPrefetchAsync, p, 64, 0, s)
    finally:
        hip.hipFree(p)


def test_driver_device_handle_and_compute_capability(mod):
    props = hip.hipGetDeviceProperties(1)
    assert hip.hipDeviceGet(1) == 1
    assert hip.hipDeviceComputeCapability(hip.hipDeviceGet(0)) == (props.major, props.minor)
    for bad in (2, -1, "0", 1.0, None):
        _err(E.hipErrorInvalidDevice, hip.hipDeviceGet, bad)
        _err(E.hipErrorInvalidDevice, hip.hipDeviceComputeCapability, bad)


def test_stream_attach_and_pointer_info(mod):
    p = hip.hipMallocManaged(1000)
    s = hip.hipStreamCreate()
    try:
        hip.hipStreamAttachMemAsync(s, p)
        hip.hipStreamAttachMemAsync(s, p, 1000, hip.hipMemAttachGlobal)
        hip.hipStreamAttachMemAsync(None, p, 0, hip.hipMemAttachHost)
        assert "neither 0 nor" in _err(E.hipErrorInvalidValue, hip.hipStreamAttachMemAsync, s, p, 999)
        _err(E.hipErrorInvalidValue, hip.hipStreamAttachMemAsync, None, p)      # Single needs a stream
        _err(E.hipErrorInvalidValue, hip.hipStreamAttachMemAsync, s, 0)
        _err(E.hipErrorInvalidValue, hip.hipStreamAttachMemAsync, s, p, 0, 3)
        _err(E.hipErrorInvalidValue, hip.hipStreamAttachMemAsync, s, 0xdead0000)
        assert hip.hipMemPtrGetInfo(p) == 1024 and hip.hipMemPtrGetInfo(p + 999) == 1024   # 256-byte granules
        for bad in (0, None, "p", 0xdead0000):
            _err(E.hipErrorInvalidValue, hip.hipMemPtrGetInfo, bad)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(p)


def test_host_get_flags_and_device_pointer_as_hip_tests(mod):
    """hip-tests hipHostGetFlags.cc / hipHostGetDevicePointer.cc: the flags given to hipHostMalloc
    come back (every combination, allocated in another thread too), for the base and any byte inside;
    device memory, managed memory, numpy memory and null are hipErrorInvalidValue; the device pointer
    of pinned memory is what a kernel writes through."""
    import itertools
    import threading
    part1 = [0, 1, 2, 4, 1 | 2, 1 | 4, 2 | 4]
    part2 = [0, hip.hipHostMallocNumaUser, hip.hipHostMallocNumaUser | hip.hipHostMallocCoherent,
             hip.hipHostMallocNumaUser | hip.hipHostMallocNonCoherent, hip.hipHostMallocCoherent,
             hip.hipHostMallocNonCoherent]
    for f1, f2 in itertools.product(part1, part2):
        p = hip.hipHostMalloc(4096, f1 | f2)
        assert hip.hipHostGetFlags(p) == f1 | f2
        assert hip.hipHostGetFlags(p + 100) == f1 | f2
        hip.hipHostFree(p)
    box = []
    th = threading.Thread(target=lambda: box.append(hip.hipHostMalloc(4096, hip.hipHostMallocMapped)))
    th.start()
    th.join(30)
    assert hip.hipHostGetFlags(box[0]) == hip.hipHostMallocMapped
    d = hip.hipHostGetDevicePointer(box[0], 0)
    assert hip.hipHostGetFlags(d) == hip.hipHostMallocMapped
    inc = hip.hipModuleGetFunction(mod, "inc")
    hip.host_array(box[0], np.int32, 16)[:] = 41
    hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, None, [d, 16])
    hip.hipDeviceSynchronize()
    assert (hip.host_array(box[0], np.int32, 16) == 42).all()
    dev, man = hip.hipMalloc(4096), hip.hipMallocManaged(4096)
    for bad in (dev, man, 0, None, np.zeros(4), box[0] + 4096 * 16):
        _err(E.hipErrorInvalidValue, hip.hipHostGetFlags, bad)
    assert hip.hipHostGetDevicePointer(dev, 0) == dev and hip.hipHostGetDevicePointer(man + 8, 0) == man + 8
    for args in ((0, 0), (None, 0), (box[0], 1), (box[0], -1), (box[0], None)):
        _err(E.hipErrorInvalidValue, hip.hipHostGetDevicePointer, *args)
    hip.hipHostFree(box[0])
    _err(E.hipErrorInvalidValue, hip.hipHostGetFlags, box[0])
    _err(E.hipErrorInvalidValue, hip.hipHostGetDevicePointer, box[0], 0)
    hip.hipFree(dev)
    hip.hipFree(man)
