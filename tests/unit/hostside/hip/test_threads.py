"""The HIP API from several threads at once: streams shared between threads (the null stream too),
pageable copies through the stream's staging buffer verified byte for byte, launches, events."""
import threading

import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from hostside.clr import STAGING_BYTES
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(240)

THREADS = 4


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 32, "host_pool_mib": 32, "engines": 2})


@pytest.fixture(autouse=True)
def short_waits(mod, monkeypatch):
    monkeypatch.setattr(hsa.runtime(), "wait_timeout_s", 20.0)


def run_threads(work, n=THREADS):
    """Run ``work(t)`` in ``n`` threads started together; re-raise the first failure."""
    errors = []
    go = threading.Barrier(n)

    def body(t):
        try:
            go.wait()
            work(t)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    ts = [threading.Thread(target=body, args=(t,)) for t in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "a thread is still running"
    if errors:
        raise errors[0]


def round_trips(stream, rounds, sizes):
    """Per thread: pageable host -> device -> pageable host round trips on ``stream``; returns the
    rounds whose bytes came back wrong."""
    wrong = []

    def work(t):
        rng = np.random.default_rng(t)
        d = hip.hipMalloc(max(sizes))
        try:
            for r in range(rounds):
                n = sizes[r % len(sizes)]
                x = rng.integers(0, 256, n, dtype=np.uint8)
                y = np.zeros(n, np.uint8)
                if stream is None:
                    hip.hipMemcpy(d, x, n, hip.hipMemcpyHostToDevice)
                    hip.hipMemcpy(y, d, n, hip.hipMemcpyDeviceToHost)
                else:
                    hip.hipMemcpyAsync(d, x, n, hip.hipMemcpyHostToDevice, stream)
                    hip.hipMemcpyAsync(y, d, n, hip.hipMemcpyDeviceToHost, stream)
                if not np.array_equal(x, y):
                    wrong.append((t, r, n))
        finally:
            hip.hipFree(d)
    run_threads(work)
    return wrong


#: one chunk, exactly one staging half, and several chunks (both halves in turn)
SIZES = [100_003, STAGING_BYTES // 2, 3 * STAGING_BYTES // 2 + 17]


def test_threads_share_the_null_stream_for_pageable_memcpy(mod):
    assert round_trips(None, 6, SIZES) == []


def test_threads_share_a_stream_for_pageable_memcpy_async(mod):
    s = hip.hipStreamCreate()
    try:
        assert round_trips(s, 6, SIZES) == []
    finally:
        hip.hipStreamDestroy(s)


def test_threads_share_the_null_stream_of_the_second_device(mod):
    def work(t):
        hip.hipSetDevice(1)
        try:
            wrong = []
            rng = np.random.default_rng(100 + t)
            n = SIZES[2]
            d = hip.hipMalloc(n)
            for _ in range(4):
                x = rng.integers(0, 256, n, dtype=np.uint8)
                y = np.zeros(n, np.uint8)
                hip.hipMemcpy(d, x, n, hip.hipMemcpyHostToDevice)
                hip.hipMemcpy(y, d, n, hip.hipMemcpyDeviceToHost)
                if not np.array_equal(x, y):
                    wrong.append(t)
            hip.hipFree(d)
            assert wrong == []
        finally:
            hip.hipSetDevice(0)
    run_threads(work)


def test_threads_launch_and_copy_on_a_shared_stream(mod):
    """Kernels and async copies from several threads on one stream: every launch counts, every
    copy lands, and the stream's ring and staging stay consistent (a pageable copy in between)."""
    s = hip.hipStreamCreate()
    n, iters = 64, 300
    x = hip.hipMalloc(4 * n)
    outs = [hip.hipMalloc(4 * n) for _ in range(THREADS)]
    hip.hipMemset(x, 0, 4 * n)
    f = hip.hipModuleGetFunction(mod, "inc")
    try:
        def work(t):
            page = np.zeros(n, np.int32)
            for i in range(iters):
                hip.hipModuleLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, [x, n])
                hip.hipMemcpyAsync(outs[t], x, 4 * n, hip.hipMemcpyDeviceToDevice, s)
                if i % 50 == 0:
                    hip.hipMemcpyAsync(page, x, 4 * n, hip.hipMemcpyDeviceToHost, s)
                    assert (page == page[0]).all() and page[0] >= 1
        run_threads(work)
        hip.hipStreamSynchronize(s)
        got = np.empty(n, np.int32)
        hip.hipMemcpy(got, x, 4 * n, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(got, np.full(n, THREADS * iters, np.int32))
    finally:
        hip.hipStreamDestroy(s)
        for p in [x] + outs:
            hip.hipFree(p)


def test_threads_record_and_wait_one_event_on_their_streams(mod):
    """One event recorded and waited for by several threads, each on its own stream (a record
    moves the event to a fresh signal while another stream's barrier still waits on the old one)."""
    ev = hip.hipEventCreate()
    f = hip.hipModuleGetFunction(mod, "inc")
    iters = 200
    counts = {}

    def work(t):
        s = hip.hipStreamCreate()
        x = hip.hipMalloc(4)
        try:
            hip.hipMemset(x, 0, 4)
            for _ in range(iters):
                hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [x, 1])
                hip.hipEventRecord(ev, s)
                hip.hipStreamWaitEvent(s, ev)
                hip.hipMemcpyAsync(x, x, 4, hip.hipMemcpyDeviceToDevice, s)
            hip.hipStreamSynchronize(s)
            out = np.zeros(1, np.int32)
            hip.hipMemcpy(out, x, 4, hip.hipMemcpyDeviceToHost)
            counts[t] = int(out[0])
        finally:
            hip.hipFree(x)
            hip.hipStreamDestroy(s)
    try:
        run_threads(work)
        hip.hipEventSynchronize(ev)
    finally:
        hip.hipEventDestroy(ev)
    assert counts == {t: iters for t in range(THREADS)}


def test_threads_create_destroy_streams_while_others_synchronize(mod):
    stop = threading.Event()
    f = hip.hipModuleGetFunction(mod, "empty")

    def work(t):
        if t == 0:
            try:
                for _ in range(200):
                    hip.hipDeviceSynchronize()
            finally:
                stop.set()
        else:
            while not stop.is_set():
                s = hip.hipStreamCreate()
                hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
                hip.hipStreamDestroy(s)
    run_threads(work, 3)
