"""Every MIOpen call is in the platform trace (issue 12, item 5): a "library calls" slice per call,
named by the level that answered it (hip.hdemuTraceLibraryCall -> EV_LIBRARY_CALL), on the process's
own track, lying around the kernel launches it made; bad arguments to the hook are refused."""
import pytest

from hostside import hip, hsa
from hostside import miopen as mi
from hostside.platform import build_trace

pytestmark = pytest.mark.timeout(60)


def _pool(h, n_calls):
    xd = mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(xd, mi.miopenFloat, 1, 2, 8, 8)
    pd = mi.miopenCreatePoolingDescriptor()
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingAverage, 3, 3, 1, 1, 2, 2)
    yd = mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(yd, mi.miopenFloat, *mi.miopenGetPoolingForwardOutputDim(pd, xd))
    x, y = hip.hipMalloc(4 * 128), hip.hipMalloc(4 * 128)
    try:
        for _ in range(n_calls):
            mi.miopenPoolingForward(h, pd, 1.0, xd, x, 0.0, yd, y, False, None, 0)
        hip.hipDeviceSynchronize()
    finally:
        hip.hipFree(x)
        hip.hipFree(y)
        for d in (xd, yd):
            mi.miopenDestroyTensorDescriptor(d)
        mi.miopenDestroyPoolingDescriptor(pd)


def _library_slices():
    ev = build_trace(hsa.runtime().pm)["traceEvents"]
    return [e for e in ev if e.get("cat") == "library"], ev


def test_each_call_is_a_library_slice_named_by_its_level(handle):
    before, _ = _library_slices()
    _pool(handle, 3)
    after, ev = _library_slices()
    new = after[len(before):]
    levels = [e["args"]["level"] for e in new]
    assert len(new) == 3 and levels[1:] == ["invoker_cache", "invoker_cache"], levels
    assert levels[0] in ("compiled", "binary_cache_user", "program_cache", "kernel_cache")
    last = mi.statistics(handle)["last"]
    assert last["level"] == "invoker_cache"
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    assert {names[(e["pid"], e["tid"])] for e in new} == {"library calls"}
    launches = [e["ts"] for e in ev if e.get("name") == "launch" and e.get("ph") == "i"]
    s = new[-1]                                   # the warm call's launch lies inside its slice
    assert any(s["ts"] <= t <= s["ts"] + s["dur"] for t in launches)


@pytest.mark.parametrize("args", [("warm", 0, 1), ("compiled", 5, 4), ("compiled", -1, 2), ("compiled", 1.0, 2)])
def test_the_hook_refuses_bad_arguments(platform, args):
    with pytest.raises(hip.HipError) as ei:
        hip.hdemuTraceLibraryCall(*args)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
