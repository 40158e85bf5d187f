"""The command layer (ROCclr-like): a virtual GPU per stream turns HIP commands into packets on HSA
queues: kernels, markers, SDMA copies and fills, staging for pageable memory, submission batches with
one doorbell, and the hooks kernel replay uses (the dispatch interceptor, the copy fence).

Public face of ``hostside.clr``; ``_vgpu`` behind it is private. Imports ``hostside.hsa`` and
``shm_layout`` only.
"""
from ._vgpu import (KERNEL_HEADER, MARKER_HEADER, SIGNALS_PER_STREAM, STAGING_BYTES, Dispatch, VirtualGPU,
                    copy_fence, interceptor, set_copy_fence, set_interceptor)

__all__ = ["VirtualGPU", "Dispatch", "set_interceptor", "interceptor", "set_copy_fence", "copy_fence",
           "SIGNALS_PER_STREAM", "STAGING_BYTES", "KERNEL_HEADER", "MARKER_HEADER"]
