"""hipMallocFromPoolAsync: one and two blocks from a created pool (attributes before and after the
stream passed the frees), a block freed on the stream reused before the free is passed, bad arguments,
and C = A + B from created pools with default and maximum release thresholds: on created, null and
per-thread streams, every device, several threads, several streams (ordered by events or not) and
with the reuse attributes disabled and enabled.

Sizes scaled to the platform's 32 MiB devices: Basic_Reuse's large block is 8 MiB (upstream 32 MiB);
cases that hold several StreamMemAllocTest buffers at once (threads, concurrent streams) use 2^18 or
2^19 ints per buffer instead of 2^20."""
import threading

import pytest

from hostside import hip
from tests.upstream.hip.memory.mempool_common import (PAGE, MemPoolGuard, StreamMemAllocTest,
                                                      malloc_mempool_async_one_alloc, malloc_mempool_async_reuse,
                                                      malloc_mempool_async_two_allocs, mempools_supported, pool_props)

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMallocFromPoolAsync.cc"
E = hip.hipError_t
A = hip.hipMemPoolAttr
N = 1 << 20
N_THREADS = 1 << 18       # NUMBER_OF_THREADS buffers sets at once
N_CONCURRENT = 1 << 19    # three or four sets at once
LAUNCH_ITERATIONS = 5
NUMBER_OF_THREADS = 5
UINT64_MAX = 2**64 - 1
THRESHOLD = {"testdefault": 0, "testMaximum": UINT64_MAX}
SIZES = [PAGE // 2, PAGE, PAGE * 2]


def from_pool(size, pool, stream):
    return hip.hipMallocFromPoolAsync(size, pool, stream)


@pytest.mark.parametrize("size", SIZES)
def test_Unit_hipMallocFromPoolAsync_Basic_OneAlloc(platform, kmod, size):
    malloc_mempool_async_one_alloc(kmod, from_pool, "created", size)


@pytest.mark.parametrize("size", SIZES)
def test_Unit_hipMallocFromPoolAsync_Basic_TwoAllocs(platform, kmod, size):
    malloc_mempool_async_two_allocs(kmod, from_pool, "created", size)


def test_Unit_hipMallocFromPoolAsync_Basic_Reuse(platform, kmod):
    malloc_mempool_async_reuse(kmod, from_pool, "created", PAGE * PAGE // 2)


# SECTION "dev_ptr is nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["Mempool not created", "Invalid stream handle", "Size is max size_t"])
def test_Unit_hipMallocFromPoolAsync_Negative_Parameters(platform, section):
    hip.hipSetDevice(0)
    mempools_supported(0)
    stream = hip.hipStreamCreate()
    try:
        with MemPoolGuard("created", 0) as g:
            args, error = (1024, g.mempool, stream), E.hipErrorOutOfMemory
            if section == "Mempool not created":
                args, error = (1024, None, stream), E.hipErrorInvalidValue
            elif section == "Invalid stream handle":
                args, error = (1024, g.mempool, 2**64 - 1), E.hipErrorInvalidHandle
            else:
                args = (2**64 - 1, g.mempool, stream)
            with pytest.raises(hip.HipError) as ei:
                hip.hipMallocFromPoolAsync(*args)
            assert ei.value.error == error
    finally:
        hip.hipStreamDestroy(stream)


def _round_trip(t, mod, stream, alloc=True):
    if alloc:
        t.alloc_from_mempool(stream)
    t.transfer_to_mempool(stream)
    t.run_kernel(mod, stream)
    t.transfer_from_mempool(stream)
    t.free_dev_buf(stream)


def check_maximum_and_default_threshold(mod, stream, n, testtype, dev=0) -> bool:
    t = StreamMemAllocTest(n)
    t.create_mempool(A.hipMemPoolAttrReleaseThreshold, THRESHOLD[testtype], dev)
    results = True
    for _ in range(LAUNCH_ITERATIONS):
        _round_trip(t, mod, stream)
        hip.hipStreamSynchronize(stream)
        results = t.validate_result()
        if not results:
            break
    t.free_mempool()
    return results


def test_Unit_hipMallocFromPoolAsync_ReleaseThreshold(platform, kmod):
    mempools_supported(0)
    stream = hip.hipStreamCreate()
    assert check_maximum_and_default_threshold(kmod, stream, N, "testdefault")
    assert check_maximum_and_default_threshold(kmod, stream, N, "testMaximum")
    hip.hipStreamDestroy(stream)


def test_Unit_hipMallocFromPoolAsync_NullStream(platform, kmod):
    mempools_supported(0)
    assert check_maximum_and_default_threshold(kmod, None, N, "testdefault")
    assert check_maximum_and_default_threshold(kmod, None, N, "testMaximum")


def test_Unit_hipMallocFromPoolAsync_hipStreamPerThread(platform, kmod):
    mempools_supported(0)
    assert check_maximum_and_default_threshold(kmod, hip.hipStreamPerThread, N, "testdefault")
    assert check_maximum_and_default_threshold(kmod, hip.hipStreamPerThread, N, "testMaximum")


def test_Unit_hipMallocFromPoolAsync_ReleaseThreshold_Mgpu(platform, kmod):
    try:
        for dev in range(hip.hipGetDeviceCount()):
            mempools_supported(dev)
            hip.hipSetDevice(dev)
            stream = hip.hipStreamCreate()
            assert check_maximum_and_default_threshold(kmod, stream, N, "testdefault", dev)
            assert check_maximum_and_default_threshold(kmod, stream, N, "testMaximum", dev)
            hip.hipStreamDestroy(stream)
    finally:
        hip.hipSetDevice(0)


def _threads(target, count):
    """Run target(i) on ``count`` threads (joined within a bound); their results in order."""
    results = [False] * count

    def run(i):
        results[i] = target(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    return results


@pytest.mark.parametrize("testtype", ["testdefault", "testMaximum"])
def test_Unit_hipMallocFromPoolAsync_Multidevice_Concurrent(platform, kmod, testtype):
    num_devices = hip.hipGetDeviceCount()
    assert num_devices >= 2                     # checkIfMultiDev
    streams, objs = [], []
    try:
        for idx in range(num_devices):
            mempools_supported(idx)
            hip.hipSetDevice(idx)
            streams.append(hip.hipStreamCreate())
            objs.append(StreamMemAllocTest(N))
            objs[-1].create_mempool(A.hipMemPoolAttrReleaseThreshold, THRESHOLD[testtype], idx)
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            _threads(lambda _i, idx=idx: _round_trip(objs[idx], kmod, streams[idx]) or True, 1)
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            hip.hipStreamSynchronize(streams[idx])
            assert objs[idx].validate_result()
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            objs[idx].free_mempool()
            hip.hipStreamDestroy(streams[idx])
    finally:
        hip.hipSetDevice(0)


@pytest.mark.parametrize("testtype", ["testdefault", "testMaximum"])
def test_Unit_hipMallocFromPoolAsync_Multidevice_MultiStream(platform, kmod, testtype):
    num_devices = hip.hipGetDeviceCount()
    assert num_devices >= 2                     # checkIfMultiDev
    streams, objs = [], []
    try:
        for idx in range(num_devices):
            mempools_supported(idx)
            hip.hipSetDevice(idx)
            for _ in range(2):                  # streamPerAsic
                streams.append(hip.hipStreamCreate())
                objs.append(StreamMemAllocTest(N_CONCURRENT))
                objs[-1].create_mempool(A.hipMemPoolAttrReleaseThreshold, THRESHOLD[testtype], idx)
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            _threads(lambda i, idx=idx: _round_trip(objs[2 * idx + i], kmod, streams[2 * idx + i]) or True, 2)
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            for k in (2 * idx, 2 * idx + 1):
                hip.hipStreamSynchronize(streams[k])
                assert objs[k].validate_result()
        for idx in range(num_devices):
            hip.hipSetDevice(idx)
            for k in (2 * idx, 2 * idx + 1):
                objs[k].free_mempool()
                hip.hipStreamDestroy(streams[k])
    finally:
        hip.hipSetDevice(0)


def _mthread(kmod, testtype) -> bool:
    streams = [hip.hipStreamCreate() for _ in range(NUMBER_OF_THREADS)]
    results = _threads(lambda i: check_maximum_and_default_threshold(kmod, streams[i], N_THREADS, testtype, 0),
                       NUMBER_OF_THREADS)
    for s in streams:
        hip.hipStreamDestroy(s)
    return all(results)


def test_Unit_hipMallocFromPoolAsync_MThread_DefaultThresh(platform, kmod):
    mempools_supported(0)
    assert _mthread(kmod, "testdefault")


def test_Unit_hipMallocFromPoolAsync_MThread_MaxThresh(platform, kmod):
    mempools_supported(0)
    assert _mthread(kmod, "testMaximum")


def _mthread_common_mpool(kmod, testtype, use_default=False) -> bool:
    pool = hip.hipDeviceGetDefaultMemPool(0) if use_default else hip.hipMemPoolCreate(pool_props(0))
    if testtype == "testMaximum":
        hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, UINT64_MAX)
    streams = [hip.hipStreamCreate() for _ in range(NUMBER_OF_THREADS)]

    def thread_test2(i):
        t = StreamMemAllocTest(N_THREADS)
        t.use_common_mempool(pool)
        results = True
        for _ in range(LAUNCH_ITERATIONS):
            _round_trip(t, kmod, streams[i])
            hip.hipStreamSynchronize(streams[i])
            results = t.validate_result()
            if not results:
                break
        return results
    results = _threads(thread_test2, NUMBER_OF_THREADS)
    for s in streams:
        hip.hipStreamDestroy(s)
    if not use_default:
        hip.hipMemPoolDestroy(pool)
    return all(results)


def test_Unit_hipMallocFromPoolAsync_MThread_CommonMpool_DefaultMempool(platform, kmod):
    mempools_supported(0)
    assert _mthread_common_mpool(kmod, "testdefault", True)


def test_Unit_hipMallocFromPoolAsync_MThread_CommonMpool_MaxThresh(platform, kmod):
    mempools_supported(0)
    assert _mthread_common_mpool(kmod, "testMaximum", False)


def test_Unit_hipMallocFromPoolAsync_MultStream_Sync(platform, kmod):
    mempools_supported(0)
    t = StreamMemAllocTest(N)
    create, access, destroy = (hip.hipStreamCreate() for _ in range(3))
    t.create_mempool(A.hipMemPoolAttrReleaseThreshold, 0, 0)
    event1, event2 = hip.hipEventCreate(), hip.hipEventCreate()
    t.alloc_from_mempool(create)
    t.transfer_to_mempool(create)
    hip.hipEventRecord(event1, create)
    hip.hipStreamWaitEvent(access, event1, 0)
    t.run_kernel(kmod, access)
    t.transfer_from_mempool(access)
    hip.hipEventRecord(event2, access)
    hip.hipStreamWaitEvent(destroy, event2, 0)
    t.free_dev_buf(destroy)
    hip.hipStreamSynchronize(destroy)
    assert t.validate_result()
    t.free_mempool()
    for e in (event2, event1):
        hip.hipEventDestroy(e)
    for s in (destroy, access, create):
        hip.hipStreamDestroy(s)


def check_mempool_mult_stream_concurrent_exec(kmod, n, use_def_strm=True) -> bool:
    objs = [StreamMemAllocTest(n) for _ in range(3)]
    streams = [hip.hipStreamCreate()]
    streams += [None, hip.hipStreamPerThread] if use_def_strm else [hip.hipStreamCreate(), hip.hipStreamCreate()]
    pool = hip.hipMemPoolCreate(pool_props(0))
    for t, s in zip(objs, streams):
        t.use_common_mempool(pool)
        _round_trip(t, kmod, s)
    results = True
    for t, s in zip(objs, streams):
        hip.hipStreamSynchronize(s)
        results &= t.validate_result()
    hip.hipStreamDestroy(streams[0])
    if not use_def_strm:
        hip.hipStreamDestroy(streams[1])
        hip.hipStreamDestroy(streams[2])
    hip.hipMemPoolDestroy(pool)
    return results


def test_Unit_hipMallocFromPoolAsync_MultStream_DefaultStreams(platform, kmod):
    mempools_supported(0)
    assert check_mempool_mult_stream_concurrent_exec(kmod, N_CONCURRENT, True)


def test_Unit_hipMallocFromPoolAsync_MultStream_UserStreams(platform, kmod):
    mempools_supported(0)
    assert check_mempool_mult_stream_concurrent_exec(kmod, N_CONCURRENT, False)


def _two_streams(kmod, attr, enabled: bool, with_event: bool) -> bool:
    """checkReuseFollowEventDepFlag (``with_event``) / checkReuseAllowOtherFlags: the round trip on one
    stream then on another (after an event of the first, or not), LAUNCH_ITERATIONS times."""
    t = StreamMemAllocTest(N)
    t.create_mempool(attr, int(enabled), 0)
    s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
    results = True
    for _ in range(LAUNCH_ITERATIONS):
        _round_trip(t, kmod, s1)
        if with_event:
            event1 = hip.hipEventCreate()
            hip.hipEventRecord(event1, s1)
            hip.hipStreamWaitEvent(s2, event1, 0)
        _round_trip(t, kmod, s2)
        hip.hipStreamSynchronize(s2)
        if with_event:
            hip.hipEventDestroy(event1)
        results = t.validate_result()
        if not results:
            break
    t.free_mempool()
    hip.hipStreamDestroy(s2)
    hip.hipStreamDestroy(s1)
    return results


def test_Unit_hipMallocFromPoolAsync_ReuseFollowEventDependencies(platform, kmod):
    mempools_supported(0)
    assert _two_streams(kmod, A.hipMemPoolReuseFollowEventDependencies, False, True)
    assert _two_streams(kmod, A.hipMemPoolReuseFollowEventDependencies, True, True)


def test_Unit_hipMallocFromPoolAsync_ReuseAllowOpportunistic(platform, kmod):
    mempools_supported(0)
    assert _two_streams(kmod, A.hipMemPoolReuseAllowOpportunistic, False, False)
    assert _two_streams(kmod, A.hipMemPoolReuseAllowOpportunistic, True, False)


def test_Unit_hipMallocFromPoolAsync_ReuseAllowInternalDependencies(platform, kmod):
    mempools_supported(0)
    assert _two_streams(kmod, A.hipMemPoolReuseAllowInternalDependencies, False, False)
    assert _two_streams(kmod, A.hipMemPoolReuseAllowInternalDependencies, True, False)
