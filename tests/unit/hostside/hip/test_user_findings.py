"""Bugs found by writing end-to-end HIP programs as a user would; each test failed before its fix."""
import numpy as np
import pytest

from hostside import hip, hsa
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(120)

CONFIG = {"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2}


@pytest.fixture
def fresh():
    """A platform of its own per test: these tests leave streams failed or the device reset."""
    yield from embedded_module(CONFIG)


@pytest.fixture
def short_waits(fresh):
    """Host waits bounded by 10 s instead of the suite's 60 s: before the fixes below, the waits ran
    out that bound (hipErrorLaunchTimeOut) instead of raising the failed stream's error."""
    rt = hsa.runtime()
    before, rt.wait_timeout_s = rt.wait_timeout_s, 10.0
    yield fresh
    rt.wait_timeout_s = before


def _fault_behind_gate(mod, stream, d):
    """A gate, then a kernel that faults: the stream fails only once the test opens the gate."""
    gate = Gate(mod, limit_s=60.0)
    gate.launch(stream)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "overrun"), 1, 1, 1, 1, 1, 1, 0, stream, [d, 4])
    return gate


# -- a stream that waits on a failed stream -------------------------------------------------------------
@pytest.mark.parametrize("destroy_failed_first", [False, True])
def test_a_stream_waiting_on_an_event_of_a_failed_stream_raises_its_error(short_waits, destroy_failed_first):
    """hipStreamWaitEvent on an event recorded behind a faulting kernel: the event never completes,
    so a sync of the waiting stream raised hipErrorLaunchTimeOut after the whole wait bound (600 s by
    default). It raises the failed stream's hipErrorIllegalAddress, also once that stream is destroyed."""
    mod = short_waits
    d = hip.hipMalloc(4096)
    bad, waiter = hip.hipStreamCreate(), hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    gate = _fault_behind_gate(mod, bad, d)
    ev = hip.hipEventCreate()
    hip.hipEventRecord(ev, bad)
    hip.hipStreamWaitEvent(waiter, ev, 0)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), 1, 1, 1, 1, 1, 1, 0, waiter, [d, 4])
    gate.open()
    with pytest.raises(hip.HipError) as failed:
        hip.hipStreamSynchronize(bad)
    assert failed.value.error == hip.hipError_t.hipErrorIllegalAddress
    if destroy_failed_first:
        hip.hipStreamDestroy(bad)
    with pytest.raises(hip.HipError) as exc:
        hip.hipStreamSynchronize(waiter)
    assert exc.value.error == hip.hipError_t.hipErrorIllegalAddress, exc.value
    assert "waits on another stream that failed" in str(exc.value)
    with pytest.raises(hip.HipError) as again:
        hip.hipStreamQuery(waiter)
    assert again.value.error == hip.hipError_t.hipErrorIllegalAddress
    # a stream that did not wait is unaffected
    other = hip.hipStreamCreate()
    hip.hipMemsetAsync(d, 0, 16, other)
    hip.hipStreamSynchronize(other)


def test_the_null_stream_behind_a_failing_blocking_stream_raises_its_error(short_waits):
    """The legacy null stream waits for the blocking streams: work queued on it behind a blocking
    stream that then faults never runs. An event sync on it raised hipErrorLaunchTimeOut after the
    wait bound; it raises hipErrorIllegalAddress."""
    mod = short_waits
    d = hip.hipMalloc(4096)
    pinned = hip.hipHostMalloc(4096)
    blocking = hip.hipStreamCreate()
    gate = _fault_behind_gate(mod, blocking, d)
    hip.hipMemcpyAsync(pinned, d, 4096, hip.hipMemcpyDeviceToHost, None)   # waits for `blocking`
    ev = hip.hipEventCreate()
    hip.hipEventRecord(ev, None)
    gate.open()
    with pytest.raises(hip.HipError) as exc:
        hip.hipEventSynchronize(ev)
    assert exc.value.error == hip.hipError_t.hipErrorIllegalAddress, exc.value


# -- handles kept past hipDeviceReset --------------------------------------------------------------------
def test_a_module_and_an_event_kept_past_hipdevicereset_are_refused_at_the_call(fresh):
    """A function of a module loaded before hipDeviceReset was launched: its kernel object names a
    slot of the old code-object table, so the packet failed on the device and took the new null
    stream down with it (every later null-stream call raised hipErrorInvalidImage). An event created
    before the reset did the same with its signal (hipErrorLaunchFailure). Both are refused at the
    call now, and the null stream keeps working."""
    old_mod = hip.hipModuleLoad(kernel_file("basic.py"))
    old_inc = hip.hipModuleGetFunction(old_mod, "inc")
    old_ev = hip.hipEventCreate()
    hip.hipDeviceReset()
    d = hip.hipMalloc(4096)
    hip.hipMemset(d, 0, 4096)
    with pytest.raises(hip.HipError) as exc:
        hip.hipModuleLaunchKernel(old_inc, 1, 1, 1, 1, 1, 1, 0, None, [d, 4])
    assert exc.value.error == hip.hipError_t.hipErrorInvalidHandle
    with pytest.raises(hip.HipError) as exc:
        hip.hipModuleGetFunction(old_mod, "inc")
    assert exc.value.error == hip.hipError_t.hipErrorInvalidHandle
    with pytest.raises(hip.HipError) as exc:
        hip.hipEventRecord(old_ev, None)
    assert exc.value.error == hip.hipError_t.hipErrorContextIsDestroyed
    hip.hipEventDestroy(old_ev)         # cleanup code may still destroy it
    with pytest.raises(hip.HipError):
        hip.hipModuleUnload(old_mod)    # it went with the reset: nothing of the new runtime is freed
    mod = hip.hipModuleLoad(kernel_file("basic.py"))
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), 1, 1, 1, 1, 1, 1, 0, None, [d, 4])
    out = np.empty(4, np.int32)
    hip.hipMemcpy(out, d, 16, hip.hipMemcpyDeviceToHost)
    assert out.tolist() == [1, 1, 1, 1]
    hip.hipModuleUnload(mod)


# -- hipStreamDestroy(hipStreamPerThread) ----------------------------------------------------------------
def test_hipstreamperthread_cannot_be_destroyed(fresh):
    """CLR returns hipErrorInvalidResourceHandle for hipStreamPerThread (as for hipStreamLegacy);
    hdemu destroyed the calling thread's per-thread stream and silently made a new one."""
    d = hip.hipMalloc(4096)
    hip.hipMemsetAsync(d, 0, 16, hip.hipStreamPerThread)
    with pytest.raises(hip.HipError) as exc:
        hip.hipStreamDestroy(hip.hipStreamPerThread)
    assert exc.value.error == hip.hipError_t.hipErrorInvalidHandle
    with pytest.raises(hip.HipError) as exc:
        hip.hipStreamDestroy(hip.hipStreamLegacy)
    assert exc.value.error == hip.hipError_t.hipErrorInvalidHandle
    hip.hipStreamSynchronize(hip.hipStreamPerThread)


# -- a stream destroyed while the null stream orders itself after it --------------------------------------
def test_null_stream_ordering_after_a_stream_destroyed_meanwhile(fresh):
    """Threads that create, use and destroy blocking streams while others launch on the null stream:
    the null stream's launch looks the blocking streams up, then waits for each one's order point. A
    stream destroyed between the two had its point's signal released, and the launch raised
    AttributeError ('NoneType' object has no attribute 'handle'), seen with 16 threads. Here the
    destroy lands deterministically in that window: the point is released after the null stream's
    first wait recorded it (the same state hipStreamDestroy leaves), then the null stream orders
    itself after it again."""
    mod = fresh
    gate = Gate(mod, limit_s=60.0)
    s = hip.hipStreamCreate()
    gate.launch(s)
    d = hip.hipMalloc(4096)
    inc = hip.hipModuleGetFunction(mod, "inc")
    hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, None, [d, 4])     # records s's order point
    s.point.release()                   # what hipStreamDestroy does once s is synchronised
    hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, None, [d, 4])     # orders after s again
    gate.open()
    hip.hipStreamDestroy(s)
    hip.hipDeviceSynchronize()
    out = np.empty(4, np.int32)
    hip.hipMemcpy(out, d, 16, hip.hipMemcpyDeviceToHost)
    assert out.tolist() == [2, 2, 2, 2]
