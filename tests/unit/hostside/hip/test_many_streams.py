"""More streams than an agent has queue slots (16 by default), as a program on a real GPU may create:
past the slots, streams share hardware queues (``hostside.clr._qpool``), and everything still runs in
stream order: kernels, copies both ways, cross-stream event waits and graph launches, from several
threads at once, never synchronised until the end. A stream's signal ring stops growing once the
process holds half of the platform's signals, so events still get theirs."""
import threading

import numpy as np
import pytest

from hostside import hip
from hostside.clr._qpool import pool_of
from hostside.hsa import runtime
from tests.upstream.hipkit import function, launch, platform_module

pytestmark = pytest.mark.timeout(240)
N = 64


@pytest.fixture(scope="module")
def mod():
    yield from platform_module({"signals": 4096})


def read(p, n=N):
    out = np.zeros(n, np.int32)
    hip.hipMemcpy(out, p, 4 * n, hip.hipMemcpyDeviceToHost)
    return out


def test_64_streams_on_16_slots_each_in_order(mod):
    streams = [hip.hipStreamCreate() for _ in range(64)]
    bufs = [hip.hipMalloc(4 * N) for _ in streams]
    try:
        for s, b in zip(streams, bufs):
            launch(mod, "set_value", [b, 5, N], s, n=N)
            launch(mod, "increment", [b, N], s, n=N)          # after set_value, on a shared queue too
        hip.hipDeviceSynchronize()
        assert all((read(b) == 6).all() for b in bufs)
        pool = pool_of(runtime())
        qs = {s.vgpu.queue for s in streams}
        assert len(qs) < len(streams) and max(pool.sharers(q) for q in qs) > 1     # shared, really
    finally:
        for s in streams:
            hip.hipStreamDestroy(s)
        for b in bufs:
            hip.hipFree(b)
    s = hip.hipStreamCreate()          # the slots came back: a new stream works
    b = hip.hipMalloc(4 * N)
    launch(mod, "set_value", [b, 3, N], s, n=N)
    hip.hipStreamSynchronize(s)
    assert (read(b) == 3).all()
    hip.hipStreamDestroy(s)
    hip.hipFree(b)


def test_40_streams_4_threads_copies_events_graphs_never_synced(mod):
    S, T, ITER = 40, 4, 60
    streams = [hip.hipStreamCreate() for _ in range(S)]
    bufs = [hip.hipMalloc(4 * N) for _ in range(S)]
    for b in bufs:
        hip.hipMemset(b, 0, 4 * N)
    hip.hipDeviceSynchronize()
    evs = [hip.hipEventCreate() for _ in range(S)]
    inc = function(mod, "increment")
    execs, graphs = [], []
    for b in bufs:
        g = hip.hipGraphCreate(0)
        kp = hip.hipKernelNodeParams(blockDim=(N, 1, 1), gridDim=(1, 1, 1), func=inc, kernelParams=[b, N],
                                     sharedMemBytes=0)
        k = hip.hipGraphAddKernelNode(g, None, kp)
        hip.hipGraphAddEventRecordNode(g, [k], hip.hipEventCreate())
        graphs.append(g)
        execs.append(hip.hipGraphInstantiate(g))
    errors = []

    def worker(t):
        host = np.zeros(N, np.int32)
        try:
            for it in range(ITER):
                for i in range(t, S, T):
                    s = streams[i]
                    launch(mod, "increment", [bufs[i], N], s, n=N)
                    if it % 10 == 0:
                        hip.hipMemcpyAsync(host, bufs[i], 4 * N, hip.hipMemcpyDeviceToHost, s)
                    if it % 7 == 0:
                        hip.hipGraphLaunch(execs[i], s)
                    hip.hipEventRecord(evs[i], s)
                    hip.hipStreamWaitEvent(streams[(i + 1) % S], evs[i], 0)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(T)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(180)
    assert not any(th.is_alive() for th in threads)
    hip.hipDeviceSynchronize()
    assert errors == []
    want = ITER + len(range(0, ITER, 7))
    for i, b in enumerate(bufs):
        assert (read(b) == want).all(), (i, read(b)[:4], want)
    for e in execs:
        hip.hipGraphExecDestroy(e)
    for g in graphs:
        hip.hipGraphDestroy(g)
    for s in streams:
        hip.hipStreamDestroy(s)
    for b in bufs:
        hip.hipFree(b)


def test_pageable_copies_share_the_processes_staging_buffers(mod):
    """Staging buffers are lent per copy, not owned per stream: 48 streams each copy through one,
    8 threads at a time, and every byte lands where it should."""
    S, T = 48, 8
    streams = [hip.hipStreamCreate() for _ in range(S)]
    nbytes = 3 << 20                                  # three chunks of a full-size buffer's half, and more
    dev = [hip.hipMalloc(nbytes) for _ in range(T)]
    errors = []

    def worker(t):
        rng = np.random.default_rng(t)
        try:
            for i in range(t, S, T):
                data = rng.integers(0, 255, nbytes, dtype=np.uint8)
                hip.hipMemcpyAsync(dev[t], data, nbytes, hip.hipMemcpyHostToDevice, streams[i])
                back = np.zeros(nbytes, np.uint8)
                hip.hipMemcpyAsync(back, dev[t], nbytes, hip.hipMemcpyDeviceToHost, streams[i])
                hip.hipStreamSynchronize(streams[i])
                if not np.array_equal(back, data):
                    errors.append(f"stream {i}: {int((back != data).sum())} bytes differ")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(T)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(180)
    assert not any(th.is_alive() for th in threads)
    assert errors == []
    pool = runtime()._clr_staging_pool
    assert pool.lent == 0 and 1 <= len(pool.free) <= T            # at most one per copy in flight
    for s in streams:
        hip.hipStreamDestroy(s)
    for d in dev:
        hip.hipFree(d)



def test_a_stream_past_the_slots_shares_an_idle_queue_not_a_busy_one(mod):
    """Once the process holds all the slots it may, a new stream shares the least-used queue with
    nothing in flight: behind a busy queue's kernel (here one that the host opens later) it would wait
    for work that is not its own."""
    from tests.upstream.hipkit import Gate
    streams = [hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking) for _ in range(16)]
    pool = pool_of(runtime())
    b = hip.hipMalloc(4 * N)
    try:
        assert max(pool.sharers(s.vgpu.queue) for s in streams) > 1      # past the slots: shared
        queues = {s.vgpu.queue for s in streams}
        # the queue a new stream would take if idleness did not count: the least-used, lowest first
        busy = min(queues, key=lambda q: (pool.sharers(q), list(pool.refs).index(q)))
        with Gate(mod, limit_s=20.0) as gate:
            gate.launch(next(s for s in streams if s.vgpu.queue is busy))
            other = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
            try:
                q = other.vgpu.queue
                assert q is not busy and q.a64[q.i_read] == q.next_id          # an idle one
                gate.open()
                launch(mod, "set_value", [b, 7, N], other, n=N)
                hip.hipStreamSynchronize(other)
                assert (read(b) == 7).all()
            finally:
                hip.hipStreamDestroy(other)
    finally:
        for s in streams:
            hip.hipStreamDestroy(s)
        hip.hipFree(b)
