"""Found by using hostside.miopen as a user would (end-to-end programs), pinned here."""
import numpy as np
import pytest

from hostside import hip
from hostside import miopen as mi
from tests.unit.hostside.miopen.pooling_ref import Dev, pool_desc, ref_forward, strides_for

pytestmark = pytest.mark.timeout(120)

_DUMMY = 'from shm_layout.kernels import kernel\n\n@kernel("u32 n")\ndef nop(ctx, n):\n    pass\n'


def _forward(handle, k, s):
    shape = (1, 2, 7, 6)
    x = np.random.default_rng(sum(k) + 7 * sum(s)).standard_normal(shape).astype(np.float32)
    y_ref, _w, _i = ref_forward(x, mi.miopenPoolingMax, k, (0, 0), s)
    pd = pool_desc(mi.miopenPoolingMax, k, (0, 0), s)
    xt = Dev(shape, np.float32, strides_for(shape, "NCHW"))
    yt = Dev(y_ref.shape, np.float32, strides_for(y_ref.shape, "NCHW"))
    try:
        xt.put(x)
        mi.miopenPoolingForward(handle, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, False, None, 0)
        hip.hipDeviceSynchronize()
        assert np.array_equal(yt.get(), y_ref.astype(np.float32)), (k, s)
    finally:
        xt.free()
        yt.free()
        mi.miopenDestroyPoolingDescriptor(pd)


def test_a_handle_gives_back_its_oldest_program_when_every_code_object_slot_is_in_use(handle):
    """The platform has a fixed number of code-object slots and a handle keeps every program it loads:
    a sweep over more distinct pooling configs than slots failed every later call with "all 128
    code-object slots are in use" (miopenStatusUnknownError), where MIOpen runs them all. With the
    slots full but for one, three distinct programs now run (the handle unloads its least recently
    used one), and the evicted config runs again, rebuilt."""
    filler = []
    try:
        while True:             # every free slot but one (other tests' programs may hold some)
            try:
                filler.append(hip.hipModuleLoadData(_DUMMY, "filler"))
            except hip.HipError:
                break
        assert filler, "no code-object slot was free"
        hip.hipModuleUnload(filler.pop())
        configs = [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((2, 3), (1, 2))]
        for k, s in configs:
            _forward(handle, k, s)
        assert mi.statistics(handle)["program_map"] == 1
        _forward(handle, *configs[0])            # evicted: its invoker is gone, the call builds it again
        assert mi.statistics(handle)["last"]["level"] != "invoker_cache"
        _forward(handle, *configs[0])
        assert mi.statistics(handle)["last"]["level"] == "invoker_cache"
    finally:
        for m in filler:
            hip.hipModuleUnload(m)


def test_a_cache_dir_that_is_a_file_is_reported_as_not_a_directory(platform, tmp_path, monkeypatch):
    """MIOPEN_CUSTOM_CACHE_DIR naming a file gave "cannot create directories: Permission denied",
    sending the user to check permissions; the error now says what the filesystem said."""
    f = tmp_path / "a-file"
    f.write_text("")
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(f))
    monkeypatch.setenv("MIOPEN_USER_DB_PATH", str(f))
    h = mi.miopenCreate()
    try:
        with pytest.raises(mi.MiopenError) as ei:
            _forward(h, (2, 2), (1, 1))
        assert ei.value.status == mi.miopenStatus_t.miopenStatusUnknownError
        assert "cannot create directories: Not a directory" in str(ei.value), ei.value
    finally:
        mi.miopenDestroy(h)
