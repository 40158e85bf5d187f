"""The executionControl ports share the package's platform (``mod``) and kernels/'s code object."""
from pathlib import Path

import pytest

from hostside import hip

KERNELS = Path(__file__).resolve().parent / "kernels"


@pytest.fixture(scope="module")
def kernels(mod):
    """name -> hipFunction_t; ``kernel`` is execution_control_common.cc's (``kernel_`` in the code object)."""
    m = hip.hipModuleLoad(str(KERNELS / "execution_control_kernels.py"))
    yield {"kernel": hip.hipModuleGetFunction(m, "kernel_"),
           "attribute_test_kernel": hip.hipModuleGetFunction(m, "attribute_test_kernel")}
    hip.hipModuleUnload(m)


@pytest.fixture
def kernel(kernels):
    f = kernels["kernel"]
    yield f
    f.max_dyn_shared.clear()        # a fresh process's kernel: nothing set


def launch(f) -> None:
    """kernel<<<1, 1>>>()."""
    hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, [])
