"""execution_control_common.cc's ``kernel`` and hipFuncGetAttributes.cc's ``attribute_test_kernel``
as a code object (upstream takes them by host symbol; hdemu passes their hipFunction_t)."""
from shm_layout.kernels import kernel


@kernel("")
def kernel_(ctx):
    pass


@kernel("")
def attribute_test_kernel(ctx):
    pass
