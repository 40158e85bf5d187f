"""launch_kernel_module.cc as a code object: the kernels of the hipModuleLaunchKernel /
hipExtModuleLaunchKernel / hipModuleLaunchCooperativeKernel parameter tests."""
import time

from shm_layout.kernels import kernel


@kernel("")
def NOPKernel(ctx):
    pass


@kernel("i32* out")
def Kernel42(ctx, out):
    out[0] = 42


@kernel("u32 interval, u32 ticks_per_ms")
def Delay(ctx, interval, ticks_per_ms):
    """Runs for about ``interval`` milliseconds (ticks_per_ms is unused: the host clock is the clock)."""
    time.sleep(interval / 1000.0)


@kernel("")
def CoopKernel(ctx):
    """cooperative_groups::this_grid().sync(): the whole grid runs as one call, so the barrier holds."""
    pass
