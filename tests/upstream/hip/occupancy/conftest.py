"""The occupancy ports share the package's platform (``mod``, tests/upstream/hip/conftest.py) and the
code objects of kernels/."""
from pathlib import Path

import pytest

from hostside import hip

KERNELS = Path(__file__).resolve().parent / "kernels"


@pytest.fixture(scope="module")
def kernels(mod):
    """The kernels the runtime-API tests take by host symbol upstream: name -> hipFunction_t."""
    m = hip.hipModuleLoad(str(KERNELS / "occupancy_kernels.py"))
    yield {n: hip.hipModuleGetFunction(m, n) for n in ("f1", "f2", "kern1", "copyKer", "copyKerDyn")}
    hip.hipModuleUnload(m)


@pytest.fixture
def simple_kernel(mod):
    """hipModuleLoad("simple_kernel.code") and its SimpleKernel, unloaded afterwards."""
    hip.hipFree(0)
    m = hip.hipModuleLoad(str(KERNELS / "simple_kernel.py"))
    yield hip.hipModuleGetFunction(m, "SimpleKernel")
    hip.hipModuleUnload(m)
