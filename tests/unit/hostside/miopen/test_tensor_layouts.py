"""Tensor descriptors as MIOpen's src/tensor.cpp and tensor_api.cpp make them: the fp8 data types,
miopenSetNdTensorDescriptorWithLayout (packed strides in the layout, vectorised NCHWc / CHWNc, a layout
of the other rank refused) and miopenSetTensorDescriptorV2 (found by the port of test/gtest/tensor_api.cpp)."""
import pytest

from hostside import miopen as mi


def _desc():
    return mi.miopenCreateTensorDescriptor()


@pytest.mark.parametrize("dt", [mi.miopenFloat8, mi.miopenBFloat8])
def test_fp8_types_make_descriptors(dt):
    d = _desc()
    mi.miopenSet4dTensorDescriptor(d, dt, 2, 3, 4, 5)
    assert mi.miopenGetTensorDescriptor(d) == (dt, [2, 3, 4, 5], [60, 20, 5, 1])
    assert d.num_bytes == 120                   # one byte per element
    mi.miopenSetTensorDescriptor(d, int(dt), 2, [7, 9], None)
    assert mi.miopenGetTensorDescriptor(d)[0] == dt


@pytest.mark.parametrize("bad", [-1, 4, 10])
def test_types_outside_the_enum_are_bad_parm(bad):
    with pytest.raises(mi.MiopenError) as ei:
        mi.miopenSet4dTensorDescriptor(_desc(), bad, 1, 1, 1, 1)
    assert ei.value.status == mi.miopenStatus_t.miopenStatusBadParm


@pytest.mark.parametrize("layout, lens, want_lens, want_strides, layout_str", [
    (mi.miopenTensorNCHW, [4, 16, 9, 16], [4, 16, 9, 16], [2304, 144, 16, 1], "NCHW"),
    (mi.miopenTensorNHWC, [4, 16, 9, 16], [4, 16, 9, 16], [2304, 1, 256, 16], "NHWC"),
    (mi.miopenTensorCHWN, [4, 16, 9, 16], [4, 16, 9, 16], [1, 576, 64, 4], "CHWN"),
    (mi.miopenTensorNCHWc4, [4, 16, 9, 16], [4, 4, 9, 16], [2304, 576, 64, 4], None),
    (mi.miopenTensorCHWNc8, [4, 16, 9, 16], [2, 9, 16, 4], [4608, 512, 32, 8], None),
    (mi.miopenTensorNCDHW, [4, 4, 16, 9, 16], [4, 4, 16, 9, 16], [9216, 2304, 144, 16, 1], "NCDHW"),
    (mi.miopenTensorNDHWC, [4, 4, 16, 9, 16], [4, 4, 16, 9, 16], [9216, 1, 576, 64, 4], "NDHWC"),
])
def test_set_nd_with_layout(layout, lens, want_lens, want_strides, layout_str):
    d = _desc()
    mi.miopenSetNdTensorDescriptorWithLayout(d, mi.miopenFloat, layout, lens, len(lens))
    assert mi.miopenGetTensorDescriptor(d) == (mi.miopenFloat, want_lens, want_strides)
    n = 1
    for v in lens:
        n *= v
    assert d.element_size == n and d.packed
    if layout_str:
        assert d.layout_str() == layout_str


@pytest.mark.parametrize("layout, lens, num, status", [
    (mi.miopenTensorNCHW, [1, 2, 3, 4, 5], 5, "miopenStatusBadParm"),       # a 4-D layout, 5 lengths
    (mi.miopenTensorNDHWC, [1, 2, 3, 4], 4, "miopenStatusBadParm"),
    (9, [1, 2, 3, 4], 4, "miopenStatusBadParm"),                            # not a layout
    (mi.miopenTensorNCHWc8, [1, 4, 3, 3], 4, "miopenStatusBadParm"),         # C % 8 != 0
    (mi.miopenTensorNCHW, [1, 0, 3, 4], 4, "miopenStatusBadParm"),
    (mi.miopenTensorNCHW, None, 4, "miopenStatusInvalidValue"),
    (mi.miopenTensorNCHW, [1, 2, 3, 4], 0, "miopenStatusInvalidValue"),
])
def test_set_nd_with_layout_refuses(layout, lens, num, status):
    with pytest.raises(mi.MiopenError) as ei:
        mi.miopenSetNdTensorDescriptorWithLayout(_desc(), mi.miopenFloat, layout, lens, num)
    assert ei.value.status == mi.miopenStatus_t[status]


def test_set_tensor_descriptor_v2():
    d = _desc()
    mi.miopenSetTensorDescriptorV2(d, mi.miopenHalf, 3, [16, 9, 16], [200, 20, 1])
    assert mi.miopenGetTensorDescriptor(d) == (mi.miopenHalf, [16, 9, 16], [200, 20, 1])
    mi.miopenSetTensorDescriptorV2(d, mi.miopenHalf, 2, [9, 16], None)
    assert mi.miopenGetTensorDescriptor(d) == (mi.miopenHalf, [9, 16], [16, 1])
    with pytest.raises(mi.MiopenError):
        mi.miopenSetTensorDescriptorV2(d, mi.miopenHalf, 2, [9, -1], None)
