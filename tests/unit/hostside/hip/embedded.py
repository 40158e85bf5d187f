"""The module fixture the HIP tests share: a fresh embedded platform with the test's config and the
basic test kernels loaded; the platform is torn down (and the config dropped) afterwards."""
from hostside import hip, hsa
from tests.paths import kernel_file


def embedded_module(config: dict, kernels: str = "basic.py"):
    """Generator for a module-scoped fixture: ``yield from embedded_module({...})``."""
    hip.hipDeviceReset()
    hsa.configure(config)
    try:
        yield hip.hipModuleLoad(kernel_file(kernels))
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()
