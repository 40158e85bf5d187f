"""The descriptor and handle API (MIOpen's names, argument order, defaults) and the errors of bad
arguments, each naming what was wrong and carrying MIOpen's miopenStatus_t."""
import numpy as np
import pytest

from hostside import hip
from hostside import miopen as mi
from tests.unit.hostside.miopen.pooling_ref import Dev, pool_desc, strides_for

pytestmark = pytest.mark.timeout(60)
S = mi.miopenStatus_t


def desc4(dt=mi.miopenFloat, lens=(1, 2, 6, 6)):
    d = mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(d, dt, *lens)
    return d


def expect(status, match, fn, *args):
    with pytest.raises(mi.MiopenError, match=match) as ei:
        fn(*args)
    assert ei.value.status == status and str(ei.value).startswith(status.name)


def test_tensor_descriptors():
    d = desc4(mi.miopenHalf, (2, 3, 4, 5))
    assert mi.miopenGet4dTensorDescriptor(d) == (mi.miopenHalf, 2, 3, 4, 5, 60, 20, 5, 1)
    assert mi.miopenGetTensorDescriptorSize(d) == 4
    mi.miopenSetTensorDescriptor(d, mi.miopenFloat, 5, [1, 2, 3, 4, 5], [120, 1, 40, 10, 2])
    assert mi.miopenGetTensorDescriptor(d) == (mi.miopenFloat, [1, 2, 3, 4, 5], [120, 1, 40, 10, 2])
    assert d.layout_str() == "NDHWC" and not d.is_possible_layout("NCDHW")
    mi.miopenSetTensorDescriptor(d, mi.miopenFloat, 4, [2, 3, 4, 5])                  # no strides: packed
    assert mi.miopenGetTensorDescriptor(d)[2] == [60, 20, 5, 1] and d.layout_str() == "NCHW"
    mi.miopenSet4dTensorDescriptorEx(d, mi.miopenFloat, 2, 3, 4, 5, 60, 1, 15, 3)
    assert d.layout_str() == "NHWC"
    mi.miopenDestroyTensorDescriptor(d)
    expect(S.miopenStatusBadParm, "destroyed", mi.miopenGetTensorDescriptorSize, d)


def test_tensor_descriptor_errors():
    d = mi.miopenCreateTensorDescriptor()
    expect(S.miopenStatusBadParm, "never set", mi.miopenGetTensorDescriptor, d)
    expect(S.miopenStatusBadParm, "Lengths .* must be > 0", mi.miopenSet4dTensorDescriptor, d, mi.miopenFloat,
           1, 0, 2, 2)
    expect(S.miopenStatusBadParm, "dataType must be a miopenDataType_t", mi.miopenSet4dTensorDescriptor, d, 4,
           1, 1, 2, 2)
    expect(S.miopenStatusInvalidValue, "dimsA must be given", mi.miopenSetTensorDescriptor, d, mi.miopenFloat,
           4, None)
    expect(S.miopenStatusInvalidValue, "nbDims must be > 0", mi.miopenSetTensorDescriptor, d, mi.miopenFloat,
           0, [1])
    expect(S.miopenStatusBadParm, "Lengths and strides dimensions must be equal", mi.miopenSetTensorDescriptor, d,
           mi.miopenFloat, 4, [1, 1, 2, 2], [4, 4, 2])
    expect(S.miopenStatusBadParm, "Strides .* must be > 0", mi.miopenSetTensorDescriptor, d, mi.miopenFloat, 4,
           [1, 1, 2, 2], [4, 4, 2, 0])
    expect(S.miopenStatusBadParm, "must be a miopenTensorDescriptor_t", mi.miopenGetTensorDescriptor, None)
    expect(S.miopenStatusBadParm, "needs a 4-D descriptor", mi.miopenGet4dTensorDescriptor,
           _nd(mi.miopenFloat, [1, 1, 2, 2, 2]))


def _nd(dt, lens):
    d = mi.miopenCreateTensorDescriptor()
    mi.miopenSetTensorDescriptor(d, dt, len(lens), lens)
    return d


def test_pooling_descriptors():
    pd = mi.miopenCreatePoolingDescriptor()
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingAverageInclusive, 3, 2, 1, 0, 2, 1)
    assert mi.miopenGet2dPoolingDescriptor(pd) == (mi.miopenPoolingAverageInclusive, 3, 2, 1, 0, 2, 1)
    assert mi.miopenGetPoolingIndexType(pd) == mi.miopenIndexUint8
    assert mi.miopenGetPoolingWorkSpaceIndexMode(pd) == mi.miopenPoolingWorkspaceIndexMask
    assert mi.miopenGetPoolingForwardOutputDim(pd, desc4(lens=(2, 3, 7, 5))) == (2, 3, 4, 4)
    mi.miopenSetNdPoolingDescriptor(pd, mi.miopenPoolingMax, 3, [2, 3, 3], [0, 1, 1], [1, 2, 2])
    assert mi.miopenGetNdPoolingDescriptor(pd, 3) == (mi.miopenPoolingMax, 3, [2, 3, 3], [0, 1, 1], [1, 2, 2])
    assert mi.miopenGetNdPoolingDescriptor(pd, 2)[2] == [2, 3]
    assert mi.miopenGetPoolingWorkSpaceIndexMode(pd) == mi.miopenPoolingWorkspaceIndexImage    # 3-D default
    x = _nd(mi.miopenFloat, [1, 2, 4, 5, 6])
    assert mi.miopenGetPoolingNdForwardOutputDim(pd, x, 5) == [1, 2, 3, 3, 3]
    mi.miopenSetPoolingIndexType(pd, mi.miopenIndexUint32)
    mi.miopenSetPoolingWorkSpaceIndexMode(pd, mi.miopenPoolingWorkspaceIndexMask)
    assert mi.miopenGetPoolingIndexType(pd) == mi.miopenIndexUint32
    y = _nd(mi.miopenFloat, [1, 2, 3, 3, 3])
    assert mi.miopenPoolingGetWorkSpaceSizeV2(pd, y) == 54 * 4
    assert mi.miopenPoolingGetWorkSpaceSize(y) == 54
    yt = mi.miopenCreateTensorDescriptor()          # NDHWC y: MIOpen's transpose allowance (x taken as 2 y)
    mi.miopenSetTensorDescriptor(yt, mi.miopenFloat, 5, [1, 2, 3, 3, 3], [54, 1, 18, 6, 2])
    assert mi.miopenPoolingGetWorkSpaceSizeV2(pd, yt) == 54 * 4 + 3 * 54 * 4
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingAverage, 2, 2, 0, 0, 2, 2)
    assert mi.miopenPoolingGetWorkSpaceSizeV2(pd, desc4()) == 0
    mi.miopenDestroyPoolingDescriptor(pd)
    expect(S.miopenStatusBadParm, "destroyed", mi.miopenGet2dPoolingDescriptor, pd)


def test_pooling_descriptor_errors():
    pd = mi.miopenCreatePoolingDescriptor()
    expect(S.miopenStatusBadParm, "never set", mi.miopenGet2dPoolingDescriptor, pd)
    expect(S.miopenStatusBadParm, "window must be >= 1", mi.miopenSet2dPoolingDescriptor, pd,
           mi.miopenPoolingMax, 0, 2, 0, 0, 1, 1)
    expect(S.miopenStatusBadParm, "stride must be >= 1", mi.miopenSet2dPoolingDescriptor, pd,
           mi.miopenPoolingMax, 2, 2, 0, 0, 1, 0)
    expect(S.miopenStatusBadParm, "pad must be >= 0", mi.miopenSet2dPoolingDescriptor, pd,
           mi.miopenPoolingMax, 2, 2, -1, 0, 1, 1)
    expect(S.miopenStatusBadParm, "mode must be a miopenPoolingMode_t", mi.miopenSet2dPoolingDescriptor, pd,
           7, 2, 2, 0, 0, 1, 1)
    expect(S.miopenStatusBadParm, "nbDims must be 1, 2 or 3", mi.miopenSetNdPoolingDescriptor, pd,
           mi.miopenPoolingMax, 4, [1] * 4, [0] * 4, [1] * 4)
    expect(S.miopenStatusBadParm, "index_type must be a miopenIndexType_t", mi.miopenSetPoolingIndexType, pd, 9)
    expect(S.miopenStatusBadParm, "workspace_index must be", mi.miopenSetPoolingWorkSpaceIndexMode, pd, 5)
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingMax, 2, 2, 0, 0, 2, 2)
    expect(S.miopenStatusBadParm, "needs a 4-D tensor", mi.miopenGetPoolingForwardOutputDim, pd,
           _nd(mi.miopenFloat, [1, 1, 2, 2, 2]))


def test_handle_and_stream(platform):
    h = mi.miopenCreate()
    s = hip.hipStreamCreate()
    try:
        assert mi.miopenGetStream(h) is None
        mi.miopenSetStream(h, s)
        assert mi.miopenGetStream(h) is s
        h2 = mi.miopenCreateWithStream(s)
        assert mi.miopenGetStream(h2) is s
        props = hip.hipGetDeviceProperties(0)
        assert h2.arch == props.gcnArchName.split(":")[0] and h2.num_cu == props.multiProcessorCount
        # a pooling on the handle's stream: done once that stream is synchronised
        x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        xt, yt = Dev(x.shape, np.float32, strides_for(x.shape, "NCHW")), Dev((1, 1, 2, 2), np.float32, (4, 4, 2, 1))
        pd = pool_desc(mi.miopenPoolingMax, (2, 2), (0, 0), (2, 2))
        xt.put(x)
        mi.miopenPoolingForward(h2, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, False, None, 0)
        hip.hipStreamSynchronize(s)
        assert yt.get().ravel().tolist() == [5, 7, 13, 15]
        xt.free()
        yt.free()
        mi.miopenDestroy(h2)
        expect(S.miopenStatusBadParm, "destroyed", mi.miopenGetStream, h2)
        expect(S.miopenStatusBadParm, "stream must be a hipStream_t", mi.miopenSetStream, h, "s")
        expect(S.miopenStatusBadParm, "handle must be a miopenHandle_t", mi.miopenGetStream, None)
    finally:
        mi.miopenDestroy(h)
        hip.hipStreamDestroy(s)


@pytest.fixture
def bufs(platform):
    """x (1, 2, 6, 6) float, y (1, 2, 3, 3) float, a workspace, and a 2x2/2 max pooling descriptor."""
    xt, yt = Dev((1, 2, 6, 6), np.float32, strides_for((1, 2, 6, 6), "NCHW")), \
        Dev((1, 2, 3, 3), np.float32, strides_for((1, 2, 3, 3), "NCHW"))
    ws = hip.hipMalloc(256)
    yield xt, yt, ws, pool_desc(mi.miopenPoolingMax, (2, 2), (0, 0), (2, 2))
    xt.free()
    yt.free()
    hip.hipFree(ws)


def test_forward_errors(handle, bufs):
    xt, yt, ws, pd = bufs
    fwd = mi.miopenPoolingForward
    expect(S.miopenStatusBadParm, "handle must be a miopenHandle_t", fwd, None, pd, 1.0, xt.desc, xt.ptr, 0.0,
           yt.desc, yt.ptr, False, None, 0)
    expect(S.miopenStatusBadParm, "poolDesc must be a miopenPoolingDescriptor_t", fwd, handle, xt.desc, 1.0,
           xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, False, None, 0)
    expect(S.miopenStatusUnknownError, "Only alpha=1 and beta=0 is supported", fwd, handle, pd, 2.0, xt.desc, xt.ptr,
           0.0, yt.desc, yt.ptr, False, None, 0)
    expect(S.miopenStatusUnknownError, "Only alpha=1 and beta=0", fwd, handle, pd, 1.0, xt.desc, xt.ptr, 0.5,
           yt.desc, yt.ptr, False, None, 0)
    expect(S.miopenStatusBadParm, "yDesc lengths .* are not the pooling output", fwd, handle, pd, 1.0, xt.desc,
           xt.ptr, 0.0, xt.desc, yt.ptr, False, None, 0)
    expect(S.miopenStatusBadParm, "x must be a device pointer", fwd, handle, pd, 1.0, xt.desc, None, 0.0, yt.desc,
           yt.ptr, False, None, 0)
    expect(S.miopenStatusUnknownError, "workSpace cannot be NULL", fwd, handle, pd, 1.0, xt.desc, xt.ptr, 0.0,
           yt.desc, yt.ptr, True, None, 0)
    expect(S.miopenStatusBadParm, "workSpaceSize 4 is smaller than the 18 bytes", fwd, handle, pd, 1.0, xt.desc,
           xt.ptr, 0.0, yt.desc, yt.ptr, True, ws, 4)
    x3 = _nd(mi.miopenFloat, [2, 6, 6])
    expect(S.miopenStatusUnknownError, "Unsupported pooling dimension", fwd, handle, pd, 1.0, x3, xt.ptr, 0.0,
           yt.desc, yt.ptr, False, None, 0)
    big, ybig = desc4(lens=(1, 1, 32, 32)), desc4(lens=(1, 1, 16, 16))
    img = pool_desc(mi.miopenPoolingMax, (2, 2), (0, 0), (2, 2), ws_mode=mi.miopenPoolingWorkspaceIndexImage)
    expect(S.miopenStatusUnknownError, "Index range not enough for max pooling bwd", fwd, handle, img, 1.0, big,
           xt.ptr, 0.0, ybig, yt.ptr, True, ws, 256)
    yh = desc4(mi.miopenHalf, (1, 2, 3, 3))
    expect(S.miopenStatusNotImplemented, "No solver found", fwd, handle, pd, 1.0, xt.desc, xt.ptr, 0.0, yh, yt.ptr,
           False, None, 0)
    nd = pool_desc(mi.miopenPoolingMax, (2, 2, 2), (0, 0, 0), (2, 2, 2))
    expect(S.miopenStatusBadParm, "a 3-D pooling descriptor needs a 5-D tensor", fwd, handle, nd, 1.0, xt.desc,
           xt.ptr, 0.0, yt.desc, yt.ptr, False, None, 0)
    assert mi.statistics(handle)["calls"] == 1        # only the one that reached the solvers counts


def test_backward_errors(handle, bufs):
    xt, yt, ws, pd = bufs
    bwd = mi.miopenPoolingBackward
    expect(S.miopenStatusBadParm, "workSpace .* is needed for max pooling backward", bwd, handle, pd, 1.0, yt.desc,
           yt.ptr, yt.desc, yt.ptr, xt.desc, xt.ptr, 0.0, xt.desc, xt.ptr, None)
    expect(S.miopenStatusBadParm, "must have the same lengths", bwd, handle, pd, 1.0, yt.desc, yt.ptr, xt.desc,
           yt.ptr, xt.desc, xt.ptr, 0.0, xt.desc, xt.ptr, ws)
    expect(S.miopenStatusUnknownError, "Only alpha=1 and beta=0", bwd, handle, pd, 1.0, yt.desc, yt.ptr, yt.desc,
           yt.ptr, xt.desc, xt.ptr, 1.0, xt.desc, xt.ptr, ws)
    expect(S.miopenStatusBadParm, "dx must be a device pointer", bwd, handle, pd, 1.0, yt.desc, yt.ptr, yt.desc,
           yt.ptr, xt.desc, xt.ptr, 0.0, xt.desc, 0, ws)
