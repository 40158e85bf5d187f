"""hipStreamCreateWithPriority: work on a stream of every priority (and the null stream), shared by
several threads, bad arguments, the priority read back (clamped to the range), and event-timed copies on
low / normal / high priority streams. Sizes are upstream's divided down (64 MiB copies become 64 KiB)."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch

from .stream_common import check_stream_priority_and_flags

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamCreateWithPriority.cc"

MEMCPYSIZE1 = 64 * 1024         # bytes per copy kernel (upstream: 64 MiB)
MEMCPYSIZE2 = 16 * 1024         # ints per buffer (upstream: 1 Mi)
NUMITERS = 2
TOTALTHREADS = 8                # upstream: 16
INIT_VAL = 2
INT_MAX, INT_MIN = 2**31 - 1, -2**31

def _square_on(mod, streams):
    """Copy in, square, copy out on each stream (queueTasksInStreams); the results are checked after
    each stream is synchronized, or after the caller synchronized the device."""
    size = MEMCPYSIZE2 * 4
    bufs = []
    for s in streams:
        a_h = np.full(MEMCPYSIZE2, INIT_VAL, np.int32)
        c_h = np.zeros(MEMCPYSIZE2, np.int32)
        a_d, c_d = hip.hipMalloc(size), hip.hipMalloc(size)
        hip.hipMemcpyAsync(a_d, a_h, size, hip.hipMemcpyHostToDevice, s)
        launch(mod, "stream_vector_square_i32", [a_d, c_d, MEMCPYSIZE2], s, n=MEMCPYSIZE2, block=256)
        hip.hipMemcpyAsync(c_h, c_d, size, hip.hipMemcpyDeviceToHost, s)
        bufs.append((s, a_h, c_h, a_d, c_d))
    return bufs


def _check_and_free(bufs, sync_each):
    ok = True
    for s, a_h, c_h, _, _ in bufs:
        if sync_each:
            hip.hipStreamSynchronize(s)
        ok = ok and bool((c_h == a_h * a_h).all())
    for _, _, _, a_d, c_d in bufs:
        hip.hipFree(c_d)
        hip.hipFree(a_d)
    return ok


@pytest.mark.parametrize("flag_name, device_sync", [("hipStreamDefault", True), ("hipStreamNonBlocking", False),
                                                    ("hipStreamDefault", False), ("hipStreamNonBlocking", True)])
def test_Unit_hipStreamCreateWithPriority_FunctionalForAllPriorities(mod, flag_name, device_sync):
    flags = getattr(hip, flag_name)
    low, high = hip.hipDeviceGetStreamPriorityRange()
    if low == high:
        return      # upstream: "Stream priority range not supported" (WARN and return)
    created = [hip.hipStreamCreateWithPriority(flags, p) for p in range(high, low)]
    bufs = _square_on(mod, [None] + created)
    if device_sync:
        hip.hipDeviceSynchronize()
    assert _check_and_free(bufs, sync_each=not device_sync)
    for s in created:
        hip.hipStreamDestroy(s)


def _multi_thread(mod, flags):
    """runFuncTestsForAllPriorityLevelsMultThread: (passed, what each thread reported)."""
    low, high = hip.hipDeviceGetStreamPriorityRange()
    if low == high:
        return True, []
    streams = [hip.hipStreamCreateWithPriority(flags, p) for p in range(high, low + 1)]
    results = []

    def body():
        try:
            results.append(_check_and_free(_square_on(mod, streams), sync_each=True))
        except Exception as exc:    # reported by the main thread
            results.append(exc)

    threads = [threading.Thread(target=body) for _ in range(TOTALTHREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=90)
    for s in streams:
        hip.hipStreamDestroy(s)
    return len(results) == TOTALTHREADS and all(r is True for r in results), results


def test_Unit_hipStreamCreateWithPriority_MulthreadDefaultflag(mod):
    passed, results = _multi_thread(mod, hip.hipStreamDefault)
    assert passed, results


def test_Unit_hipStreamCreateWithPriority_MulthreadNonblockingflag(mod):
    passed, results = _multi_thread(mod, hip.hipStreamNonBlocking)
    assert passed, results


def test_Unit_hipStreamCreateWithPriority_NegTst(mod):
    low, high = hip.hipDeviceGetStreamPriorityRange()
    if low == high:
        return
    # "stream = nullptr test": a nullptr out-param has no Python form
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamCreateWithPriority(0xffffffff, low)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("section", ["high", "low", "lowest_possible", "highest_possible", "non_blocking"])
@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipStreamCreateWithPriority_CheckPriorityVal(mod, device, section):
    hip.hipSetDevice(device)
    low, high = hip.hipDeviceGetStreamPriorityRange()
    create, expect, flags = {
        "high": (high, high, None), "low": (low, low, None),
        "lowest_possible": (INT_MAX, low, None), "highest_possible": (INT_MIN, high, None),
        "non_blocking": (high, high, "hipStreamNonBlocking")}[section]
    flag_value = hip.hipStreamDefault if flags is None else getattr(hip, flags)
    s = hip.hipStreamCreateWithPriority(flag_value, create)
    assert s is not None
    assert check_stream_priority_and_flags(s, expect, None if flags is None else flag_value)
    hip.hipStreamDestroy(s)


def _timed_copies(mod, priorities, per_priority=1):
    """Copy NUMITERS * MEMCPYSIZE1 bytes with copy kernels on streams of the given priorities, timed
    with events; returns the elapsed times and checks the copies."""
    size = NUMITERS * MEMCPYSIZE1
    n = size // 4
    runs = []
    for p in priorities:
        for _ in range(per_priority):
            s = hip.hipStreamCreateWithPriority(hip.hipStreamDefault, p)
            src_h = np.arange(n, dtype=np.int32)
            dst_h = np.zeros(n, np.int32)
            src_d, dst_d = hip.hipMalloc(size), hip.hipMalloc(size)
            hip.hipMemcpy(src_d, src_h, size, hip.hipMemcpyHostToDevice)
            runs.append([s, src_h, dst_h, src_d, dst_d, hip.hipEventCreate(), hip.hipEventCreate()])
    for r in runs:
        hip.hipEventRecord(r[5], r[0])
    for r in runs:
        for i in range(0, size, MEMCPYSIZE1):
            launch(mod, "stream_copy_i32", [r[4] + i, r[3] + i, MEMCPYSIZE1 // 4], r[0], n=MEMCPYSIZE1 // 4,
                   block=256)
    for r in runs:
        hip.hipEventRecord(r[6], r[0])
    for r in runs:
        hip.hipEventSynchronize(r[6])
    times = [hip.hipEventElapsedTime(r[5], r[6]) for r in runs]
    for r in runs:
        hip.hipMemcpy(r[2], r[4], size, hip.hipMemcpyDeviceToHost)
        assert (r[2] == r[1]).all()
    for r in runs:
        hip.hipStreamDestroy(r[0])
        hip.hipFree(r[3])
        hip.hipFree(r[4])
        hip.hipEventDestroy(r[5])
        hip.hipEventDestroy(r[6])
    return times


def _priorities():
    low, high = hip.hipDeviceGetStreamPriorityRange()
    return [low] + ([(low + high) // 2] if low - high > 1 else []) + [high]


def test_Unit_hipStreamCreateWithPriority_ValidateWithEvents(mod):
    low, high = hip.hipDeviceGetStreamPriorityRange()
    if low == high:
        return
    times = _timed_copies(mod, _priorities())
    assert all(t >= 0.0 for t in times), times
    # Upstream then requires the lower priority streams to take no less than 1/1.05 of the time of the
    # higher ones: a wall-clock comparison, left out (house rule: never a wall-clock assertion).


def test_Unit_hipStreamCreateWithPriority_TestMultipleStreamWithPriority(mod):
    times = _timed_copies(mod, _priorities(), per_priority=2)
    assert len(times) == 2 * len(_priorities())
