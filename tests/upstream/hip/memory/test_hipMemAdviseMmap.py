"""hipMemAdvise of mmap()ed file memory (read-mostly, preferred location and accessed-by device 0), on a
device with pageable memory access; the HMM attributes of device 0 are read first. hdemu's devices have
no pageable memory access (hipDeviceAttributePageableMemoryAccess 0): the case succeeds after the
attribute queries, as upstream's does on such a device. The file is written to pytest's tmp_path, not
the working directory."""
import mmap

import numpy as np

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import host_address

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemAdviseMmap.cc"

A = hip.hipDeviceAttribute_t
NUM_ELMS = 212992


def test_Unit_hipMemAdvise_MmapMem(platform, tmp_path):
    for attr in (A.hipDeviceAttributeDirectManagedMemAccessFromHost, A.hipDeviceAttributeConcurrentManagedAccess,
                 A.hipDeviceAttributePageableMemoryAccessUsesHostPageTables, A.hipDeviceAttributeManagedMemory):
        hip.hipDeviceGetAttribute(attr, 0)
    pageable_mem = hip.hipDeviceGetAttribute(A.hipDeviceAttributePageableMemoryAccess, 0)
    if pageable_mem != 1:
        return          # SUCCEED("GPU 0 doesn't support hipDeviceAttributePageableMemoryAccess ...")
    path = tmp_path / "ForTest1.txt"
    path.write_bytes(np.arange(NUM_ELMS, dtype=np.int32).tobytes())      # putw(m, fptr) for each m
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) as mm:
        view = np.frombuffer(mm, np.uint8)
        try:
            ptr, size = host_address(view), view.nbytes
            hip.hipMemAdvise(ptr, size, hip.hipMemoryAdvise.hipMemAdviseSetReadMostly, 0)
            hip.hipMemAdvise(ptr, size, hip.hipMemoryAdvise.hipMemAdviseSetPreferredLocation, 0)
            hip.hipMemAdvise(ptr, size, hip.hipMemoryAdvise.hipMemAdviseSetAccessedBy, 0)
        finally:
            del view
