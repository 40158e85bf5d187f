"""Pitched 2-D and 3-D async copies from pageable host memory to the device are staged, as CLR's: the
call returns once the rows are in a staging buffer, without waiting for the stream's earlier work (the
caller may change its array at once), and the device copies the staged rows to the destination's rows
and slices, a pitch and a slice pitch apart, leaving the padding alone. A copy that does not fit a
staging buffer (or has more than STAGED_SLICES separate slices) still waits and still lands; a copy to
pageable host memory still returns only once the data is there.

Every host wait is bounded by a short ``wait_timeout_s``: a copy that waits for the held stream fails
with hipErrorLaunchTimeOut instead of hanging (what these tests got before the copies were staged)."""
import numpy as np
import pytest

from hostside import hip, hsa
from hostside.clr._staging import STAGED_SLICES
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
K = hip.hipMemcpyKind
PAD = 0x11                                  # what the destination holds outside the copied region


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 2})


@pytest.fixture
def stream(mod, monkeypatch):
    monkeypatch.setattr(hsa.runtime(), "wait_timeout_s", 5.0)
    s = hip.hipStreamCreate()
    yield s
    hip.hipStreamDestroy(s)


@pytest.fixture
def hold(stream):
    """``hold()`` queues a hipStreamWaitValue32 on ``stream`` that only ``release()`` (the returned
    function) lets go; the fixture releases it at the end whatever happened."""
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 2)
    view[:] = 0

    def hold():
        hip.hipStreamWaitValue32(stream, flag, 1, hip.hipStreamWaitValueGte)

        def release():
            view[0] = 1
        return release
    try:
        yield hold
    finally:
        view[0] = 1
        hip.hipStreamSynchronize(stream)
        hip.hipHostFree(flag)


def padded(nbytes: int) -> int:
    """Device memory of ``nbytes`` filled with PAD (synchronised)."""
    p = hip.hipMalloc(nbytes)
    hip.hipMemset(p, PAD, nbytes)
    hip.hipDeviceSynchronize()
    return p


def dev_bytes(ptr, n):
    out = np.zeros(n, np.uint8)
    hip.hipMemcpy(out, ptr, n, K.hipMemcpyDeviceToHost)
    return out


def rows_of(buf, pitch, width, height, slices=1, slice_pitch=0):
    """(slices, height, width) of u8 ``buf``: the region of ``slices`` slices of ``height`` rows."""
    return np.lib.stride_tricks.as_strided(buf, shape=(slices, height, width),
                                           strides=(slice_pitch or pitch * height, pitch, 1))


def copy3d(dst, dpitch, dysize, src, spitch, sysize, w, h, d, stream):
    p = hip.hipMemcpy3DParms()
    p.dstPtr = hip.make_hipPitchedPtr(dst, dpitch, w, dysize)
    p.srcPtr = hip.make_hipPitchedPtr(src, spitch, w, sysize)
    p.extent = hip.make_hipExtent(w, h, d)
    p.kind = K.hipMemcpyHostToDevice
    hip.hipMemcpy3DAsync(p, stream)


def test_pitched_2d_async_from_pageable_returns_while_the_stream_is_held_and_keeps_the_staged_rows(stream, hold):
    w, h, spitch = 100, 40, 130
    dst, dpitch = hip.hipMallocPitch(w, h)
    hip.hipMemset2D(dst, dpitch, PAD, dpitch, h)
    hip.hipDeviceSynchronize()
    host = np.zeros(spitch * h, np.uint8)
    rng = np.random.default_rng(7)
    release = hold()
    want = []
    for i in range(3):                       # the same rows, three times: the last one stays
        host[:] = rng.integers(0, 256, host.size, dtype=np.uint8)
        want.append(rows_of(host, spitch, w, h)[0].copy())
        hip.hipMemcpy2DAsync(dst, dpitch, host, spitch, w, h, K.hipMemcpyHostToDevice, stream)
    host[:] = 0xEE                           # changed right after the calls: the staged rows count
    assert hip.hipStreamQuery(stream) == E.hipErrorNotReady
    release()
    hip.hipStreamSynchronize(stream)
    got = dev_bytes(dst, dpitch * h).reshape(h, dpitch)
    assert np.array_equal(got[:, :w], want[-1])
    assert (got[:, w:] == PAD).all()         # the padding of each row is left alone
    hip.hipFree(dst)


def test_pitched_3d_async_from_pageable_returns_while_the_stream_is_held_with_row_and_slice_pitch(stream, hold):
    """Slices that are not one run of rows on either side (the slices have more rows than the region)
    are staged together (one buffer, one rectangular packet a slice); a region whose slices are one run
    is one 2-D copy; a read-only ``bytes`` source works as well."""
    w, h, d = 60, 7, 5
    dpitch, dys = 64, 9                      # destination slices of 9 rows, 64 bytes apart
    spitch, sys_ = 80, 8                     # source slices of 8 rows, 80 bytes apart
    dslice = dpitch * dys
    dst = padded(dslice * d)
    run = padded(dpitch * h * d)             # slices of exactly h rows: one run
    rng = np.random.default_rng(11)
    host = rng.integers(0, 256, spitch * sys_ * d, dtype=np.uint8)
    frozen = bytes(rng.integers(0, 256, spitch * h * d, dtype=np.uint8))
    release = hold()
    want = rows_of(host, spitch, w, h, d, spitch * sys_).copy()
    copy3d(dst, dpitch, dys, host, spitch, sys_, w, h, d, stream)
    host[:] = 0xEE
    copy3d(run, dpitch, h, frozen, spitch, h, w, h, d, stream)
    assert hip.hipStreamQuery(stream) == E.hipErrorNotReady
    release()
    hip.hipStreamSynchronize(stream)
    got = dev_bytes(dst, dslice * d)
    assert np.array_equal(rows_of(got, dpitch, w, h, d, dslice), want)
    region = np.zeros(got.size, bool)
    rows_of(region, dpitch, w, h, d, dslice)[:] = True
    assert (got[~region] == PAD).all()       # row padding and the slices' extra rows untouched
    got = dev_bytes(run, dpitch * h * d)
    want = rows_of(np.frombuffer(frozen, np.uint8), spitch, w, h * d)[0]
    assert np.array_equal(rows_of(got, dpitch, w, h * d)[0], want)
    hip.hipFree(dst)
    hip.hipFree(run)


def test_a_pipeline_of_pitched_async_copies_from_pageable_memory_never_synchronised(stream):
    """200 2-D and 200 3-D copies on a stream that never synchronises, past the staging pool's 8
    buffers many times over: each carries what the array held at its call, in stream order."""
    w, h, k = 48, 16, 200
    dpitch = 64
    region = dpitch * h                      # 2-D: 4 regions; 3-D: 4 regions of 2 slices of h + 2 rows
    dst2 = padded(region * 4)
    dst3 = padded(dpitch * (h + 2) * 2 * 4)
    host = np.zeros(w * h * 2, np.uint8)
    for i in range(k):
        host[:] = i % 251
        hip.hipMemcpy2DAsync(dst2 + (i % 4) * region, dpitch, host, w, w, h, K.hipMemcpyHostToDevice, stream)
        host[:] = (i + 100) % 251
        copy3d(dst3 + (i % 4) * dpitch * (h + 2) * 2, dpitch, h + 2, host, w, h, w, h, 2, stream)
    hip.hipStreamSynchronize(stream)
    pool = hsa.runtime()._clr_staging_pool
    assert pool.made <= pool.max_buffers
    got2 = dev_bytes(dst2, region * 4).reshape(4, h, dpitch)
    got3 = dev_bytes(dst3, dpitch * (h + 2) * 2 * 4).reshape(4, 2, h + 2, dpitch)
    for j in range(4):
        last = k - 4 + j
        assert (got2[j, :, :w] == last % 251).all() and (got2[j, :, w:] == PAD).all()
        assert (got3[j, :, :h, :w] == (last + 100) % 251).all()
        assert (got3[j, :, h:, :] == PAD).all() and (got3[j, :, :, w:] == PAD).all()
    hip.hipFree(dst2)
    hip.hipFree(dst3)


def test_pitched_async_copies_too_big_to_stage_still_land(stream):
    """More bytes than a staging buffer (1 MiB), or more separate slices than STAGED_SLICES: not
    staged, the call returns once the copy has landed (the stream is not held here)."""
    w, h = 1000, 1100                        # 1.1 MB of rows
    dst, dpitch = hip.hipMallocPitch(w, h)
    host = np.random.default_rng(3).integers(0, 256, 1024 * h, dtype=np.uint8)
    hip.hipMemcpy2DAsync(dst, dpitch, host, 1024, w, h, K.hipMemcpyHostToDevice, stream)
    host_copy = rows_of(host, 1024, w, h)[0].copy()
    host[:] = 0
    got = dev_bytes(dst, dpitch * h).reshape(h, dpitch)
    assert np.array_equal(got[:, :w], host_copy)
    hip.hipFree(dst)
    d, sw, sh = STAGED_SLICES + 1, 8, 2      # slices of 2 rows of 3-row slices: a packet each
    dst = padded(sw * 3 * d)
    host = np.arange(sw * 3 * d, dtype=np.uint32).astype(np.uint8)
    want = rows_of(host, sw, sw, sh, d, sw * 3).copy()
    copy3d(dst, sw, 3, host, sw, 3, sw, sh, d, stream)
    host[:] = 0
    got = dev_bytes(dst, sw * 3 * d)
    assert np.array_equal(rows_of(got, sw, sw, sh, d, sw * 3), want)
    assert (got.reshape(d, 3, sw)[:, 2] == PAD).all()
    hip.hipFree(dst)


def test_pitched_async_copies_to_pageable_memory_return_with_the_data(stream):
    """Device to pageable host, 2-D and 3-D: the data is in the array when the call returns (as CLR),
    behind the stream's earlier work (a fill queued just before)."""
    w, h, d = 50, 6, 3
    src = hip.hipMalloc(64 * 8 * d)
    hip.hipMemsetAsync(src, 0x5A, 64 * 8 * d, stream)
    out = np.zeros(w * h, np.uint8)
    hip.hipMemcpy2DAsync(out, w, src, 64, w, h, K.hipMemcpyDeviceToHost, stream)
    assert (out == 0x5A).all()
    hip.hipMemsetAsync(src, 0x6B, 64 * 8 * d, stream)
    out3 = np.zeros(w * h * d, np.uint8)
    p = hip.hipMemcpy3DParms()
    p.dstPtr = hip.make_hipPitchedPtr(out3, w, w, h)
    p.srcPtr = hip.make_hipPitchedPtr(src, 64, w, 8)
    p.extent = hip.make_hipExtent(w, h, d)
    p.kind = K.hipMemcpyDeviceToHost
    hip.hipMemcpy3DAsync(p, stream)
    assert (out3 == 0x6B).all()
    hip.hipFree(src)
