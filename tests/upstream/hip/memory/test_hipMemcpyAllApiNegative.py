"""All eight 1-D copy functions (hipMemcpy[Async], hipMemcpyHtoD / DtoH / DtoD [Async]): null source or
destination pointers fail, a copy onto itself succeeds, a zero-byte copy changes nothing, and a copy of
half of a buffer copies that half. Buffers are 16 Ki floats (upstream: 1 Mi)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import Arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyAllApiNegative.cc"

NUM_ELM = 16 * 1024
NBYTES = NUM_ELM * 4


@pytest.fixture
def arrays(platform):
    hip.hipSetDevice(0)
    m = Arrays(np.float32, NUM_ELM)
    stream = hip.hipStreamCreate()
    yield m, stream
    hip.hipStreamSynchronize(stream)
    m.free()
    hip.hipStreamDestroy(stream)


def _copies(dst_h, dst_d, src_h, src_d, stream):
    """The eight copies of one SECTION, each with the pointers it takes."""
    n = NBYTES
    return [
        ("hipMemcpy", lambda: hip.hipMemcpy(dst_h, src_d, n, hip.hipMemcpyDefault)),
        ("hipMemcpyAsync", lambda: hip.hipMemcpyAsync(dst_d, src_h, n, hip.hipMemcpyDefault, stream)),
        ("hipMemcpyHtoD", lambda: hip.hipMemcpyHtoD(dst_d, src_h, n)),
        ("hipMemcpyHtoDAsync", lambda: hip.hipMemcpyHtoDAsync(dst_d, src_h, n, stream)),
        ("hipMemcpyDtoH", lambda: hip.hipMemcpyDtoH(dst_h, src_d, n)),
        ("hipMemcpyDtoHAsync", lambda: hip.hipMemcpyDtoHAsync(dst_h, src_d, n, stream)),
        ("hipMemcpyDtoD", lambda: hip.hipMemcpyDtoD(dst_d, src_d, n)),
        ("hipMemcpyDtoDAsync", lambda: hip.hipMemcpyDtoDAsync(dst_d, src_d, n, stream)),
    ]


@pytest.mark.parametrize("section", ["Pass nullptr to destination pointer for all Memcpy APIs",
                                     "Passing nullptr to source pointer",
                                     "Passing nullptr to both source and dest pointer",
                                     "Passing same pointers"])
def test_Unit_hipMemcpy_Negative(arrays, section):
    m, stream = arrays
    a_h, a_d = m.A_h.ptr, m.A_d
    if section == "Passing same pointers":
        half = (NUM_ELM // 2) * 4
        hip.hipMemcpy(a_d, a_d, half, hip.hipMemcpyDefault)
        hip.hipMemcpy(a_h, a_h, half, hip.hipMemcpyDefault)
        hip.hipMemcpyAsync(a_d, a_d, half, hip.hipMemcpyDefault, stream)
        hip.hipMemcpyAsync(a_h, a_h, half, hip.hipMemcpyDefault, stream)
        hip.hipMemcpyDtoD(a_d, a_d, NBYTES)
        hip.hipMemcpyDtoDAsync(a_d, a_d, NBYTES, stream)
        return
    null_dst = section != "Passing nullptr to source pointer"
    null_src = section != "Pass nullptr to destination pointer for all Memcpy APIs"
    # the destination of hipMemcpy with a null source is A_h, of hipMemcpyAsync A_d (as upstream)
    copies = _copies(None if null_dst else a_h, None if null_dst else a_d,
                     None if null_src else a_h, None if null_src else a_d, stream)
    accepted = []
    for name, call in copies:
        try:
            call()
            accepted.append(name)
        except hip.HipError as exc:
            assert exc.error != hip.hipError_t.hipSuccess
    assert accepted == [], f"{accepted} succeeded with a null pointer"


SIZE0 = ["hipMemcpyHtoD API null size check", "hipMemcpyHtoDAsync API null size check",
         "hipMemcpy API null size check", "hipMemcpyAsync API null size check",
         "hipMemcpyDtoH API null size check", "hipMemcpyDtoHAsync API null size check",
         "hipMemcpyDtoD API null size check", "hipMemcpyDtoDAsync API null size check"]


@pytest.mark.parametrize("section", SIZE0)
def test_Unit_hipMemcpy_NullCheck(arrays, section):
    m, stream = arrays
    a_d, c_d = m.A_d, m.C_d
    a_h, b_h, c_h = m.A_h, m.B_h, m.C_h
    hip.hipMemcpy(a_d, c_h.ptr, NBYTES, hip.hipMemcpyHostToDevice)
    api = section.split()[0]
    expected, read_from = c_h.a, a_d
    if api == "hipMemcpyHtoD":
        hip.hipMemcpyHtoD(a_d, a_h.ptr, 0)
    elif api == "hipMemcpyHtoDAsync":
        hip.hipMemcpyHtoDAsync(a_d, a_h.ptr, 0, stream)
        hip.hipStreamSynchronize(stream)
    elif api == "hipMemcpy":
        hip.hipMemcpy(a_d, b_h.ptr, 0, hip.hipMemcpyDefault)
    elif api == "hipMemcpyAsync":
        hip.hipMemcpyAsync(a_d, b_h.ptr, 0, hip.hipMemcpyDefault, stream)
    elif api == "hipMemcpyDtoH":
        hip.hipMemcpyDtoH(c_h.ptr, a_d, 0)
    elif api == "hipMemcpyDtoHAsync":
        hip.hipMemcpyDtoHAsync(c_h.ptr, a_d, 0, stream)
    else:
        hip.hipMemcpy(c_d, a_h.ptr, NBYTES, hip.hipMemcpyHostToDevice)
        if api == "hipMemcpyDtoD":
            hip.hipMemcpyDtoD(c_d, a_d, 0)
        else:
            hip.hipMemcpyDtoDAsync(c_d, a_d, 0, stream)
        expected, read_from = a_h.a, c_d
    hip.hipMemcpy(b_h.ptr, read_from, NBYTES, hip.hipMemcpyDeviceToHost)
    assert np.array_equal(b_h.a, expected)


HALF = ["hipMemcpyHtoD half memory copy", "hipMemcpyHtoDAsync half memory copy",
        "hipMemcpyDtoH half memory copy", "hipMemcpyDtoHAsync half memory copy",
        "hipMemcpyDtoD half memory copy", "hipMemcpyDtoDAsync half memory copy",
        "hipMemcpy half memory copy", "hipMemcpyAsync half memory copy"]


@pytest.mark.parametrize("section", HALF)
def test_Unit_hipMemcpy_HalfMemCopy(arrays, section):
    m, stream = arrays
    a_d, b_d = m.A_d, m.B_d
    a_h, b_h = m.A_h, m.B_h
    half = NBYTES // 2
    api = section.split()[0]
    if api == "hipMemcpyHtoD":
        hip.hipMemcpyHtoD(a_d, a_h.ptr, half)
        hip.hipMemcpy(b_h.ptr, a_d, half, hip.hipMemcpyDeviceToHost)
    elif api == "hipMemcpyHtoDAsync":
        hip.hipMemcpyHtoDAsync(a_d, a_h.ptr, half, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipMemcpy(b_h.ptr, a_d, half, hip.hipMemcpyDeviceToHost)
    elif api == "hipMemcpyDtoH":
        hip.hipMemcpyHtoD(a_d, a_h.ptr, NBYTES)
        hip.hipMemcpyDtoH(b_h.ptr, a_d, half)
    elif api == "hipMemcpyDtoHAsync":
        hip.hipMemcpyHtoD(a_d, a_h.ptr, NBYTES)
        hip.hipMemcpyDtoHAsync(b_h.ptr, a_d, half, stream)
        hip.hipStreamSynchronize(stream)
    elif api in ("hipMemcpyDtoD", "hipMemcpyDtoDAsync"):
        hip.hipMemcpyHtoD(a_d, a_h.ptr, half)
        if api == "hipMemcpyDtoD":
            hip.hipMemcpyDtoD(b_d, a_d, half)
        else:
            hip.hipMemcpyDtoDAsync(b_d, a_d, half, stream)
        hip.hipMemcpy(b_h.ptr, b_d, half, hip.hipMemcpyDeviceToHost)
    elif api == "hipMemcpy":
        hip.hipMemcpy(a_d, a_h.ptr, NBYTES, hip.hipMemcpyDefault)
        hip.hipMemcpy(b_h.ptr, a_d, half, hip.hipMemcpyDeviceToHost)
    else:
        hip.hipMemcpy(a_d, a_h.ptr, NBYTES, hip.hipMemcpyDefault)
        hip.hipMemcpyAsync(b_h.ptr, a_d, half, hip.hipMemcpyDeviceToHost, stream)
        hip.hipDeviceSynchronize()
    assert np.array_equal(b_h.a[:NUM_ELM // 2], a_h.a[:NUM_ELM // 2])
