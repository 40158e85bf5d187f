"""get_function_module.cc as a code object: one kernel (GlobalKernel) and one plain device function
(DeviceKernel), which is not a kernel and so cannot be found with hipModuleGetFunction."""
from shm_layout.kernels import kernel


@kernel("")
def GlobalKernel(ctx):
    pass


def DeviceKernel():
    """A __device__ function: callable from kernels, not launchable."""
