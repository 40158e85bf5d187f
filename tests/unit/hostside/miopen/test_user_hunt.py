"""Found by using hostside.miopen as a demanding MIOpen user would, pinned here (each failed before
its fix)."""
import numpy as np
import pytest

from hostside import hip
from hostside import miopen as mi
from tests.unit.hostside.miopen.pooling_ref import Dev, pool_desc, ref_forward, strides_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def max2x2(handle):
    shape = (1, 2, 6, 6)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    y_ref, _w, _i = ref_forward(x, mi.miopenPoolingMax, (2, 2), (0, 0), (2, 2))
    pd = pool_desc(mi.miopenPoolingMax, (2, 2), (0, 0), (2, 2))
    xt = Dev(shape, np.float32, strides_for(shape, "NCHW"))
    yt = Dev(y_ref.shape, np.float32, strides_for(y_ref.shape, "NCHW"))
    xt.put(x)
    try:
        yield pd, xt, yt, y_ref.astype(np.float32)
    finally:
        xt.free()
        yt.free()
        mi.miopenDestroyPoolingDescriptor(pd)


# MIOpen's PoolingDescriptor::Forward / Backward (src/ocl/pooling_ocl.cpp) read *alpha and *beta as
# float and test float_equal(alpha, 1.0) / float_equal(beta, 0): a value that rounds to 1.0f / 0.0f is
# accepted; anything else (NaN, inf, 2.0, 1e-3) is "Only alpha=1 and beta=0 is supported".
@pytest.mark.parametrize("alpha, beta", [(1.0 + 1e-9, 0.0), (1.0, 1e-50), (np.float64(1.0 + 2.0 ** -30), -1e-47),
                                         ([1.0 + 1e-12], [1e-60])])
def test_alpha_beta_that_round_to_one_and_zero_in_float_are_accepted(handle, max2x2, alpha, beta):
    pd, xt, yt, y_ref = max2x2
    yt.fill_nan()
    mi.miopenPoolingForward(handle, pd, alpha, xt.desc, xt.ptr, beta, yt.desc, yt.ptr, False, None, 0)
    hip.hipDeviceSynchronize()
    assert np.array_equal(yt.get(), y_ref)


@pytest.mark.parametrize("alpha, beta", [(1.0 + 1e-6, 0.0), (1.0, 1e-30), (float("nan"), 0.0), (1.0, float("inf")),
                                         (1e300, 0.0), (0.0, 0.0)])
def test_alpha_beta_that_are_not_one_and_zero_in_float_are_refused(handle, max2x2, alpha, beta):
    pd, xt, yt, _y_ref = max2x2
    with pytest.raises(mi.MiopenError, match="Only alpha=1 and beta=0 is supported") as e:
        mi.miopenPoolingForward(handle, pd, alpha, xt.desc, xt.ptr, beta, yt.desc, yt.ptr, False, None, 0)
    assert e.value.status == mi.miopenStatus_t.miopenStatusUnknownError
    with pytest.raises(mi.MiopenError, match="Only alpha=1 and beta=0 is supported"):
        mi.miopenPoolingBackward(handle, pd, alpha, yt.desc, yt.ptr, yt.desc, yt.ptr, xt.desc, xt.ptr, beta,
                                 xt.desc, xt.ptr, yt.ptr)
