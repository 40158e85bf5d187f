"""What the ported module tests share: hip_module_common.hh's helpers (load a code object of
``kernels/`` by path, get a kernel) and the packed ``extra`` argument buffer."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hostside import hip

__all__ = ["KERNELS", "path", "load", "load_data", "get_kernel", "read_image", "extra_config", "pack_args",
           "attribute"]

#: the code objects of the ported module tests (the .code files upstream builds from .cc kernels)
KERNELS = Path(__file__).resolve().parent / "kernels"


def path(name: str) -> str:
    return str(KERNELS / name)


def load(name: str) -> hip.hipModule_t:
    """ModuleGuard::LoadModule: hipModuleLoad of a code object in kernels/ by path."""
    return hip.hipModuleLoad(path(name))


def read_image(name: str) -> bytes:
    """LoadModuleIntoBuffer: the bytes of a code object file."""
    return (KERNELS / name).read_bytes()


def load_data(name: str) -> hip.hipModule_t:
    """ModuleGuard::LoadModuleDataFile: hipModuleLoadData of a code object file's bytes."""
    return hip.hipModuleLoadData(read_image(name))


def get_kernel(module, name: str) -> hip.hipFunction_t:
    return hip.hipModuleGetFunction(module, name)


def pack_args(*fields) -> bytes:
    """A kernel's argument struct as bytes: ``fields`` are (numpy dtype, value) pairs laid out in order
    at their natural alignment, as a C struct of them would be (pointers are ``np.uint64``)."""
    out = bytearray()
    for dt, v in fields:
        dt = np.dtype(dt)
        out += b"\0" * ((-len(out)) % dt.itemsize)
        out += np.array([v], dtype=dt).tobytes()
    return bytes(out)


def extra_config(buf: bytes, size: int | None = None) -> list:
    """The ``extra`` array of HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END around ``buf``."""
    return [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE,
            len(buf) if size is None else size, hip.HIP_LAUNCH_PARAM_END]


def attribute(name: str, device: int = 0) -> int:
    """GetDeviceAttribute (hip_test_common.hh): hipDeviceGetAttribute of ``hipDeviceAttribute<name>``."""
    return hip.hipDeviceGetAttribute(getattr(hip.hipDeviceAttribute_t, "hipDeviceAttribute" + name), device)
