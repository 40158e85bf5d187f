"""Fixes made while hostside.hip became a package; each test failed before its fix."""
import threading
import time
import typing

import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from hostside.hip._graph_exec import copy_block
from hostside.hsa import HsaError
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2})


def sleep_params(mod, seconds):
    return hip.hipKernelNodeParams(hip.hipModuleGetFunction(mod, "sleep"), (1, 1, 1), (1, 1, 1), 0, [seconds])


# -- hipDeviceProp_t ---------------------------------------------------------------------------------
def test_device_properties_missing_attribute_is_an_attribute_error(mod):
    p = hip.hipGetDeviceProperties(0)
    assert not hasattr(p, "noSuchProperty")          # was: KeyError out of hasattr
    with pytest.raises(AttributeError, match="noSuchProperty"):
        p.noSuchProperty
    with pytest.raises(KeyError):
        p["noSuchProperty"]
    assert isinstance(p, dict) and p["totalGlobalMem"] == p.totalGlobalMem


def test_device_properties_have_a_compute_capability(mod):
    p = hip.hipGetDeviceProperties(1)
    assert hasattr(p, "major") and hasattr(p, "minor")
    assert (p.major, p.minor) == (9, 0) == (p["major"], p["minor"])


# -- hipFree -------------------------------------------------------------------------------------------
def test_hipfree_synchronises_the_device_of_the_allocation(mod):
    """Work pending on device 1, current device 0: hipFree of a device-1 pointer waits for device 1.
    The pending work is a gate: hipFree (in a thread, current device 0) must still be waiting after a
    short bounded check, and the stream must be done when it returns."""
    gate = Gate(mod, limit_s=60.0)
    hip.hipSetDevice(1)
    try:
        s1 = hip.hipStreamCreate()
        d1 = hip.hipMalloc(4096)
        gate.launch(s1)
    finally:
        hip.hipSetDevice(0)
    after = []

    def free():
        try:
            hip.hipFree(d1)
            after.append(hip.hipStreamQuery(s1))
        except Exception as exc:  # noqa: BLE001 - reported by the test
            after.append(exc)
    t = threading.Thread(target=free)
    try:
        assert hip.hipStreamQuery(s1) == hip.hipError_t.hipErrorNotReady
        t.start()
        stay = time.monotonic() + 0.2
        while time.monotonic() < stay and not after:
            time.sleep(0.005)
        assert not after, f"hipFree returned while device 1 was still busy: {after}"
    finally:
        gate.open()
        if t.ident is not None:
            t.join(60)
        hip.hipStreamSynchronize(s1)
        hip.hipStreamDestroy(s1)
        gate.close()
    assert after == [hip.hipError_t.hipSuccess]                     # was: device 0 synchronised only


# -- HipError keeps its cause ----------------------------------------------------------------------------
def test_hip_error_carries_the_hsa_error_as_its_cause(mod):
    with pytest.raises(hip.HipError) as ei:
        hip.host_array(0x1234, np.uint8, 4)          # not fine-grained host memory: an HsaError below
    assert ei.value.name == "hipErrorInvalidValue"
    assert isinstance(ei.value.__cause__, HsaError)  # was: raised "from None"
    assert hip.hipGetLastError() == hip.hipError_t.hipErrorInvalidValue


# -- copy_block does what its docstring says -------------------------------------------------------------
class _Ring:
    """Just enough of a queue for copy_block: a ring of ``size`` 64-byte rows."""

    def __init__(self, size, write_index):
        self.size, self.mask, self.ring_off = size, size - 1, 64
        self.buf = bytearray(self.ring_off + 64 * size)
        self.wi = write_index
        self.doorbells = []

    def add_write_index(self, n):
        i, self.wi = self.wi, self.wi + n
        return i

    def wait_for_space(self, index):
        pass

    def ring_doorbell(self, index):
        self.doorbells.append(index)

    def rows(self):
        return np.frombuffer(self.buf, np.uint8, offset=self.ring_off).reshape(self.size, 64)


def _block(n):
    block = np.zeros((n, 64), np.uint8)
    block[:, 2:] = (np.arange(n, dtype=np.uint8) + 1)[:, None]
    block[:, :2] = 1                                   # the header still INVALID in the body rows
    return block, np.arange(100, 100 + n, dtype=np.uint16)


def test_copy_block_returns_the_first_packet_id():
    assert typing.get_type_hints(copy_block)["return"] is int      # was annotated "-> None"
    q, published = _Ring(8, 6), []
    block, hdrs = _block(3)
    assert copy_block(q, block, hdrs, lambda qq, i: published.append((qq, i))) == 6
    assert published == [(q, 8)] and q.doorbells == []
    rows = q.rows()
    for k, slot in enumerate((6, 7, 0)):                             # wraps around the ring
        assert rows[slot][:2].view(np.uint16)[0] == hdrs[k]
        assert (rows[slot][2:] == block[k][2:]).all()
    assert copy_block(q, *_block(0), lambda *a: published.append(a)) == -1
    assert len(published) == 1


def test_copy_block_longer_than_the_ring_rings_the_doorbell_per_half():
    q, published = _Ring(8, 3), []
    block, hdrs = _block(20)
    assert copy_block(q, block, hdrs, lambda *a: published.append(a)) == 3
    assert published == []                                           # publish is not called
    assert q.doorbells == [3 + 3, 3 + 7, 3 + 11, 3 + 15, 3 + 19]
    rows = q.rows()
    for k in range(12, 20):                                          # the last ring-full
        assert rows[(3 + k) & 7][:2].view(np.uint16)[0] == hdrs[k]


# -- hipGraphNodeSetEnabled takes effect from the next launch (also for a copy's host part) ----------------
def test_set_enabled_does_not_change_the_launch_in_flight(mod):
    """A pageable device->host copy node is an SDMA copy into staging plus a host op; the host op of
    a launch still in flight must follow the node's state as of that launch."""
    s = hip.hipStreamCreate()
    n = 256
    d = hip.hipMalloc(n)
    hip.hipMemset(d, 0x5A, n)
    out = np.full(n, 0x11, np.uint8)
    g = hip.hipGraphCreate()
    k = hip.hipGraphAddKernelNode(g, [], sleep_params(mod, 0.4))
    c = hip.hipGraphAddMemcpyNode1D(g, [k], out, d, n, hip.hipMemcpyDeviceToHost)
    ex = hip.hipGraphInstantiate(g)
    try:
        hip.hipGraphLaunch(ex, s)
        hip.hipGraphNodeSetEnabled(ex, c, False)      # while the kernel of that launch still sleeps
        hip.hipStreamSynchronize(s)
        assert (out == 0x5A).all()                    # the launch in flight copied (was: skipped)
        out[:] = 0x11
        hip.hipGraphLaunch(ex, s)
        hip.hipStreamSynchronize(s)
        assert (out == 0x11).all()                    # the next launch did not
        t0 = time.monotonic()
        hip.hipGraphLaunch(ex, s)                     # launched disabled, enabled in flight:
        hip.hipGraphNodeSetEnabled(ex, c, True)
        hip.hipStreamSynchronize(s)
        assert time.monotonic() - t0 >= 0.3
        assert (out == 0x11).all()                    # no stale staging copied in (was: overwritten)
    finally:
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(g)
        hip.hipFree(d)
        hip.hipStreamDestroy(s)


def test_error_names_and_strings_as_clr():
    """hipGetErrorName/hipGetErrorString give CLR's texts; a code HIP does not have is
    hipErrorUnknown / "unknown error" (never an exception), and hipErrorInvalidValue in the driver forms."""
    E = hip.hipError_t
    assert hip.hipGetErrorName(E.hipErrorInvalidValue) == "hipErrorInvalidValue"
    assert hip.hipGetErrorString(E.hipErrorInvalidValue) == "invalid argument"
    assert hip.hipGetErrorString(0) == "no error" and hip.hipGetErrorString(np.int32(2)) == "out of memory"
    assert hip.hipGetErrorString(E.hipErrorLaunchTimeOut) == "the launch timed out and was terminated"
    assert all(hip.hipGetErrorString(e) != "unknown error" for e in E if e != E.hipErrorUnknown)
    for bad in (12345, -1, None, "x", 1.5, True):
        assert hip.hipGetErrorName(bad) == "hipErrorUnknown"
        assert hip.hipGetErrorString(bad) == "unknown error"
        with pytest.raises(hip.HipError) as ei:
            hip.hipDrvGetErrorString(bad)
        assert ei.value.error == E.hipErrorInvalidValue
    assert hip.hipDrvGetErrorName(E.hipErrorNotReady) == "hipErrorNotReady"
    assert hip.hipDrvGetErrorString(E.hipErrorUnknown) == "unknown error"


@pytest.mark.parametrize("free", ["hipFree", "hipHostFree", "hipFreeHost"])
def test_free_of_a_non_pointer_is_invalid_value(free):
    """A free call given something that is not a pointer says hipErrorInvalidValue (it raised
    TypeError or ValueError from inside the lookup); None and 0 free nothing, as nullptr does."""
    fn = getattr(hip, free)
    for bad in ("abc", 1.5, object(), [], True):
        with pytest.raises(hip.HipError) as ei:
            fn(bad)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue and "ptr must be a pointer" in str(ei.value)
        assert hip.hipGetLastError() == hip.hipError_t.hipErrorInvalidValue
    fn(None)
    fn(0)
