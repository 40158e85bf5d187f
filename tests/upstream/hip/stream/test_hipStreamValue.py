"""hipStreamWriteValue32/64 and hipStreamWaitValue32/64: writes to host, device, mapped host and signal
memory at several offsets; waits of every condition, with and without a mask, that hold the stream
until the host releases them (Blocking) or let it through at once (NonBlocking); a null pointer, a
handle that was never a stream and a bad flag; a kernel stream waiting for a copy stream's write.

Memory as hdemu has it: upstream's hipHostRegister'ed ``new[]`` arrays (HostPtr, and DevicePtrToHost
through hipHostGetDevicePointer) are pinned memory from hipHostMalloc (hdemu has no hipHostRegister);
its hipExtMallocWithFlags(8, hipMallocSignalMemory) (Signal) is the same call (fine-grained system
memory, as CLR's). The host reads and writes pinned memory through ``hip.host_array``."""
import contextlib
from typing import NamedTuple

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamValue.cc"

OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady

WRITE_FLAG = 0
#: testValue<uint32_t> / testValue<uint64_t>
TEST_VALUE = {4: 0x70F0F0FF, 8: 0x7FFF0000FFFF0000}
DATA_INIT = 0x1234
DATA_UPDATE = 0x4321
ARRAY_SIZE = 1024
DTYPE = {4: np.uint32, 8: np.uint64}
WIDTH_IDS = {4: "uint32_t", 8: "uint64_t"}

GTE, EQ, AND, NOR = (hip.hipStreamWaitValueGte, hip.hipStreamWaitValueEq, hip.hipStreamWaitValueAnd,
                     hip.hipStreamWaitValueNor)


def _wait_func(width: int):
    return hip.hipStreamWaitValue32 if width == 4 else hip.hipStreamWaitValue64


def _write_func(width: int):
    return hip.hipStreamWriteValue32 if width == 4 else hip.hipStreamWriteValue64


def _all_ones(width: int) -> int:
    return (1 << (8 * width)) - 1


class Wait(NamedTuple):
    """TEST_WAIT<UIntT>: compareOp, mask (None: ~0, the default), waitValue, signalValueFail, signalValuePass."""
    compare_op: int
    mask: int | None
    wait_value: int
    fail: int
    pass_: int


def _tw(op, *vals) -> Wait:
    """TEST_WAIT's two constructors: (op, wait, fail, pass) or (op, mask, wait, fail, pass)."""
    return Wait(op, None, *vals) if len(vals) == 3 else Wait(op, *vals)


WAIT32 = {
    "Mask_Gte": _tw(GTE, 0xF, 0x4, 0x3, 0x6),
    "Mask_Eq_1": _tw(EQ, 0x0000FFFF, 0x00000001, 0x0FFF0000, 0x0FFF0001),     # mask will ignore few MSB bits
    "Mask_Eq_2": _tw(EQ, 0xFF, 0x11, 0x25, 0x11),
    "Mask_And": _tw(AND, 0xFF, 0xF4A, 0xF35, 0x02),                           # mask will discard bits 8 to 11
    "NoMask_Eq": _tw(EQ, 0x7FFFFFFF, 0x7FFF0000, 0x7FFFFFFF),
    "NoMask_Gte": _tw(GTE, 0x7FFF0001, 0x7FFF0000, 0x7FFF0010),
    "NoMask_And": _tw(AND, 0x70F0F0F0, 0x0F0F0F0F, 0x1F0F0F0F),
    "NoMask_Nor": _tw(NOR, 0x7AAAAAAA, 0x85555555, 0x9AAAAAAA),
}

WAIT64 = {
    "Mask_Gte_1": _tw(GTE, 0x0000FFFFFFFFFFFF, 0x000000007FFF0001, 0x7FFF00007FFF0000, 0x000000007FFF0001),
    "Mask_Gte_2": _tw(GTE, 0xF, 0x4, 0x3, 0x6),
    "Mask_Eq_1": _tw(EQ, 0x0000FFFFFFFFFFFF, 0x000000000FFF0001, 0x7FFF00000FFF0000, 0x7F0000000FFF0001),
    "Mask_Eq_2": _tw(EQ, 0xFF, 0x11, 0x25, 0x11),
    "Mask_And": _tw(AND, 0xFF, 0xF4A, 0xF35, 0x02),
    "NoMask_Gte": _tw(GTE, 0x7FFFFFFFFFFF0001, 0x7FFFFFFFFFFF0000, 0x7FFFFFFFFFFF0001),
    "NoMask_Eq": _tw(EQ, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF0FFF0000, 0x7FFFFFFFFFFFFFFF),
    "NoMask_And": _tw(AND, 0x70F0F0F0F0F0F0F0, 0x0F0F0F0F0F0F0F0F, 0x1F0F0F0F0F0F0F0F),
    "NoMask_Nor": _tw(NOR, 0x4724724747247247, 0xBDDBDDBDBDDBDDBD, 0xBDDBDDBDBDDBDDB3),
}


def _stream_wait_value_supported() -> bool:
    """streamWaitValueSupported: some device reports hipDeviceAttributeCanUseStreamWaitValue 1."""
    attr = hip.hipDeviceAttribute_t.hipDeviceAttributeCanUseStreamWaitValue
    try:
        for d in range(hip.hipGetDeviceCount()):
            hip.hipSetDevice(d)
            if hip.hipDeviceGetAttribute(attr, d) == 1:
                return True
        return False
    finally:
        hip.hipSetDevice(0)


def _require_support() -> None:
    if not _stream_wait_value_supported():
        pytest.skip("hipStreamWaitValue not supported on this device.")


class ValuePtr:
    """allocMem<type, UIntT>() and the TestPtr it returns: ``ptr`` is what hipStream[Wait|Write]Value get,
    get_value / set_value reach the memory directly (set_value on device memory is a
    hipStreamWriteValue on a non-blocking stream: upstream's "hipMemcpy causes deadlock")."""

    def __init__(self, kind: str, width: int):
        self.kind, self.width, self.dt = kind, width, DTYPE[width]
        if kind == "Signal":
            assert width == 8, "signal memory should only be used with 64bit memory"
            self.alloc = hip.hipExtMallocWithFlags(8, hip.hipMallocSignalMemory)
            self.host = hip.host_array(self.alloc, self.dt, 1)
            self.host[0] = 0
            self.ptr = self.alloc
        elif kind in ("HostPtr", "DevicePtrToHost"):
            self.alloc = hip.hipHostMalloc(width * ARRAY_SIZE)     # hipHostRegister of a new[] array
            self.host = hip.host_array(self.alloc, self.dt, ARRAY_SIZE)
            self.host[:] = 0
            self.ptr = self.alloc if kind == "HostPtr" else hip.hipHostGetDevicePointer(self.alloc, 0)
        elif kind == "DevicePtr":
            self.alloc = self.ptr = hip.hipMalloc(width * ARRAY_SIZE)
            self.host = None
            hip.hipMemset(self.ptr, 0, width * ARRAY_SIZE)
        else:
            raise ValueError(kind)
        hip.hipDeviceSynchronize()      # the memory initialisation is complete before it is used

    def get_value(self, offset: int = 0) -> int:
        if self.host is not None:
            return int(self.host[offset])
        out = np.zeros(1, dtype=self.dt)
        hip.hipMemcpy(out, self.ptr + offset * self.width, self.width, hip.hipMemcpyDeviceToHost)
        return int(out[0])

    def set_value(self, value: int, offset: int = 0) -> None:
        if self.host is not None:
            self.host[offset] = value
            return
        s = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
        try:
            _write_func(self.width)(s, self.ptr + offset * self.width, value, WRITE_FLAG)
            hip.hipStreamSynchronize(s)
        finally:
            hip.hipStreamDestroy(s)

    def free(self) -> None:
        (hip.hipFree if self.kind in ("DevicePtr", "Signal") else hip.hipHostFree)(self.alloc)


def _offsets(kind: str):
    """get_offsets<type>(): signal memory holds one value."""
    return (0,) if kind == "Signal" else (0, 1, 2, 3, 31, 1023)


def _cases(kinds):
    return [pytest.param(k, o, id=f"{k}-{o}") for k in kinds for o in _offsets(k)]


PTR_TYPES = ("HostPtr", "DevicePtr", "DevicePtrToHost")
#: HT_AMD: the 64-bit cases have a Signal section too
CASES32 = _cases(PTR_TYPES)
CASES64 = _cases(PTR_TYPES + ("Signal",))
WRITE_CASES = ([pytest.param(4, k, o, id=f"uint32_t-{k}-{o}") for k in PTR_TYPES for o in _offsets(k)]
               + [pytest.param(8, k, o, id=f"uint64_t-{k}-{o}") for k in PTR_TYPES + ("Signal",)
                  for o in _offsets(k)])
WIDTHS = [pytest.param(4, id="uint32_t"), pytest.param(8, id="uint64_t")]


@pytest.mark.parametrize(("width", "ptr_type", "offset"), WRITE_CASES)
def test_Unit_hipStreamValue_Write(mod, width, ptr_type, offset):
    _require_support()
    write_value = TEST_VALUE[width]
    stream = hip.hipStreamCreate()
    ptr = ValuePtr(ptr_type, width)
    try:
        target = ptr.ptr + offset * width
        _write_func(width)(stream, target, write_value, WRITE_FLAG)
        hip.hipStreamSynchronize(stream)
        assert ptr.get_value(offset) == write_value
    finally:
        ptr.free()
        hip.hipStreamDestroy(stream)


def _test_wait(width: int, ptr_type: str, blocking: bool, tc: Wait, offset: int) -> None:
    """testWait<TestParams<UIntT, ptrType>, isBlocking>(tc) with syncAndCheckData. Whatever fails, the
    wait is released (the pass value is stored) before anything is freed."""
    _require_support()
    with contextlib.ExitStack() as cleanup:
        stream = hip.hipStreamCreate()
        cleanup.callback(hip.hipStreamDestroy, stream)
        data_alloc = hip.hipHostMalloc(2 * width)        # two hipHostRegister'ed UIntT
        cleanup.callback(hip.hipHostFree, data_alloc)
        data = hip.host_array(data_alloc, DTYPE[width], 2)
        data[:] = DATA_INIT
        events = [hip.hipEventCreate(), hip.hipEventCreate()]
        for ev in events:
            cleanup.callback(hip.hipEventDestroy, ev)
        wait_ptr = ValuePtr(ptr_type, width)
        cleanup.callback(wait_ptr.free)
        target = wait_ptr.ptr + offset * width
        wait_ptr.set_value(tc.fail if blocking else tc.pass_, offset)
        # from here on a wait may be enqueued: release it on the way out (runs before the frees above)
        cleanup.callback(hip.hipStreamSynchronize, stream)
        cleanup.callback(wait_ptr.set_value, tc.pass_, offset)

        _write_func(width)(stream, data_alloc, DATA_UPDATE, WRITE_FLAG)
        hip.hipEventRecord(events[0], stream)
        if tc.mask is not None and tc.mask != _all_ones(width):
            _wait_func(width)(stream, target, tc.wait_value, tc.compare_op, tc.mask)
        else:
            _wait_func(width)(stream, target, tc.wait_value, tc.compare_op)
        _write_func(width)(stream, data_alloc + width, DATA_UPDATE, WRITE_FLAG)
        hip.hipEventRecord(events[1], stream)

        # syncAndCheckData: the first part of host memory is updated
        hip.hipEventSynchronize(events[0])
        assert data[0] == DATA_UPDATE
        if blocking:
            # the second part is not updated yet; then the value releases the stream
            assert hip.hipEventQuery(events[1]) == NOT_READY
            assert data[1] == DATA_INIT
            wait_ptr.set_value(tc.pass_, offset)
        hip.hipStreamSynchronize(stream)
        assert hip.hipEventQuery(events[1]) == OK
        assert data[1] == DATA_UPDATE


# DEFINE_STREAM_WAIT_VAL_TEST_CASES_INT32(suffix, test_t): a Blocking and a NonBlocking TEST_CASE per suffix,
# SECTIONs HostPtr, DevicePtr, DevicePtrToHost (each at every offset of GENERATE)

@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_Mask_Gte(mod, section, offset):
    _test_wait(4, section, True, WAIT32["Mask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_Mask_Gte(mod, section, offset):
    _test_wait(4, section, False, WAIT32["Mask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_Mask_Eq_1(mod, section, offset):
    _test_wait(4, section, True, WAIT32["Mask_Eq_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_Mask_Eq_1(mod, section, offset):
    _test_wait(4, section, False, WAIT32["Mask_Eq_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_Mask_Eq_2(mod, section, offset):
    _test_wait(4, section, True, WAIT32["Mask_Eq_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_Mask_Eq_2(mod, section, offset):
    _test_wait(4, section, False, WAIT32["Mask_Eq_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_Mask_And(mod, section, offset):
    _test_wait(4, section, True, WAIT32["Mask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_Mask_And(mod, section, offset):
    _test_wait(4, section, False, WAIT32["Mask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_NoMask_Eq(mod, section, offset):
    _test_wait(4, section, True, WAIT32["NoMask_Eq"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_NoMask_Eq(mod, section, offset):
    _test_wait(4, section, False, WAIT32["NoMask_Eq"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_NoMask_Gte(mod, section, offset):
    _test_wait(4, section, True, WAIT32["NoMask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_NoMask_Gte(mod, section, offset):
    _test_wait(4, section, False, WAIT32["NoMask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_NoMask_And(mod, section, offset):
    _test_wait(4, section, True, WAIT32["NoMask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_NoMask_And(mod, section, offset):
    _test_wait(4, section, False, WAIT32["NoMask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_Blocking_NoMask_Nor(mod, section, offset):
    _test_wait(4, section, True, WAIT32["NoMask_Nor"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES32)
def test_Unit_hipStreamValue_Wait32_NonBlocking_NoMask_Nor(mod, section, offset):
    _test_wait(4, section, False, WAIT32["NoMask_Nor"], offset)


# DEFINE_STREAM_WAIT_VAL_TEST_CASES_INT64(suffix, test_t): as above, and (HT_AMD) a Signal SECTION

@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_Mask_Gte_1(mod, section, offset):
    _test_wait(8, section, True, WAIT64["Mask_Gte_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_Mask_Gte_1(mod, section, offset):
    _test_wait(8, section, False, WAIT64["Mask_Gte_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_Mask_Gte_2(mod, section, offset):
    _test_wait(8, section, True, WAIT64["Mask_Gte_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_Mask_Gte_2(mod, section, offset):
    _test_wait(8, section, False, WAIT64["Mask_Gte_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_Mask_Eq_1(mod, section, offset):
    _test_wait(8, section, True, WAIT64["Mask_Eq_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_Mask_Eq_1(mod, section, offset):
    _test_wait(8, section, False, WAIT64["Mask_Eq_1"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_Mask_Eq_2(mod, section, offset):
    _test_wait(8, section, True, WAIT64["Mask_Eq_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_Mask_Eq_2(mod, section, offset):
    _test_wait(8, section, False, WAIT64["Mask_Eq_2"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_Mask_And(mod, section, offset):
    _test_wait(8, section, True, WAIT64["Mask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_Mask_And(mod, section, offset):
    _test_wait(8, section, False, WAIT64["Mask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_NoMask_Gte(mod, section, offset):
    _test_wait(8, section, True, WAIT64["NoMask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_NoMask_Gte(mod, section, offset):
    _test_wait(8, section, False, WAIT64["NoMask_Gte"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_NoMask_Eq(mod, section, offset):
    _test_wait(8, section, True, WAIT64["NoMask_Eq"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_NoMask_Eq(mod, section, offset):
    _test_wait(8, section, False, WAIT64["NoMask_Eq"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_NoMask_And(mod, section, offset):
    _test_wait(8, section, True, WAIT64["NoMask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_NoMask_And(mod, section, offset):
    _test_wait(8, section, False, WAIT64["NoMask_And"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_Blocking_NoMask_Nor(mod, section, offset):
    _test_wait(8, section, True, WAIT64["NoMask_Nor"], offset)


@pytest.mark.parametrize(("section", "offset"), CASES64)
def test_Unit_hipStreamValue_Wait64_NonBlocking_NoMask_Nor(mod, section, offset):
    _test_wait(8, section, False, WAIT64["NoMask_Nor"], offset)


# Negative tests

@pytest.mark.parametrize("section", ["WriteValue32", "WriteValue64", "WaitValue32", "WaitValue64"])
def test_Unit_hipStreamValue_Negative_InvalidMemory(mod, section):
    # upstream's fourth SECTION repeats the third's title ("... for hipStreamWaitValue32") but calls
    # hipStreamWaitValue64
    _require_support()
    stream = hip.hipStreamCreate()
    assert stream is not None
    try:
        with pytest.raises(hip.HipError) as ei:
            if section == "WriteValue32":
                hip.hipStreamWriteValue32(stream, 0, 0, WRITE_FLAG)
            elif section == "WriteValue64":
                hip.hipStreamWriteValue64(stream, 0, 0, WRITE_FLAG)
            elif section == "WaitValue32":
                hip.hipStreamWaitValue32(stream, 0, 0, GTE)
            else:
                hip.hipStreamWaitValue64(stream, 0, 0, GTE)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    finally:
        hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("section", ["hipStreamWriteValue", "hipStreamWaitValue"])
@pytest.mark.parametrize("width", WIDTHS)
def test_Unit_hipStreamValue_Negative_UninitializedStream(mod, width, section):
    _require_support()
    stream = 0xFFFF             # reinterpret_cast<hipStream_t>(0xFFFF)
    host_ptr = hip.hipHostMalloc(width)
    try:
        hip.host_array(host_ptr, DTYPE[width], 1)[0] = 0
        with pytest.raises(hip.HipError) as ei:
            if section == "hipStreamWriteValue":
                _write_func(width)(stream, host_ptr, 0, WRITE_FLAG)
            else:
                _wait_func(width)(stream, host_ptr, 0, GTE)
        assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed
    finally:
        hip.hipHostFree(host_ptr)


@pytest.mark.parametrize("width", WIDTHS)
def test_Unit_hipStreamValue_Negative_InvalidFlag(mod, width):
    _require_support()
    stream = hip.hipStreamCreate()
    assert stream is not None
    host_ptr = hip.hipHostMalloc(width)
    try:
        hip.host_array(host_ptr, DTYPE[width], 1)[0] = 0
        with pytest.raises(hip.HipError) as ei:
            _wait_func(width)(stream, host_ptr, 0, 0xFFFFFFFF)      # -1 as the unsigned int flags
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    finally:
        hip.hipHostFree(host_ptr)
        hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("width", WIDTHS)
def test_Unit_hipStreamWriteValue_Default(mod, width):
    _require_support()
    stream = hip.hipStreamCreate()
    assert stream is not None
    host_ptr = hip.hipHostMalloc(width)
    try:
        hip.host_array(host_ptr, DTYPE[width], 1)[0] = 0
        _write_func(width)(stream, host_ptr, 0, WRITE_FLAG)
    finally:
        hip.hipHostFree(host_ptr)       # (synchronizes the device: the write has landed)
        hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("size", [100, 500, 1000])
@pytest.mark.parametrize("width", WIDTHS)
def test_Unit_hipStreamWaitValue_Default(mod, width, size):
    _require_support()
    a = np.arange(1, size + 1, dtype=np.uint32)
    b = a.copy()
    c = a + b
    d_a, d_b, d_c = (hip.hipMalloc(4 * size) for _ in range(3))
    # one stream copies, the other runs the kernel once the copy stream's write says the data is there
    data_copy_stream, kernel_exec_stream = hip.hipStreamCreate(), hip.hipStreamCreate()
    assert data_copy_stream is not None and kernel_exec_stream is not None
    host_ptr = hip.hipHostMalloc(width)
    flag = hip.host_array(host_ptr, DTYPE[width], 1)
    flag[0] = 0
    try:
        hip.hipMemcpyAsync(d_a, a, 4 * size, hip.hipMemcpyHostToDevice, data_copy_stream)
        hip.hipMemcpyAsync(d_b, b, 4 * size, hip.hipMemcpyHostToDevice, data_copy_stream)
        _write_func(width)(data_copy_stream, host_ptr, 1, WRITE_FLAG)

        _wait_func(width)(kernel_exec_stream, host_ptr, 1, GTE)
        # add<uint32_t><<<1, size, 0, kernelExecStream>>>: c[i] = a[i] + b[i]
        launch(mod, "memset_vector_add_u32", [d_a, d_b, d_c, size], kernel_exec_stream, n=size, block=size)
        hip.hipGetLastError()

        hip.hipStreamSynchronize(data_copy_stream)
        hip.hipStreamSynchronize(kernel_exec_stream)
        hip.hipMemcpyAsync(a, d_c, 4 * size, hip.hipMemcpyDeviceToHost, data_copy_stream)
        hip.hipDeviceSynchronize()
    finally:
        flag[0] = 1                     # a wait the write never released ends here
        hip.hipDeviceSynchronize()
        for p in (d_a, d_b, d_c):
            hip.hipFree(p)
        hip.hipStreamDestroy(data_copy_stream)
        hip.hipStreamDestroy(kernel_exec_stream)
        hip.hipHostFree(host_ptr)
    assert np.array_equal(a, c)
