"""Stream memory operations (hostside.hip._streamops): hipStreamWaitValue32/64 hold a stream (and only
that stream) until the value meets each of HIP's four conditions, hipStreamWriteValue32/64 store in
stream order, bad arguments are refused before anything is submitted, and a capture refuses them."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import wait_until

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
NOT_READY = E.hipErrorNotReady
GTE, EQ, AND, NOR = (hip.hipStreamWaitValueGte, hip.hipStreamWaitValueEq, hip.hipStreamWaitValueAnd,
                     hip.hipStreamWaitValueNor)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "engines": 2})


@pytest.fixture
def env(mod):
    """(stream, flag pointer, its host view as u64, device buffer) with the flag 0."""
    s = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    flag = hip.hipHostMalloc(64)
    view = hip.host_array(flag, np.uint64, 8)
    view[:] = 0
    dev = hip.hipMalloc(64)
    hip.hipMemset(dev, 0, 64)
    hip.hipDeviceSynchronize()            # the memset is on the null stream: s is not ordered with it
    yield s, flag, view, dev
    view[:] = np.uint64(2**64 - 1)        # whatever a failed test left waiting: let it through
    hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)
    hip.hipHostFree(flag)
    hip.hipFree(dev)


def read_u32(dev, i=0):
    out = np.zeros(1, np.uint32)
    hip.hipMemcpy(out, dev + 4 * i, 4, hip.hipMemcpyDeviceToHost)
    return int(out[0])


def held(s) -> bool:
    return hip.hipStreamQuery(s) == NOT_READY


def expect(err, f, *args):
    with pytest.raises(hip.HipError) as ei:
        f(*args)
    assert ei.value.error == err, f"{ei.value.name}, expected {err.name}: {ei.value}"


# (flags, value, mask, memory values that must keep the wait, the value that releases it), 32-bit
CASES32 = [
    (GTE, 5, 0xFFFFFFFF, [0, 4], 5),
    (GTE, 5, 0xFF, [0x100, 0x1FF & ~0xFF | 3], 0x106),       # the mask drops the high bits
    (EQ, 7, 0xFFFFFFFF, [6, 8, 0xFFFFFFFF], 7),
    (EQ, 0x30, 0xF0, [0x20, 0x40], 0x13F),                   # (0x13F & 0xF0) == 0x30
    (AND, 0b1010, 0xFFFFFFFF, [0b0101, 0], 0b1000),
    (AND, 0b1010, 0b0010, [0b1000, 0b0101], 0b0011),         # only bit 1 counts
    (NOR, 0x0F, 0xFFFFFFFF, [0xFFFFFFF0, 0xFFFFFFFF], 0xFFFFFF70),   # ~(x | 0x0F) != 0: a high bit clear
]


@pytest.mark.parametrize("flags,value,mask,hold,release", CASES32)
def test_wait_value32_holds_the_stream_until_the_condition(env, mod, flags, value, mask, hold, release):
    s, flag, view, dev = env
    v32 = hip.host_array(flag, np.uint32, 2)
    v32[0] = hold[0]
    hip.hipStreamWaitValue32(s, flag, value, flags, mask)
    hip.hipStreamWriteValue32(s, dev, 0xC0FFEE)
    for h in hold:
        v32[0] = h
        wait_until(lambda: int(hip.host_array(flag, np.uint32, 1)[0]) == h, what="the host store")
        assert held(s) and read_u32(dev) == 0, f"{h:#x} released the wait"
    v32[0] = release
    hip.hipStreamSynchronize(s)
    assert read_u32(dev) == 0xC0FFEE


def test_wait_value64_compares_all_64_bits_as_int64(env, mod):
    """A 64-bit wait sees all 64 bits, and compares as int64 (AMD's packet processor compares signal
    values so): 2**63 + 1 is below 5."""
    s, flag, view, dev = env
    view[0] = 2**63 + 1
    hip.hipStreamWaitValue64(s, flag, 5, GTE)
    hip.hipStreamWriteValue64(s, dev + 8, 2**64 - 2)
    view[0] = 2**32 + 2**63                         # still negative
    wait_until(lambda: int(view[0]) == 2**32 + 2**63, what="the host store")
    assert held(s)
    view[0] = 2**32                                 # above 5 only in the high word
    hip.hipStreamSynchronize(s)
    out = np.zeros(1, np.uint64)
    hip.hipMemcpy(out, dev + 8, 8, hip.hipMemcpyDeviceToHost)
    assert int(out[0]) == 2**64 - 2


def test_nor_with_a_partial_mask_looks_only_inside_the_mask(env, mod):
    """As CLR: Nor holds once some bit of the mask is clear in both *ptr and value; bits outside the
    mask never count (the HIPIFY sample's case: mask 0xF, value 0x7E, holds at 0x7D, passes at 0x76)."""
    s, flag, view, dev = env
    v32 = hip.host_array(flag, np.uint32, 1)
    v32[0] = 0x7D                                   # 0xD | 0xE == 0xF inside the mask: not yet
    hip.hipStreamWaitValue32(s, flag, 0x7E, NOR, 0xF)
    hip.hipStreamWriteValue32(s, dev, 3)
    v32[0] = 0xFFFFFF0D                             # bits outside the mask changed: still not
    wait_until(lambda: int(v32[0]) == 0xFFFFFF0D, what="the host store")
    assert held(s) and read_u32(dev) == 0
    v32[0] = 0x76                                   # bit 0 clear in both
    hip.hipStreamSynchronize(s)
    assert read_u32(dev) == 3


def test_a_waiting_stream_holds_only_itself(env, mod):
    """Another stream on the same device, on the same engine or not, runs while one stream waits."""
    s, flag, view, dev = env
    hip.hipStreamWaitValue32(s, flag, 1, EQ)
    others = [hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking) for _ in range(3)]
    try:
        for i, o in enumerate(others):
            hip.hipStreamWriteValue32(o, dev, 10 + i) if i == 0 else \
                hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), 1, 1, 1, 1, 1, 1, 0, o,
                                          [dev + 4 * i, 1])
            hip.hipStreamSynchronize(o)
        assert read_u32(dev, 0) == 10 and read_u32(dev, 1) == 1 and read_u32(dev, 2) == 1
        assert held(s)
    finally:
        view[0] = 1
        hip.hipStreamSynchronize(s)
        for o in others:
            hip.hipStreamDestroy(o)


def test_write_value_is_in_stream_order_with_kernels_and_copies(env, mod):
    """A kernel's increment, then a write, then a copy of it: each sees the one before."""
    s, flag, view, dev = env
    inc = hip.hipModuleGetFunction(mod, "inc")
    host = np.zeros(4, np.uint32)
    for rnd in range(50):
        hip.hipStreamWriteValue32(s, dev, rnd * 10)
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, s, [dev, 1])
        hip.hipMemcpyAsync(dev + 16, dev, 4, hip.hipMemcpyDeviceToDevice, s)      # SDMA, after the kernel
        hip.hipStreamWriteValue32(s, dev + 4, rnd)                                 # AQL again, after the copy
    hip.hipMemcpyAsync(host, dev, 16, hip.hipMemcpyDeviceToHost, s)
    hip.hipStreamSynchronize(s)
    assert list(host[:2]) == [49 * 10 + 1, 49]
    assert read_u32(dev, 4) == 491


def test_a_wait_released_by_a_write_on_another_stream(env, mod):
    """The usual pairing: one stream waits on a flag another stream's write sets after its work."""
    s, flag, view, dev = env
    producer = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    try:
        hip.hipStreamWaitValue32(s, dev + 8, 1, EQ)
        hip.hipStreamWriteValue32(s, dev, 77)
        assert held(s)
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "sleep"), 1, 1, 1, 1, 1, 1, 0, producer, [0.02])
        hip.hipStreamWriteValue32(producer, dev + 8, 1)
        hip.hipStreamSynchronize(s)
        assert read_u32(dev) == 77
    finally:
        hip.hipStreamDestroy(producer)


def test_bad_arguments_are_refused_before_anything_is_submitted(env, mod):
    s, flag, view, dev = env
    w32, w64, wr32, wr64 = (hip.hipStreamWaitValue32, hip.hipStreamWaitValue64, hip.hipStreamWriteValue32,
                            hip.hipStreamWriteValue64)
    before = hip.hipStreamQuery(s)
    bad = [
        (w32, (s, flag + 2, 0, GTE)), (w64, (s, flag + 4, 0, GTE)),          # misaligned
        (w32, (s, flag, -1, GTE)), (w32, (s, flag, 2**32, GTE)), (w32, (s, flag, 1.5, GTE)),
        (w32, (s, flag, 0, GTE, 2**32)), (w64, (s, flag, 2**64, EQ)),
        (w32, (s, flag, 0, 4)), (w32, (s, flag, 0, -1)), (w32, (s, flag, 0, "gte")), (w32, (s, flag, 0, True)),
        (w32, (s, np.zeros(4, np.uint32), 0, GTE)),                           # pageable host memory
        (w32, (s, 0, 0, GTE)), (w32, (s, 0x1234, 0, GTE)),                    # null, no allocation
        (wr32, (s, dev, 0, 1)), (wr32, (s, dev, 0, False)), (wr32, (s, dev, -5)), (wr64, (s, dev, 2**64)), (wr64, (s, dev + 60, 1)),
    ]
    for f, args in bad:
        expect(E.hipErrorInvalidValue, f, *args)
    with pytest.raises(hip.HipError):                   # no such stream
        w32(0xDEAD0, flag, 0, GTE)
    assert hip.hipStreamQuery(s) == before
    hip.hipStreamWriteValue32(s, dev, 5)                  # the stream is as it was
    hip.hipStreamSynchronize(s)
    assert read_u32(dev) == 5


def test_refused_during_capture(env, mod):
    s, flag, view, dev = env
    hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
    expect(E.hipErrorStreamCaptureUnsupported, hip.hipStreamWaitValue32, s, flag, 1, EQ)
    with pytest.raises(hip.HipError):
        hip.hipStreamEndCapture(s)                        # the capture was invalidated
    assert hip.hipStreamIsCapturing(s) == hip.hipStreamCaptureStatusNone


def test_many_threads_pair_waits_and_writes_on_their_own_streams(env, mod):
    """Two threads, each a ping-pong of 40 rounds between two streams of its own through a device flag.
    (Each stream has a hardware queue of its own here: streams that share one, once a process has
    more streams than queues, can deadlock such a ping-pong, as on a real GPU; see _streamops.)"""
    import threading
    _s, _flag, _view, dev = env
    buf = hip.hipMalloc(8 * 8)
    hip.hipMemset(buf, 0, 64)
    hip.hipDeviceSynchronize()            # (the streams below are not ordered with the null stream)
    errors = []

    def worker(t):
        try:
            a, b = (hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking) for _ in range(2))
            ping, pong = buf + 8 * t, buf + 8 * t + 4
            for r in range(1, 41):
                hip.hipStreamWaitValue32(b, ping, r, EQ)
                hip.hipStreamWriteValue32(b, pong, r)
                hip.hipStreamWriteValue32(a, ping, r)
                hip.hipStreamWaitValue32(a, pong, r, EQ)
            hip.hipStreamSynchronize(a)
            hip.hipStreamSynchronize(b)
            hip.hipStreamDestroy(a)
            hip.hipStreamDestroy(b)
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append((t, exc))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors and not any(th.is_alive() for th in threads), errors
    out = np.zeros(16, np.uint32)
    hip.hipMemcpy(out, buf, 64, hip.hipMemcpyDeviceToHost)
    assert list(out[:4]) == [40] * 4
    hip.hipFree(buf)


def test_signal_memory_from_hipExtMallocWithFlags(mod):
    """hipMallocSignalMemory: 8 zeroed bytes that a wait and a write use; the other flags allocate
    device memory; a bad flag or a signal of another size than 8 (0 included, as CLR) is hipErrorInvalidValue."""
    s = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    sig = hip.hipExtMallocWithFlags(8, hip.hipMallocSignalMemory)
    out = hip.hipExtMallocWithFlags(64, hip.hipDeviceMallocFinegrained)
    try:
        hip.hipMemset(out, 0xFF, 8)
        hip.hipDeviceSynchronize()                                # (s is not ordered with the null stream)
        view = hip.host_array(sig, np.uint64, 1)                  # the host reaches it, as CLR's
        assert int(view[0]) == 0
        hip.hipStreamWaitValue64(s, sig, 0, EQ)                   # already 0: passes at once
        hip.hipStreamWriteValue32(s, out, 1)
        hip.hipStreamSynchronize(s)                               # (before the host changes the value)
        assert read_u32(out) == 1
        hip.hipStreamWaitValue64(s, sig, 5, GTE)
        hip.hipStreamWriteValue32(s, out, 2)
        assert held(s)
        view[0] = 5
        hip.hipStreamSynchronize(s)
        assert read_u32(out) == 2
        for size, flags in ((0, hip.hipMallocSignalMemory), (16, hip.hipMallocSignalMemory),
                            (4, hip.hipMallocSignalMemory), (64, 4), (64, -1), (64, True)):
            expect(E.hipErrorInvalidValue, hip.hipExtMallocWithFlags, size, flags)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(sig)
        hip.hipFree(out)

