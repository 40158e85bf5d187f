"""hipMemPoolSetAttribute / hipMemPoolGetAttribute: default values and what is set is read back (default
and created pools, every device), reuse of a freed block by the same or another stream with the reuse
attributes disabled or enabled, bad arguments, resetting the high watermarks, and the used / reserved
sizes and their watermarks through allocations and frees (hipMalloc does not count in the default pool).

Upstream's kernel_500ms, which keeps the stream busy, is a ``Gate``; its 1 s sleeps (to let the kernel
finish) wait until the stream is idle instead. The large blocks are 4 MiB (upstream 32 MiB: the
platform's devices have 32 MiB)."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.mempool_common import PAGE, MemPoolGuard, mempools_supported, pool_props
from tests.upstream.hipkit import Gate, wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemPoolSetGetAttribute.cc"
E = hip.hipError_t
A = hip.hipMemPoolAttr
NDEV = 2            # the platform's device count (tests.upstream.hipkit.CONFIG)
REUSE = [A.hipMemPoolReuseFollowEventDependencies, A.hipMemPoolReuseAllowOpportunistic,
         A.hipMemPoolReuseAllowInternalDependencies]
BIG = PAGE * PAGE // 4
UINT64_MAX = 2**64 - 1
ITERATIONS = 20
BYTES = (1 << 14) * 4


def mem_pool_set_get_attribute(pool, attr, value):
    hip.hipMemPoolSetAttribute(pool, attr, value)
    assert hip.hipMemPoolGetAttribute(pool, attr) == value


@pytest.mark.parametrize("attr", REUSE, ids=[a.name for a in REUSE])
@pytest.mark.parametrize("kind", ["dev_default", "created"])
@pytest.mark.parametrize("device", range(NDEV))
def test_Unit_hipMemPoolSetGetAttribute_Positive_Default(platform, device, kind, attr):
    mempools_supported(device)
    with MemPoolGuard(kind, device) as g:
        assert hip.hipMemPoolGetAttribute(g.mempool, attr) == 1
        mem_pool_set_get_attribute(g.mempool, attr, 0)
        hip.hipMemPoolSetAttribute(g.mempool, attr, 1)     # (restored: the default pool is shared)


@pytest.mark.parametrize("kind", ["dev_default", "created"])
@pytest.mark.parametrize("device", range(NDEV))
def test_Unit_hipMemPoolSetGetAttribute_Positive_MemBasic(platform, device, kind):
    mempools_supported(device)
    with MemPoolGuard(kind, device) as g:
        assert hip.hipMemPoolGetAttribute(g.mempool, A.hipMemPoolAttrReleaseThreshold) == 0
        mem_pool_set_get_attribute(g.mempool, A.hipMemPoolAttrReleaseThreshold, PAGE)
        mem_pool_set_get_attribute(g.mempool, A.hipMemPoolAttrReservedMemHigh, 0)
        mem_pool_set_get_attribute(g.mempool, A.hipMemPoolAttrUsedMemHigh, 0)
        hip.hipMemPoolSetAttribute(g.mempool, A.hipMemPoolAttrReleaseThreshold, 0)   # (restored)


def _idle(stream):
    wait_until(lambda: hip.hipStreamQuery(stream) == E.hipSuccess, what="stream idle")


def _reuse_case(kmod, setup, same_stream: bool, wait: bool, expect_same: bool, event: bool = False):
    """The shared body of the Opportunistic and EventDependencies sections: a big block freed on stream1
    while a kernel uses it, then (after the kernel is done if ``wait``; after an event of stream1 if
    ``event``) a block of the same size from stream1 or stream2."""
    hip.hipSetDevice(0)
    mempools_supported(0)
    s1 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    s2 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    ev = hip.hipEventCreate()
    try:
        with MemPoolGuard("created", 0) as g, Gate(kmod) as gate:
            pool = g.mempool
            mem3 = hip.hipMallocFromPoolAsync(PAGE, pool, s1)
            mem1 = hip.hipMallocFromPoolAsync(BIG, pool, s1)
            setup(pool)
            gate.launch(s1)
            hip.hipFreeAsync(mem1, s1)
            if event:
                hip.hipEventRecord(ev, s1)
                hip.hipStreamWaitEvent(s2, ev, 0)
            if wait:
                gate.open()
                _idle(s1)
            other = s1 if same_stream else s2
            mem2 = hip.hipMallocFromPoolAsync(BIG, pool, other)
            assert (mem1 == mem2) == expect_same
            gate.open()
            hip.hipStreamSynchronize(s1)
            hip.hipStreamSynchronize(s2)
            hip.hipFreeAsync(mem2, other)
            hip.hipFreeAsync(mem3, s1)
            hip.hipStreamSynchronize(s1)
            hip.hipStreamSynchronize(s2)
    finally:
        hip.hipEventDestroy(ev)
        hip.hipStreamDestroy(s1)
        hip.hipStreamDestroy(s2)


def _disallow_all(pool):
    for a in REUSE:
        hip.hipMemPoolSetAttribute(pool, a, 0)


def _allow_opportunistic(pool):
    hip.hipMemPoolSetAttribute(pool, A.hipMemPoolReuseAllowOpportunistic, 1)


_NOT_KEPT = pytest.mark.xfail(strict=True, reason="hdemu: a passed free goes back to the device, which hands "
                                                  "the same address out again (to any stream)")


@pytest.mark.parametrize("section", [pytest.param("Disallow Opportunistic - No Reuse", marks=_NOT_KEPT),
                                     "Disallow Opportunistic - Reuse", "Allow Opportunistic - Reuse",
                                     "Allow Opportunistic - No Reuse"])
def test_Unit_hipMemPoolSetAttribute_Opportunistic(platform, kmod, section):
    setup = _disallow_all if section.startswith("Disallow") else _allow_opportunistic
    same = section == "Disallow Opportunistic - Reuse"
    wait = section != "Allow Opportunistic - No Reuse"
    _reuse_case(kmod, setup, same, wait, section.endswith("- Reuse"))


@pytest.mark.parametrize("section", [
    pytest.param("Allow Event Dependencies - Reuse", marks=pytest.mark.xfail(
        strict=True, reason="hdemu: a block whose free is pending goes only to the stream that freed it")),
    "Disallow Event Dependencies - No Reuse"])
def test_Unit_hipMemPoolSetAttribute_EventDependencies(platform, kmod, section):
    allow = section.startswith("Allow")

    def setup(pool):
        hip.hipMemPoolSetAttribute(pool, A.hipMemPoolReuseFollowEventDependencies, int(allow))
    _reuse_case(kmod, setup, False, False, allow, event=True)


# SECTION "Set values is nullptr" is a value of None.
@pytest.mark.parametrize("section", ["Mempool is nullptr", "Attribute value is not valid", "Set values is nullptr",
                                     "Set hipMemPoolAttrReservedMemHigh to non-zero",
                                     "Set hipMemPoolAttrUsedMemHigh to non-zero"])
def test_Unit_hipMemPoolSetAttribute_Negative_Parameters(platform, section):
    hip.hipSetDevice(0)
    mempools_supported(0)
    with MemPoolGuard("dev_default", 0) as g:
        args = {"Mempool is nullptr": (None, A.hipMemPoolReuseFollowEventDependencies, 0),
                "Attribute value is not valid": (g.mempool, 0x9, 0),
                "Set values is nullptr": (g.mempool, A.hipMemPoolReuseFollowEventDependencies, None),
                "Set hipMemPoolAttrReservedMemHigh to non-zero": (g.mempool, A.hipMemPoolAttrReservedMemHigh, 1),
                "Set hipMemPoolAttrUsedMemHigh to non-zero": (g.mempool, A.hipMemPoolAttrUsedMemHigh, 1)}[section]
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemPoolSetAttribute(*args)
        assert ei.value.error == E.hipErrorInvalidValue


def reset_high_value(pool):
    hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReservedMemHigh, 0)
    hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrUsedMemHigh, 0)


def test_Unit_hipMemPoolSetAttribute_ResetMemHighAttr(platform):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    reset_high_value(pool)
    a_d = hip.hipMallocFromPoolAsync(BYTES, pool, None)
    hip.hipFreeAsync(a_d, None)
    hip.hipStreamSynchronize(None)
    reset_high_value(pool)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrReservedMemHigh) == 0
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrUsedMemHigh) == 0
    hip.hipMemPoolDestroy(pool)


# SECTION "Get values is nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["Mempool is nullptr", "Attribute value is not valid"])
def test_Unit_hipMemPoolGetAttribute_Negative_Parameters(platform, section):
    hip.hipSetDevice(0)
    mempools_supported(0)
    with MemPoolGuard("dev_default", 0) as g:
        args = ((None, A.hipMemPoolReuseFollowEventDependencies) if section == "Mempool is nullptr"
                else (g.mempool, 0x9))
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemPoolGetAttribute(*args)
        assert ei.value.error == E.hipErrorInvalidValue


def test_Unit_hipMemPoolGetAttribute_SetGet(platform):
    for dev in range(hip.hipGetDeviceCount()):
        mempools_supported(dev)
        for attr, value in [(A.hipMemPoolAttrReleaseThreshold, UINT64_MAX)] + [(a, 0) for a in REUSE]:
            pool = hip.hipMemPoolCreate(pool_props(dev))
            mem_pool_set_get_attribute(pool, attr, value)
            hip.hipMemPoolDestroy(pool)


@pytest.mark.parametrize("section", ["Check created mempool", "Check default mempool",
                                     "Default memory pool allocation"])
def test_Unit_hipMemPoolGetAttribute_UsedMem(platform, section):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    stream = hip.hipStreamCreate()
    used = A.hipMemPoolAttrUsedMemCurrent
    try:
        if section == "Check default mempool":
            default = hip.hipDeviceGetDefaultMemPool(0)
            initial = hip.hipMemPoolGetAttribute(default, used)
            a_d = hip.hipMallocAsync(BYTES, stream)
            hip.hipStreamSynchronize(stream)
            assert hip.hipMemPoolGetAttribute(default, used) == initial + BYTES
            hip.hipFreeAsync(a_d, stream)
            hip.hipStreamSynchronize(stream)
            assert hip.hipMemPoolGetAttribute(default, used) == initial
            return
        assert hip.hipMemPoolGetAttribute(pool, used) == 0
        if section == "Check created mempool":
            a_d = hip.hipMallocFromPoolAsync(BYTES, pool, stream)
            hip.hipStreamSynchronize(stream)
            assert hip.hipMemPoolGetAttribute(pool, used) == BYTES
            hip.hipFreeAsync(a_d, stream)
            hip.hipStreamSynchronize(stream)
            assert hip.hipMemPoolGetAttribute(pool, used) == 0
        else:
            a_d = hip.hipMallocAsync(BYTES, stream)
            hip.hipStreamSynchronize(stream)
            assert hip.hipMemPoolGetAttribute(pool, used) == 0
            hip.hipFreeAsync(a_d, stream)
            hip.hipStreamSynchronize(stream)
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipMemPoolDestroy(pool)


def test_Unit_hipMemPoolGetAttribute_ReservedMem(platform):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    reserved = A.hipMemPoolAttrReservedMemCurrent
    assert hip.hipMemPoolGetAttribute(pool, reserved) >= 0
    stream = hip.hipStreamCreate()
    a_d = hip.hipMallocFromPoolAsync(BYTES, pool, stream)
    hip.hipStreamSynchronize(stream)
    assert hip.hipMemPoolGetAttribute(pool, reserved) >= BYTES
    hip.hipFreeAsync(a_d, stream)
    hip.hipStreamSynchronize(stream)
    assert hip.hipMemPoolGetAttribute(pool, reserved) >= 0
    hip.hipStreamDestroy(stream)
    hip.hipMemPoolDestroy(pool)


def usage_statistics(pool):
    """getUsageStatistics: (reservedMem, reservedMemHigh, usedMem, usedMemHigh)."""
    return tuple(hip.hipMemPoolGetAttribute(pool, a) for a in (
        A.hipMemPoolAttrReservedMemCurrent, A.hipMemPoolAttrReservedMemHigh, A.hipMemPoolAttrUsedMemCurrent,
        A.hipMemPoolAttrUsedMemHigh))


def test_Unit_hipMemPoolGetAttribute_UsageStatistics(platform):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    reset_high_value(pool)
    reserved, reserved_high, used, used_high = usage_statistics(pool)
    assert reserved == reserved_high and used == 0 and used_high == 0
    a_d = [hip.hipMallocFromPoolAsync(BYTES, pool, None) for _ in range(ITERATIONS)]
    hip.hipStreamSynchronize(None)
    reserved, reserved_high, used, used_high = usage_statistics(pool)
    assert reserved == reserved_high and used == ITERATIONS * BYTES and used_high == ITERATIONS * BYTES
    reserved_high_exp, used_high_exp = reserved_high, ITERATIONS * BYTES
    for p in a_d[:ITERATIONS // 2]:
        hip.hipFreeAsync(p, None)
    hip.hipStreamSynchronize(None)
    _r, reserved_high, used, used_high = usage_statistics(pool)
    assert (reserved_high, used, used_high) == (reserved_high_exp, (ITERATIONS - ITERATIONS // 2) * BYTES,
                                                used_high_exp)
    for p in a_d[ITERATIONS // 2:]:
        hip.hipFreeAsync(p, None)
    hip.hipStreamSynchronize(None)
    _r, reserved_high, used, used_high = usage_statistics(pool)
    assert (reserved_high, used, used_high) == (reserved_high_exp, 0, used_high_exp)
    hip.hipMemPoolDestroy(pool)


def test_Unit_hipMemPoolGetAttribute_hipMalloc_DefMempool(platform):
    mempools_supported(0)
    pool = hip.hipDeviceGetDefaultMemPool(0)
    reset_high_value(pool)
    start = usage_statistics(pool)
    ad = hip.hipMalloc(BYTES)
    assert usage_statistics(pool) == start
    hip.hipFree(ad)


def test_Unit_hipMemPoolGetAttribute_CheckDefaultValues(platform):
    for dev in range(hip.hipGetDeviceCount()):
        mempools_supported(dev)
        for attr, value in [(A.hipMemPoolAttrReleaseThreshold, 0)] + [(a, 1) for a in REUSE]:
            pool = hip.hipMemPoolCreate(pool_props(dev))
            assert hip.hipMemPoolGetAttribute(pool, attr) == value
            hip.hipMemPoolDestroy(pool)
