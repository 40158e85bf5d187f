"""Pooling forward and backward against the float64 numpy reference: a seeded set of shapes, windows,
paddings and strides; max (with the saved indices), average and inclusive average; float32 and
float16; 4-D NCHW (packed and with padded rows), 4-D NHWC, 5-D NCDHW and 5-D NDHWC (the transposing
solvers)."""
import zlib

import numpy as np
import pytest

from hostside import hip
from hostside import miopen as mi
from tests.unit.hostside.miopen.pooling_ref import Dev, pool_desc, ref_backward, ref_forward, strides_for

pytestmark = pytest.mark.timeout(120)

MODES = (mi.miopenPoolingMax, mi.miopenPoolingAverage, mi.miopenPoolingAverageInclusive)
LAYOUTS = {4: ("NCHW", "NHWC", "padded"), 5: ("NCDHW", "NDHWC")}


def _cases():
    rng = np.random.default_rng(1234)
    out = []
    for nd, layouts in LAYOUTS.items():
        for layout in layouts:
            for dtype in (np.float32, np.float16):
                for mode in MODES:
                    sp = nd - 2
                    k = tuple(int(v) for v in rng.integers(1, 4, sp))
                    s = tuple(int(v) for v in rng.integers(1, 3, sp))
                    p = tuple(int(rng.integers(0, kk)) for kk in k)        # pad < window, as frameworks use
                    lens = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
                    lens += [int(rng.integers(max(kk, 2), 7 if sp == 3 else 10)) for kk in k]
                    out.append(pytest.param(tuple(lens), layout, dtype, mode, k, p, s,
                                            id=f"{layout}-{np.dtype(dtype).name}-{mi.miopenPoolingMode_t(mode).name}"
                                               f"-x{'x'.join(map(str, lens))}-k{k}-p{p}-s{s}"))
    return out


def _strides(shape, layout):
    if layout == "padded":                  # NCHW with two spare elements at the end of every row
        n, c, h, w = shape
        return (c * h * (w + 2), h * (w + 2), w + 2, 1)
    return strides_for(shape, layout)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("shape, layout, dtype, mode, k, p, s", _cases())
def test_forward_and_backward_equal_the_reference(handle, shape, layout, dtype, mode, k, p, s):
    rng = np.random.default_rng(zlib.crc32(repr((shape, layout, np.dtype(dtype).name, int(mode), k, p, s)).encode()))
    x = rng.standard_normal(shape).astype(dtype)
    y_ref, widx, iidx = ref_forward(x, mode, k, p, s)
    pd = pool_desc(mode, k, p, s)
    xt = Dev(shape, dtype, _strides(shape, layout))
    yt = Dev(y_ref.shape, dtype, _strides(y_ref.shape, layout))
    dxt = Dev(shape, dtype, _strides(shape, layout))
    dyt = Dev(y_ref.shape, dtype, _strides(y_ref.shape, layout))
    assert list(mi.miopenGetPoolingNdForwardOutputDim(pd, xt.desc, len(shape))) == list(y_ref.shape)
    ws_size = mi.miopenPoolingGetWorkSpaceSizeV2(pd, yt.desc)
    ws = hip.hipMalloc(max(ws_size, 1))
    try:
        xt.put(x)
        yt.fill_nan()
        mi.miopenPoolingForward(handle, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, True, ws, ws_size)
        hip.hipDeviceSynchronize()
        y = yt.get().astype(np.float64)
        if mode == mi.miopenPoolingMax:
            assert np.array_equal(y, y_ref)
            mask = np.empty(int(np.prod(y_ref.shape)), np.uint8)    # uint8 indices, packed NC(D)HW
            hip.hipMemcpy(mask, ws, mask.nbytes, hip.hipMemcpyDeviceToHost)
            image = mi.miopenGetPoolingWorkSpaceIndexMode(pd) == mi.miopenPoolingWorkspaceIndexImage
            assert np.array_equal(mask.reshape(y_ref.shape), iidx if image else widx)
        else:
            np.testing.assert_allclose(y, y_ref.astype(dtype).astype(np.float64), **_tol(dtype))
        dy = rng.standard_normal(y_ref.shape).astype(dtype)
        dx_ref = ref_backward(shape, dy, mode, k, p, s, iidx)
        dyt.put(dy)
        dxt.fill_nan()
        mi.miopenPoolingBackward(handle, pd, 1.0, yt.desc, yt.ptr, dyt.desc, dyt.ptr, xt.desc, xt.ptr, 0.0,
                                 dxt.desc, dxt.ptr, ws)
        hip.hipDeviceSynchronize()
        np.testing.assert_allclose(dxt.get().astype(np.float64), dx_ref, **_tol(dtype))
        solvers = [r["solver"] for r in mi.statistics(handle)["records"]]
        transposed = layout in ("NHWC", "NDHWC")
        assert all(sname.startswith("Transposed") == transposed for sname in solvers), solvers
    finally:
        for t in (xt, yt, dxt, dyt):
            t.free()
        hip.hipFree(ws)
        mi.miopenDestroyPoolingDescriptor(pd)


@pytest.mark.parametrize("shape, k, p, s, ws_mode, index_type", [
    ((2, 2, 9, 8), (3, 2), (1, 0), (2, 2), mi.miopenPoolingWorkspaceIndexImage, mi.miopenIndexUint16),
    ((1, 3, 6, 7), (2, 3), (1, 1), (1, 2), mi.miopenPoolingWorkspaceIndexMask, mi.miopenIndexUint32),
    ((1, 2, 4, 5, 6), (2, 2, 3), (1, 0, 1), (2, 1, 2), mi.miopenPoolingWorkspaceIndexImage, mi.miopenIndexUint64),
])
def test_max_index_modes_and_types(handle, shape, k, p, s, ws_mode, index_type):
    """The saved index is the one of the mode (window or image) in the index type's width."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    y_ref, widx, iidx = ref_forward(x, mi.miopenPoolingMax, k, p, s)
    pd = pool_desc(mi.miopenPoolingMax, k, p, s, index_type, ws_mode)
    xt, yt = Dev(shape, np.float32, strides_for(shape, "NCHW" if len(shape) == 4 else "NCDHW")), None
    yt = Dev(y_ref.shape, np.float32, strides_for(y_ref.shape, "NCHW" if len(shape) == 4 else "NCDHW"))
    ws_size = mi.miopenPoolingGetWorkSpaceSizeV2(pd, yt.desc)
    itype = {mi.miopenIndexUint16: np.uint16, mi.miopenIndexUint32: np.uint32, mi.miopenIndexUint64: np.uint64}
    assert ws_size == y_ref.size * np.dtype(itype[index_type]).itemsize
    ws = hip.hipMalloc(ws_size)
    try:
        xt.put(x)
        mi.miopenPoolingForward(handle, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, True, ws, ws_size)
        hip.hipDeviceSynchronize()
        assert np.array_equal(yt.get(), y_ref.astype(np.float32))
        mask = np.empty(y_ref.size, itype[index_type])
        hip.hipMemcpy(mask, ws, ws_size, hip.hipMemcpyDeviceToHost)
        want = iidx if ws_mode == mi.miopenPoolingWorkspaceIndexImage else widx
        assert np.array_equal(mask.reshape(y_ref.shape).astype(np.int64), want)
        if len(shape) == 5:     # Image mode: PoolingForwardNd takes it (it declines only Mask mode with saving)
            assert mi.statistics(handle)["last"]["solver"] == "PoolingForwardNd"
    finally:
        xt.free()
        yt.free()
        hip.hipFree(ws)


def test_5d_mask_mode_goes_to_the_naive_solver_and_has_no_backward_solver(handle):
    shape, k, p, s = (1, 2, 4, 5, 5), (2, 2, 2), (0, 1, 1), (1, 2, 2)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    y_ref, widx, _ = ref_forward(x, mi.miopenPoolingMax, k, p, s)
    pd = pool_desc(mi.miopenPoolingMax, k, p, s, ws_mode=mi.miopenPoolingWorkspaceIndexMask)
    xt, yt = Dev(shape, np.float32, strides_for(shape, "NCDHW")), Dev(y_ref.shape, np.float32,
                                                                       strides_for(y_ref.shape, "NCDHW"))
    ws_size = mi.miopenPoolingGetWorkSpaceSizeV2(pd, yt.desc)
    ws = hip.hipMalloc(ws_size)
    try:
        xt.put(x)
        mi.miopenPoolingForward(handle, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, True, ws, ws_size)
        hip.hipDeviceSynchronize()
        assert mi.statistics(handle)["last"]["solver"] == "PoolingForwardNaive"
        assert np.array_equal(yt.get(), y_ref.astype(np.float32))
        mask = np.empty(y_ref.size, np.uint8)
        hip.hipMemcpy(mask, ws, ws_size, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(mask.reshape(y_ref.shape), widx)
        with pytest.raises(mi.MiopenError) as ei:
            mi.miopenPoolingBackward(handle, pd, 1.0, yt.desc, yt.ptr, yt.desc, yt.ptr, xt.desc, xt.ptr, 0.0,
                                     xt.desc, xt.ptr, ws)
        assert ei.value.status == mi.miopenStatus_t.miopenStatusNotImplemented
        assert "No solver found" in str(ei.value)
    finally:
        xt.free()
        yt.free()
        hip.hipFree(ws)


@pytest.mark.parametrize("mode", MODES)
def test_naive_solver_on_4d_equals_the_reference(handle, mode):
    """PoolingForwardNaive is reached for 4-D only when PoolingForward2d declines; run its solution
    directly (as SearchForSolutions would) with arbitrary strides, W included."""
    from hostside.miopen._problem import FORWARD, FwdInvokeParams, Problem
    from hostside.miopen._solvers_fwd import PoolingForwardNaive
    shape, k, p, s = (2, 3, 7, 6), (3, 2), (1, 1), (2, 1)
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    y_ref, widx, iidx = ref_forward(x, mode, k, p, s)
    pd = pool_desc(mode, k, p, s)
    xs = (3 * 7 * 12, 7 * 12, 12, 2)              # every other element of each row
    xt, yt = Dev(shape, np.float32, xs), Dev(y_ref.shape, np.float32, strides_for(y_ref.shape, "NCHW"))
    ws = hip.hipMalloc(y_ref.size)
    try:
        xt.put(x)
        prob = Problem(FORWARD, pd, xt.desc, yt.desc, save_index=True)
        solver = PoolingForwardNaive()
        assert solver.is_applicable(handle, prob)
        sln = solver.get_solution(handle, prob)
        call = {"steps": {}, "kernels": [], "level": None}
        inv = handle.prepare_invoker(sln.invoker_factory, sln.construction_params, "", "", call)
        inv(handle, FwdInvokeParams(xt.desc, xt.ptr, yt.desc, yt.ptr, pd, ws, y_ref.size))
        hip.hipDeviceSynchronize()
        np.testing.assert_allclose(yt.get(), y_ref.astype(np.float32), rtol=1e-5, atol=1e-6)
        if mode == mi.miopenPoolingMax:
            mask = np.empty(y_ref.size, np.uint8)
            hip.hipMemcpy(mask, ws, y_ref.size, hip.hipMemcpyDeviceToHost)
            assert np.array_equal(mask.reshape(y_ref.shape), widx)
    finally:
        xt.free()
        yt.free()
        hip.hipFree(ws)
