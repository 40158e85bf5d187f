"""hipModuleLoad: load a code object file by path, and the errors for a bad path or a file that is
not a code object."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import load, path

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleLoad.cc"


def test_Unit_hipModuleLoad_Positive_Basic(platform):
    hip.hipFree(0)
    module = load("empty_module.py")
    assert module is not None
    hip.hipModuleUnload(module)


# SECTION "module == nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("fname, error", [
    pytest.param(None, "hipErrorInvalidValue", id="fname == nullptr"),
    pytest.param("", "hipErrorInvalidValue", id="fname == empty string"),
    pytest.param("non existent file", "hipErrorFileNotFound", id="fname == non existent file"),
])
def test_Unit_hipModuleLoad_Negative_Parameters(platform, fname, error):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleLoad(fname)
    assert ei.value.error == hip.hipError_t[error]


def test_Unit_hipModuleLoad_Negative_Load_From_A_File_That_Is_Not_A_Module(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleLoad(path("not_a_module.txt"))
    assert ei.value.error == hip.hipError_t.hipErrorInvalidImage
