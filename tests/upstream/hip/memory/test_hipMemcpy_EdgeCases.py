"""hipMemcpy edge cases: copies around a vectorADD for int, float and double; host-to-host, pinned and
device chains with hipMemcpyDefault; memcpytest2 (host-to-host staging, a device-to-device copy, the
source then overwritten) from two serialised threads with pinned and pageable memory; pinned buffers
reused on a second device. Vectors are 16 Ki elements (upstream: 4 Mi). Test names with "-" upstream
("H2H-H2D-D2H-H2PinMem") use "_". The "DeviceContextChange" and "PeerGPU" SECTIONs (hipDeviceCanAccessPeer:
in hdemu since, not yet ported) and the registered half of PinnedRegMemWithKernelLaunch (hipHostRegister,
not in hdemu) are left out."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import Arrays, HostBuf, set_num_blocks, vector_add

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy_EdgeCases.cc"

NUM_ELM = 16 * 1024
BLOCKS_PER_CU, THREADS_PER_BLOCK = 6, 256
TYPES = {"int": np.int32, "float": np.float32, "double": np.float64}
H2D, D2H, H2H, D2D, DEF = (hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost, hip.hipMemcpyHostToHost,
                           hip.hipMemcpyDeviceToDevice, hip.hipMemcpyDefault)


@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpy_KernelLaunch(kmod, test_type):
    dtype = TYPES[test_type]
    with Arrays(dtype, NUM_ELM) as m:
        hip.hipMemcpy(m.A_d, m.A_h.ptr, m.nbytes, H2D)
        hip.hipMemcpy(m.B_d, m.B_h.ptr, m.nbytes, H2D)
        vector_add(kmod, dtype, m.A_d, m.B_d, m.C_d, NUM_ELM)
        hip.hipGetLastError()
        hip.hipMemcpy(m.C_h.ptr, m.C_d, m.nbytes, D2H)
        hip.hipDeviceSynchronize()
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)


@pytest.mark.parametrize("section", ["H2H, H2PinMem and PinMem2H", "H2D-D2D-D2H-SameGPU", "pH2D-D2D-D2pH-SameGPU"])
@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpy_H2H_H2D_D2H_H2PinMem(platform, test_type, section):
    dtype = TYPES[test_type]
    hip.hipSetDevice(0)
    n = NUM_ELM
    nbytes = n * np.dtype(dtype).itemsize
    with Arrays(dtype, n, which="A_d B_d A_h B_h") as m, Arrays(dtype, n, pinned=True, which="A_h B_h") as p:
        a_h, b_h, a_ph, b_ph = m.A_h, m.B_h, p.A_h, p.B_h
        if section == "H2H, H2PinMem and PinMem2H":
            hip.hipMemcpy(b_h.ptr, a_h.ptr, nbytes, DEF)
            hip.hipMemcpy(a_ph.ptr, b_h.ptr, nbytes, DEF)
            hip.hipMemcpy(b_ph.ptr, a_ph.ptr, nbytes, DEF)
            assert np.array_equal(b_ph.a, a_h.a)
        else:
            src, dst = (a_h, b_h) if section == "H2D-D2D-D2H-SameGPU" else (a_ph, b_ph)
            hip.hipMemcpy(m.A_d, src.ptr, nbytes, DEF)
            hip.hipMemcpy(m.B_d, m.A_d, nbytes, DEF)
            hip.hipMemcpy(dst.ptr, m.B_d, nbytes, DEF)
            assert np.array_equal(dst.a, src.a)


class HostMemory:
    """HostMemory<T>: initArrays' A_h, B_h, C_h and the secondary copies A_hh, B_hh."""

    def __init__(self, dtype, n: int, use_pinned_host: bool):
        self.arrays = Arrays(dtype, n, pinned=use_pinned_host, which="A_h B_h C_h")
        self.A_hh = HostBuf(dtype, n, use_pinned_host)
        self.B_hh = HostBuf(dtype, n, use_pinned_host)

    def reset(self, n: int) -> None:
        i = np.arange(n)
        self.A_hh.a[:n] = 1097.0 + i
        self.B_hh.a[:n] = 1492.0 + i

    def free(self):
        self.arrays.free()
        self.A_hh.free()
        self.B_hh.free()


class DeviceMemory:
    """DeviceMemory<T>: initArrays' A_d, B_d, C_d and C_dd."""

    def __init__(self, dtype, n: int):
        self.arrays = Arrays(dtype, n, which="A_d B_d C_d")
        self.C_dd = hip.hipMalloc(self.arrays.nbytes)

    def free(self):
        self.arrays.free()
        hip.hipFree(self.C_dd)


def memcpytest2(mod, dmem, hmem, n, use_host_to_host, use_device_to_device, use_memkind_default):
    d, h = dmem.arrays, hmem.arrays
    dtype = d.dtype
    size = n * np.dtype(dtype).itemsize
    hmem.reset(n)

    def kind(explicit):
        return DEF if use_memkind_default else explicit

    if use_host_to_host:
        hip.hipMemcpy(hmem.A_hh.ptr, h.A_h.ptr, size, kind(H2H))
        hip.hipMemcpy(hmem.B_hh.ptr, h.B_h.ptr, size, kind(H2H))
        hip.hipMemcpy(d.A_d, hmem.A_hh.ptr, size, kind(H2D))
        hip.hipMemcpy(d.B_d, hmem.B_hh.ptr, size, kind(H2D))
    else:
        hip.hipMemcpy(d.A_d, h.A_h.ptr, size, kind(H2D))
        hip.hipMemcpy(d.B_d, h.B_h.ptr, size, kind(H2D))
    vector_add(mod, dtype, d.A_d, d.B_d, d.C_d, n)
    hip.hipGetLastError()
    if use_device_to_device:
        hip.hipMemcpy(dmem.C_dd, d.C_d, size, kind(D2D))
        hip.hipMemset(d.C_d, 0x5A, size)            # destroy the original C_d
        hip.hipMemcpy(h.C_h.ptr, dmem.C_dd, size, kind(D2H))
    else:
        hip.hipMemcpy(h.C_h.ptr, d.C_d, size, kind(D2H))
    hip.hipDeviceSynchronize()
    assert np.array_equal(h.C_h.a[:n], h.A_h.a[:n] + h.B_h.a[:n])


def multi_thread_1(mod, serialize: bool, use_pinned_host: bool) -> None:
    mem_d = DeviceMemory(np.float32, NUM_ELM)
    mem1 = HostMemory(np.float32, NUM_ELM, use_pinned_host)
    mem2 = HostMemory(np.float32, NUM_ELM, use_pinned_host)
    errors = []

    def run(hmem):
        try:
            memcpytest2(mod, mem_d, hmem, NUM_ELM, False, False, False)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    try:
        threads = []
        for hmem in (mem1, mem2):
            t = threading.Thread(target=run, args=(hmem,))
            t.start()
            threads.append(t)
            if serialize:
                t.join(60)
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        if errors:
            raise errors[0]
    finally:
        for m in (mem_d, mem1, mem2):
            m.free()


# upstream starts with hipDeviceReset(); here the package's platform stays up (a reset would tear it down)
def test_Unit_hipMemcpy_MultiThreadWithSerialization(kmod):
    multi_thread_1(kmod, True, True)
    multi_thread_1(kmod, True, False)


# GENERATE(0, 1): 0 is hipHostRegister'ed malloc memory (not in hdemu); 1, pinned memory, runs.
@pytest.mark.parametrize("test_type", list(TYPES))
def test_Unit_hipMemcpy_PinnedRegMemWithKernelLaunch(kmod, test_type):
    dtype = TYPES[test_type]
    num_devices = hip.hipGetDeviceCount()
    if num_devices < 2:
        return                          # SUCCEED("No of devices are less than 2")
    blocks = set_num_blocks(BLOCKS_PER_CU, THREADS_PER_BLOCK, NUM_ELM)
    m = Arrays(dtype, NUM_ELM, pinned=True)
    x = None
    try:
        nbytes = m.nbytes
        hip.hipMemcpy(m.A_d, m.A_h.ptr, nbytes, H2D)
        hip.hipMemcpy(m.B_d, m.B_h.ptr, nbytes, H2D)
        vector_add(kmod, dtype, m.A_d, m.B_d, m.C_d, NUM_ELM, None, blocks, THREADS_PER_BLOCK)
        hip.hipGetLastError()
        hip.hipMemcpy(m.C_h.ptr, m.C_d, nbytes, D2H)
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)

        hip.hipSetDevice(1)             # upstream: a random device other than 0
        x = Arrays(dtype, NUM_ELM, which="A_d B_d C_d")
        for buf in (m.A_h, m.B_h, m.C_h):
            buf.a[:] = 0
        hip.hipMemcpy(m.A_h.ptr, m.A_d, nbytes, D2H)
        hip.hipMemcpy(x.A_d, m.A_h.ptr, nbytes, H2D)
        hip.hipMemcpy(m.B_h.ptr, m.B_d, nbytes, D2H)
        hip.hipMemcpy(x.B_d, m.B_h.ptr, nbytes, H2D)
        vector_add(kmod, dtype, x.A_d, x.B_d, x.C_d, NUM_ELM, None, blocks, THREADS_PER_BLOCK)
        hip.hipGetLastError()
        hip.hipMemcpy(m.C_h.ptr, x.C_d, nbytes, D2H)
        assert np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a)
    finally:
        m.free()
        if x is not None:
            x.free()
