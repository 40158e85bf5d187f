"""hipStreamAddCallback: the stream and user data a callback receives, bad callbacks and flags, and a
callback that checks the result of a copy, kernel, copy sequence on the null stream and on a
non-blocking stream. Upstream's callbacks assert inside the callback; the port records what they saw and
the test thread asserts it."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamAddCallback.cc"

NSIZE = 64 * 1024                      # upstream: 4 Mi floats
PTR_0XFF = 0xFFFFFFFF
OK = hip.hipError_t.hipSuccess


def _noop_callback(stream, status, user_data):
    pass


@pytest.mark.parametrize("section", ["userData pointer value validation", "stream value validation"])
def test_Unit_hipStreamAddCallback_ParamTst_Positive(mod, section):
    s = hip.hipStreamCreate()
    seen = {}

    def callback_chk_usrdata_ptr(stream, status, user_data):
        seen.update(stream_ok=stream == s, status=status, passed=user_data == PTR_0XFF, done=True)

    def callback_chk_stream_value(stream, status, user_data):
        seen.update(user_none=user_data is None, status=status, passed=stream == s, done=True)

    if section == "userData pointer value validation":
        hip.hipStreamAddCallback(s, callback_chk_usrdata_ptr, PTR_0XFF, 0)
        wait_until(lambda: seen.get("done"), 30, "the callback")
        assert seen["stream_ok"]
    else:
        hip.hipStreamAddCallback(s, callback_chk_stream_value, None, 0)
        wait_until(lambda: seen.get("done"), 30, "the callback")
        assert seen["user_none"]
    assert seen["status"] == OK
    assert seen["passed"]
    hip.hipStreamDestroy(s)


@pytest.mark.parametrize("section", ["callback is nullptr for non-default stream",
                                     "callback is nullptr for default stream",
                                     "flag is nonzero for non-default stream",
                                     "flag is nonzero for default stream"])
def test_Unit_hipStreamAddCallback_ParamTst_Negative(mod, section):
    s = hip.hipStreamCreate()
    stream = s if "non-default" in section else None
    callback = None if "nullptr" in section else _noop_callback
    flags = 10 if "nonzero" in section else 0
    with pytest.raises(hip.HipError):           # REQUIRE_FALSE(hipSuccess == ...)
        hip.hipStreamAddCallback(stream, callback, None, flags)
    hip.hipStreamDestroy(s)


def _stream_callback_functionality(mod, is_default: bool) -> bool:
    """testStreamCallbackFunctionality: A_h -> A_d, vector_square, C_d -> C_h, then the callback checks
    C_h == A_h * A_h; the test waits for the callback."""
    nbytes = NSIZE * 4
    a_h = (np.float32(1.618) + np.arange(NSIZE, dtype=np.float32)).astype(np.float32)
    c_h = np.zeros(NSIZE, dtype=np.float32)
    a_d, c_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    seen = {"done": False}

    def callback(stream, status, user_data):
        seen["status"] = status
        seen["user_none"] = user_data is None
        seen["passed"] = bool(np.array_equal(c_h, a_h * a_h))
        seen["done"] = True

    s = None if is_default else hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, s)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), 512, 1, 1, 256, 1, 1, 0, s,
                              [a_d, c_d, NSIZE])
    hip.hipGetLastError()
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, s)
    hip.hipStreamAddCallback(s, callback, None, 0)
    wait_until(lambda: seen["done"], 30, "the callback")
    if s is not None:
        hip.hipStreamDestroy(s)
    hip.hipFree(c_d)
    hip.hipFree(a_d)
    assert seen["status"] == OK
    assert seen["user_none"]
    return seen["passed"]


def test_Unit_hipStreamAddCallback_WithDefaultStream(mod):
    assert _stream_callback_functionality(mod, True)


def test_Unit_hipStreamAddCallback_WithCreatedStream(mod):
    assert _stream_callback_functionality(mod, False)
