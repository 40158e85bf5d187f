"""hipModuleUnload: a null module, a module unloaded twice, and a load/unload round trip."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleUnload.cc"


def test_Unit_hipModuleUnload_Negative_Module_Is_Nullptr(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleUnload(None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle


def test_Unit_hipModuleUnload_Negative_Double_Unload(platform):
    hip.hipFree(0)
    module = load("empty_module.py")
    hip.hipModuleUnload(module)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleUnload(module)
    assert ei.value.error == hip.hipError_t.hipErrorNotFound


def test_Unit_hipModuleLoad_basic(platform):
    module = load("vcpy_kernel.py")
    assert module is not None
    hip.hipModuleUnload(module)
