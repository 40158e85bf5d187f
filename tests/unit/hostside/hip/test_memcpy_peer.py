"""hipMemcpyPeer is host-asynchronous (as CLR's: the copy is queued on the current device's null
stream and the call returns), and later work on the destination device's null stream waits for it:
a read of the destination on that device sees the copied bytes even while the copy is held back."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import wait_until

pytestmark = pytest.mark.timeout(120)
N = 4096


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 8, "host_pool_mib": 8, "engines": 1})


@pytest.fixture
def held(mod):
    """(flag view, src on device 0 filled with a pattern, dst on device 1 zeroed); device 0's null
    stream is held by a hipStreamWaitValue32 on the flag until the test sets it."""
    hip.hipSetDevice(1)
    dst = hip.hipMalloc(N)
    hip.hipMemset(dst, 0, N)
    hip.hipDeviceSynchronize()
    hip.hipSetDevice(0)
    src = hip.hipMalloc(N)
    pattern = (np.arange(N) % 251 + 1).astype(np.uint8)
    hip.hipMemcpy(src, pattern, N, hip.hipMemcpyHostToDevice)
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 2)
    view[:] = 0
    hip.hipStreamWaitValue32(None, flag, 1, hip.hipStreamWaitValueGte)
    try:
        yield view, src, dst, pattern
    finally:
        view[0] = 1
        hip.hipSetDevice(0)
        hip.hipDeviceSynchronize()
        hip.hipSetDevice(1)
        hip.hipDeviceSynchronize()
        hip.hipFree(dst)
        hip.hipSetDevice(0)
        hip.hipFree(src)
        hip.hipHostFree(flag)


def test_hipMemcpyPeer_returns_while_the_copy_is_held_and_the_destination_device_waits_for_it(held):
    view, src, dst, pattern = held
    hip.hipMemcpyPeer(dst, 1, src, 0, N)            # returns: device 0's null stream is held
    assert hip.hipStreamQuery(None) == hip.hipError_t.hipErrorNotReady
    out = np.zeros(N, np.uint8)
    done = threading.Event()
    errors = []

    def reader():
        try:
            hip.hipSetDevice(1)
            hip.hipMemcpy(out, dst, N, hip.hipMemcpyDeviceToHost)    # device 1's null stream
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)
        done.set()
    t = threading.Thread(target=reader)
    t.start()
    view[0] = 1                                     # release device 0: the copy, then the read
    wait_until(done.is_set, 60, "the read on device 1")
    t.join(10)
    assert not errors, errors
    assert np.array_equal(out, pattern)


def test_hipMemcpyPeer_to_the_current_device_and_of_zero_bytes(held):
    view, src, dst, pattern = held
    view[0] = 1
    hip.hipSetDevice(1)
    hip.hipMemcpyPeer(dst, 1, src, 0, 0)            # nothing copied, nothing ordered
    hip.hipMemcpyPeer(dst, 1, src, 0, N)            # on device 1's own null stream
    out = np.zeros(N, np.uint8)
    hip.hipMemcpy(out, dst, N, hip.hipMemcpyDeviceToHost)
    assert np.array_equal(out, pattern)
    hip.hipSetDevice(0)


# -- hipMemcpyAsync from pageable memory ---------------------------------------------------------------
def test_async_pageable_copies_return_while_the_stream_is_held_and_carry_the_data_of_the_call(held):
    """Up to the staging pool's size, hipMemcpyAsync from a numpy array returns at once (CLR's staged
    copy): the array may be changed right after the call, the copy carries what it held then."""
    view, _src, _dst, _pattern = held
    dev = hip.hipMalloc(4 * N)
    host = np.zeros(N, np.uint8)
    for i in range(4):                              # device 0's null stream is held
        host[:] = i + 1
        hip.hipMemcpyAsync(dev + i * N, host, N, hip.hipMemcpyHostToDevice, None)
    assert hip.hipStreamQuery(None) == hip.hipError_t.hipErrorNotReady
    host[:] = 0xEE
    view[0] = 1
    out = np.zeros(4 * N, np.uint8)
    hip.hipMemcpy(out, dev, 4 * N, hip.hipMemcpyDeviceToHost)
    hip.hipFree(dev)
    assert [set(out[i * N:(i + 1) * N]) for i in range(4)] == [{1}, {2}, {3}, {4}]


def test_an_async_pageable_pipeline_runs_past_the_staging_pool_and_keeps_every_copy(held):
    view, _src, _dst, _pattern = held
    view[0] = 1
    n, k = 64 * 1024, 200                           # 200 copies, past max_buffers (8) many times over
    s = hip.hipStreamCreate()
    dev = hip.hipMalloc(n * 4)
    host = np.zeros(n, np.uint8)
    for i in range(k):
        host[:] = i % 251
        hip.hipMemcpyAsync(dev + (i % 4) * n, host, n, hip.hipMemcpyHostToDevice, s)
    hip.hipStreamSynchronize(s)
    out = np.zeros(4 * n, np.uint8)
    hip.hipMemcpy(out, dev, 4 * n, hip.hipMemcpyDeviceToHost)
    hip.hipStreamDestroy(s)
    hip.hipFree(dev)
    assert [set(out[j * n:(j + 1) * n]) for j in range(4)] == [{(k - 4 + j) % 251} for j in range(4)]


def test_a_copy_of_another_devices_memory_follows_that_devices_null_stream(mod):
    """CLR's ihipMemcpyCommand: a copy whose device memory is all on a device other than the stream's
    runs on that device's null stream, after the stream's last command, and the stream's later work
    follows it. Device 1's null stream is held, a memset there fills ``x``; a hipMemcpyAsync from ``x``
    on a stream of device 0 must read the memset's bytes, not the zeros before it (it did: the copy
    ran on device 0 at once, and upstream Unit_hipMemcpyPeer_Positive_ZeroSize failed when the
    machine was busy)."""
    hip.hipSetDevice(1)
    x = hip.hipMalloc(N)
    hip.hipMemset(x, 0, N)
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 2)
    view[:] = 0
    hip.hipStreamWaitValue32(None, flag, 1, hip.hipStreamWaitValueGte)    # device 1's null stream waits
    hip.hipMemsetAsync(x, 7, N, None)
    hip.hipSetDevice(0)
    s = hip.hipStreamCreate()
    out = hip.hipHostMalloc(N)
    host = hip.host_array(out, np.uint8, N)
    host[:] = 1
    try:
        hip.hipMemcpyAsync(out, x, N, hip.hipMemcpyDeviceToHost, s)
        assert hip.hipStreamQuery(s) == hip.hipError_t.hipErrorNotReady     # it waits for device 1
        view[0] = 1
        hip.hipStreamSynchronize(s)                     # the stream's sync covers the copy
        assert (host == 7).all(), np.unique(host)
    finally:
        view[0] = 1
        hip.hipStreamDestroy(s)
        hip.hipSetDevice(1)
        hip.hipDeviceSynchronize()
        hip.hipFree(x)
        hip.hipSetDevice(0)
        hip.hipHostFree(flag)
        hip.hipHostFree(out)
