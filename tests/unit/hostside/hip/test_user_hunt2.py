"""Bugs found by a second round of HIP programs written as a user would (CLR's behaviour checked in
its source); each test failed before its fix."""
import threading

import numpy as np
import pytest

from hostside import hip, hsa
from hostside.clr import VirtualGPU
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(120)

CONFIG = {"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2}


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module(CONFIG)


# -- zero-byte copies and fills -------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda d, s: hip.hipMemcpy(None, None, 0, hip.hipMemcpyHostToDevice),
    lambda d, s: hip.hipMemcpy(d, None, 0, hip.hipMemcpyHostToDevice),
    lambda d, s: hip.hipMemcpy(None, d, 0, hip.hipMemcpyDeviceToHost),
    lambda d, s: hip.hipMemcpyAsync(d, None, 0, hip.hipMemcpyHostToDevice, s),
    lambda d, s: hip.hipMemcpyHtoD(d, None, 0),
    lambda d, s: hip.hipMemcpyDtoH(None, d, 0),
    lambda d, s: hip.hipMemcpyDtoDAsync(None, None, 0, s),
    lambda d, s: hip.hipMemcpyPeer(None, 1, None, 0, 0),
    lambda d, s: hip.hipMemset(None, 0, 0),
    lambda d, s: hip.hipMemsetAsync(None, 0, 0, s),
    lambda d, s: hip.hipMemsetD32(None, 7, 0),
    lambda d, s: hip.hipMemsetD16Async(None, 7, 0, s),
], ids=["memcpy-null-null", "memcpy-null-src", "memcpy-null-dst", "memcpyAsync", "HtoD", "DtoH", "DtoDAsync",
        "peer", "memset", "memsetAsync", "memsetD32", "memsetD16Async"])
def test_a_zero_byte_copy_or_fill_ignores_its_pointers(mod, stream, call):
    """``hipMemcpy(d, v.data(), 0, ...)`` of an empty std::vector passes nullptr: CLR's ihipMemcpy and
    ihipMemset return hipSuccess for 0 bytes before they look at a pointer. hdemu said
    hipErrorInvalidValue (the pointer was classified first)."""
    d = hip.hipMalloc(256)
    try:
        hip.hipGetLastError()
        call(d, stream)
        assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
        hip.hipStreamSynchronize(stream)
    finally:
        hip.hipFree(d)


# -- events ---------------------------------------------------------------------------------------------
@pytest.fixture
def short_waits(mod):
    """Host waits bounded by 5 s instead of the suite's 60 s (a call that blocks where HIP does not
    fails in 5 s with hipErrorLaunchTimeOut)."""
    rt = hsa.runtime()
    before, rt.wait_timeout_s = rt.wait_timeout_s, 5.0
    yield mod
    rt.wait_timeout_s = before


def test_re_recording_an_event_on_another_stream_does_not_wait_for_its_pending_record(short_waits):
    """hipEventRecord enqueues a marker and returns (CLR: the event now names the new record). An
    event whose record on stream A was still pending, recorded again on stream B, blocked the host
    until A's record completed: here A is held by a gate the host opens only afterwards, so the call
    never returned (hipErrorLaunchTimeOut after the wait bound)."""
    mod = short_waits
    a, b = hip.hipStreamCreate(), hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    ev = hip.hipEventCreate()
    gate = Gate(mod, limit_s=60.0)
    try:
        gate.launch(a)
        hip.hipEventRecord(ev, a)
        assert hip.hipEventQuery(ev) == hip.hipError_t.hipErrorNotReady
        hip.hipEventRecord(ev, b)                   # returned at once in HIP
        assert hip.hipStreamQuery(a) == hip.hipError_t.hipErrorNotReady    # a is still held
    finally:
        gate.close()
    hip.hipEventSynchronize(ev)
    assert hip.hipEventQuery(ev) == hip.hipError_t.hipSuccess
    for x in (a, b):
        hip.hipStreamDestroy(x)
    hip.hipEventDestroy(ev)


# -- a device-wide sync with a failed stream ------------------------------------------------------------
@pytest.fixture
def fresh():
    """A platform of its own (these tests leave a failed null stream or device behind)."""
    yield from embedded_module(CONFIG)


@pytest.mark.parametrize("sync", ["hipDeviceSynchronize", "hipStreamSynchronize(0)"])
def test_a_device_wide_sync_waits_for_every_stream_before_it_reports_a_failed_one(fresh, sync, monkeypatch):
    """A stream failed (a kernel raised) and other streams still run: hipDeviceSynchronize (and the
    legacy null stream's hipStreamSynchronize(0), which covers the blocking streams) raised the
    failure as soon as it met that stream, and returned while the streams after it were still
    running. It now waits for all of them, then raises the error (CLR waits for every stream)."""
    mod = fresh
    d = hip.hipMalloc(256)
    bad = hip.hipStreamCreate()             # first: the streams are synchronised in creation order
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "boom"), 1, 1, 1, 1, 1, 1, 0, bad, [d])
    with pytest.raises(hip.HipError):
        hip.hipStreamSynchronize(bad)       # the failure is there before the sync below starts
    gate = Gate(mod, limit_s=60.0)
    late = hip.hipStreamCreate()
    gate.launch(late)
    # the gate opens once the sync below waits for ``late`` (never, before the fix): a host function
    # on another stream waits for that, so nothing races against a timer
    waiting = threading.Event()
    real = VirtualGPU.synchronize

    def synchronize(v):
        if v is late.vgpu:
            waiting.set()
        return real(v)
    monkeypatch.setattr(VirtualGPU, "synchronize", synchronize)
    opener = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    hip.hipLaunchHostFunc(opener, lambda _u: waiting.wait(30) and gate.open(), None)
    try:
        with pytest.raises(hip.HipError) as exc:
            hip.hipDeviceSynchronize() if sync == "hipDeviceSynchronize" else hip.hipStreamSynchronize(0)
        assert exc.value.error == hip.hipError_t.hipErrorLaunchFailure
        assert hip.hipStreamQuery(late) == hip.hipError_t.hipSuccess    # was hipErrorNotReady
    finally:
        waiting.set()
        gate.open()
    hip.hipStreamDestroy(bad)
    hip.hipDeviceSynchronize()
    gate.close()
    for s in (late, opener):
        hip.hipStreamDestroy(s)
    hip.hipFree(d)
