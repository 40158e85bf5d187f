"""MIOpen test/gtest/tensor_api.cpp: every tensor-descriptor setter (miopenSet4dTensorDescriptor,
miopenSetNdTensorDescriptorWithLayout, miopenSet4dTensorDescriptorEx, miopenSetTensorDescriptor,
miopenSetTensorDescriptorV2) on the valid configs (each data type, each layout, 1 to 5 dimensions
with and without strides) and on the wrong configs derived from each (null descriptor, bad data type,
bad layout, bad number of dimensions, no lengths, zero or negative lengths or strides); a valid set
is read back with miopenGet4dTensorDescriptor / miopenGetTensorDescriptor. Out-of-range enum values
are used, as in upstream's release builds (USE_OUT_OF_RANGE_ENUM).

A C pointer becomes a Python list (None for nullptr); a call "fails" when it raises MiopenError. The
valid suite has one case per config; the wrong configs are grouped by the valid config they are
derived from (one case runs its 10 to 20 variants, each with its own assertion message)."""
from dataclasses import dataclass, replace

import pytest

from hostside import miopen as mi

UPSTREAM = "ROCm/MIOpen:test/gtest/tensor_api.cpp"

FIRST_TYPE, LAST_TYPE = 0, 9            # miopenHalf .. miopenInt64
FIRST_LAYOUT, LAST_LAYOUT = 0, 8        # miopenTensorNCHW .. miopenTensorNDHWC
DIMS = [4, 4, 16, 9, 16]
STRIDES = [9216, 2304, 144, 16, 1]
LAYOUTS_4D = [0, 1, 2, 3, 4, 5, 6]
LAYOUTS_5D = [7, 8]
WRONG_DIMS = ([0] * 8, [-1] * 8)
SKIPPED, PASSED, FAILED = "skipped", "passed", "failed"


@dataclass(frozen=True)
class Params:
    data_type: int
    layout: int | None
    nb_dims: int
    dims: tuple | None
    strides: tuple | None

    def __str__(self):
        return (f"type:{self.data_type},layout:{'none' if self.layout is None else self.layout},ndims:{self.nb_dims},"
                f"dimsA:{'none' if self.dims is None else 'x'.join(map(str, self.dims[:max(self.nb_dims, 0)]))},"
                f"stridesA:{'none' if self.strides is None else 'x'.join(map(str, self.strides[:max(self.nb_dims, 0)]))}")


@dataclass(frozen=True)
class Config:
    null_desc: bool
    params: Params
    valid: bool


def ndims_for(layout):
    return 4 if layout in LAYOUTS_4D else 5 if layout in LAYOUTS_5D else 0


def _call(fn, *args):
    try:
        fn(*args)
    except mi.MiopenError:
        return FAILED
    return PASSED


# -- the setters, with upstream's skip rules ---------------------------------------------------------------

def set_4d(desc, p, check_skip):
    if p.layout is not None and p.layout != mi.miopenTensorNCHW:
        return SKIPPED
    if p.nb_dims != 4 or p.dims is None or p.strides is not None:
        return SKIPPED
    return PASSED if check_skip else _call(mi.miopenSet4dTensorDescriptor, desc, p.data_type, *p.dims[:4])


def set_nd_with_layout(desc, p, check_skip):
    if p.layout is None or p.strides is not None:
        return SKIPPED
    if check_skip:
        return PASSED
    dims = None if p.dims is None else list(p.dims)
    return _call(mi.miopenSetNdTensorDescriptorWithLayout, desc, p.data_type, p.layout, dims, p.nb_dims)


def set_4d_ex(desc, p, check_skip):
    if p.layout is not None or p.nb_dims != 4 or p.dims is None or p.strides is None:
        return SKIPPED
    return PASSED if check_skip else _call(mi.miopenSet4dTensorDescriptorEx, desc, p.data_type, *p.dims[:4],
                                           *p.strides[:4])


def set_tensor(desc, p, check_skip, fn=mi.miopenSetTensorDescriptor):
    if p.layout is not None:
        return SKIPPED
    if check_skip:
        return PASSED
    return _call(fn, desc, p.data_type, p.nb_dims, None if p.dims is None else list(p.dims),
                 None if p.strides is None else list(p.strides))


def set_tensor_v2(desc, p, check_skip):
    return set_tensor(desc, p, check_skip, mi.miopenSetTensorDescriptorV2)


SETTERS = (set_4d, set_nd_with_layout, set_4d_ex, set_tensor, set_tensor_v2)


# -- the getters ------------------------------------------------------------------------------------------

def get_4d(desc, p):
    if p.layout is not None or p.nb_dims != 4:
        return SKIPPED
    try:
        dt, *rest = mi.miopenGet4dTensorDescriptor(desc)
    except mi.MiopenError:
        return FAILED
    dims, strides = rest[:4], rest[4:]
    if dt != p.data_type or list(dims) != list(p.dims[:4]) or (p.strides is not None and list(strides) != list(p.strides[:4])):
        return FAILED
    return PASSED


def get_tensor(desc, p):
    if p.layout is not None and (p.layout not in (mi.miopenTensorNCHW, mi.miopenTensorNCDHW) or p.strides is not None):
        return SKIPPED
    try:
        size = mi.miopenGetTensorDescriptorSize(desc)
        dt, dims, strides = mi.miopenGetTensorDescriptor(desc)
    except mi.MiopenError:
        return FAILED
    if size < 0 or size != p.nb_dims:
        return FAILED
    if dt != p.data_type or list(dims) != list(p.dims[:size]) or (p.strides is not None and list(strides) != list(p.strides[:size])):
        return FAILED
    return PASSED


GETTERS = (get_4d, get_tensor)


# -- the configs ------------------------------------------------------------------------------------------

def valid_configs():
    out = []
    for dt in range(FIRST_TYPE, LAST_TYPE + 1):
        if dt == 4:                         # miopenInt8x4
            continue
        for layout in range(FIRST_LAYOUT, LAST_LAYOUT + 1):
            n = ndims_for(layout)
            out.append(Config(False, Params(dt, layout, n, tuple(DIMS[5 - n:]), None), True))
        for use_strides in (False, True):
            for n in range(1, 6):
                out.append(Config(False, Params(dt, None, n, tuple(DIMS[5 - n:]),
                                                tuple(STRIDES[5 - n:]) if use_strides else None), True))
    return out


def wrong_configs(valid: Config):
    p = valid.params
    wrong_types = [FIRST_TYPE - 1, LAST_TYPE + 1, 4]
    wrong_layouts = [FIRST_LAYOUT - 1, LAST_LAYOUT + 1]
    if p.strides is not None:
        wrong_layouts += LAYOUTS_4D + LAYOUTS_5D
    elif p.nb_dims == 4:
        wrong_layouts += LAYOUTS_5D
    elif p.nb_dims == 5:
        wrong_layouts += LAYOUTS_4D
    wrong_ndims = [-1, 0]
    if p.layout is not None:
        n = ndims_for(p.layout)
        wrong_ndims += [n - 1, n + 1]
    out = [replace(valid, null_desc=True, valid=False)]
    out += [Config(False, replace(p, data_type=t), False) for t in wrong_types]
    out += [Config(False, replace(p, layout=lay), False) for lay in wrong_layouts]
    out += [Config(False, replace(p, nb_dims=n), False) for n in wrong_ndims]
    out.append(Config(False, replace(p, dims=None), False))
    out += [Config(False, replace(p, dims=tuple(d)), False) for d in WRONG_DIMS]
    if p.strides is not None:
        out += [Config(False, replace(p, strides=tuple(s)), False) for s in WRONG_DIMS]
    return out


def run_test(config: Config):
    """TestSetTensor::RunTest: every setter that does not skip the config; a valid config must not fail
    (and reads back through every getter), a wrong one must not pass."""
    for setter in SETTERS:
        if setter(None, config.params, True) == SKIPPED:
            continue
        desc = None if config.null_desc else mi.miopenCreateTensorDescriptor()
        status = setter(desc, config.params, False)
        what = f"{setter.__name__} on ({'null_td,' if config.null_desc else ''}{config.params})"
        if config.valid:
            assert status != FAILED, what
            for getter in GETTERS:
                assert getter(desc, config.params) != FAILED, f"{getter.__name__} after {what}"
        else:
            assert status != PASSED, what
        if desc is not None:
            mi.miopenDestroyTensorDescriptor(desc)


VALID = valid_configs()
IDS = [str(c.params) for c in VALID]


@pytest.mark.parametrize("config", VALID, ids=IDS)
def test_CPU_ApiTestSetTensorDescriptor_NONE_TD(config):
    run_test(config)


@pytest.mark.parametrize("valid", VALID, ids=IDS)
def test_CPU_ApiTestSetWrongTensorDescriptor_NONE_TD(valid):
    for config in wrong_configs(valid):
        run_test(config)
