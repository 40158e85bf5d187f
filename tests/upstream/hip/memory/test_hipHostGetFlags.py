"""hipHostGetFlags gives the flags hipHostMalloc was given, for every combination of the portable,
mapped and write-combined flags with AMD's NUMA-user, coherent and non-coherent ones, also when another
thread allocated; a hipMalloc pointer is hipErrorInvalidValue, and the pointer hipHostGetDevicePointer
gives has the same flags. The "Invalid flag ptr" SECTION (a null out-pointer) has no Python form (the
flags are the return value)."""
import threading

import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostGetFlags.cc"

FLAG_PART1 = [hip.hipHostMallocDefault,
              hip.hipHostMallocDefault | hip.hipHostMallocPortable,
              hip.hipHostMallocDefault | hip.hipHostMallocMapped,
              hip.hipHostMallocDefault | hip.hipHostMallocWriteCombined,
              hip.hipHostMallocPortable,
              hip.hipHostMallocPortable | hip.hipHostMallocMapped,
              hip.hipHostMallocPortable | hip.hipHostMallocWriteCombined,
              hip.hipHostMallocMapped,
              hip.hipHostMallocMapped | hip.hipHostMallocWriteCombined,
              hip.hipHostMallocWriteCombined]
#: HT_AMD's FlagPart2Vec (hipHostMallocDefault is the default on AMD)
FLAG_PART2 = [0x0,
              hip.hipHostMallocNumaUser,
              hip.hipHostMallocNumaUser | hip.hipHostMallocCoherent,
              hip.hipHostMallocNumaUser | hip.hipHostMallocNonCoherent,
              hip.hipHostMallocCoherent,
              hip.hipHostMallocNonCoherent]
LEN = 1024 * 1024
SIZE = LEN * 4                              # LEN * sizeof(int)

_part2 = pytest.mark.parametrize("flag_part2", FLAG_PART2, ids=lambda f: f"{f:#x}")
_part1 = pytest.mark.parametrize("flag_part1", FLAG_PART1, ids=lambda f: f"{f:#x}")


def _can_map_host_memory() -> bool:
    return hip.hipGetDeviceProperties(hip.hipGetDevice()).canMapHostMemory == 1


def check_flags(expected: int, obtained: int) -> None:
    assert expected == obtained, f"allocated with {expected:#x}, hipHostGetFlags gave {obtained:#x}"


@_part2
@_part1
def test_Unit_hipHostGetFlags_flagCombos(platform, flag_part1, flag_part2):
    flag_comp = flag_part1 | flag_part2
    if not _can_map_host_memory():
        pytest.skip("Device Property canMapHostMemory is not set")
    a_h = hip.hipHostMalloc(SIZE, flag_comp)
    try:
        check_flags(flag_comp, hip.hipHostGetFlags(a_h))
    finally:
        hip.hipHostFree(a_h)


@_part2
@_part1
def test_Unit_hipHostGetFlags_DifferentThreads(platform, flag_part1, flag_part2):
    flag_comp = flag_part1 | flag_part2
    if not _can_map_host_memory():
        pytest.skip("Device Property canMapHostMemory is not set")
    out = {}

    def malloc_thread():
        try:
            out["a_h"] = hip.hipHostMalloc(SIZE, flag_comp)
        except BaseException as exc:  # noqa: BLE001 - HIP_CHECK_THREAD: reported after the join
            out["exc"] = exc

    t = threading.Thread(target=malloc_thread)
    t.start()
    t.join(60)
    assert not t.is_alive()
    if "exc" in out:
        raise out["exc"]
    try:
        check_flags(flag_comp, hip.hipHostGetFlags(out["a_h"]))
    finally:
        hip.hipHostFree(out["a_h"])


@pytest.mark.parametrize("section", ["Device ptr allocated with hipMalloc passed to hipHostGetFlags",
                                     "Ptr from hipHostGetDevicePointer passed to hipHostGetFlags"])
def test_Unit_hipHostGetFlags_InvalidArgs(platform, section):
    if not _can_map_host_memory():
        pytest.skip("Device Property canMapHostMemory is not set")
    flag_comp = 0x4
    if section.startswith("Device ptr"):
        a_h = hip.hipMalloc(SIZE)
        try:
            with pytest.raises(hip.HipError) as ei:
                hip.hipHostGetFlags(a_h)
            assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
        finally:
            hip.hipFree(a_h)
    else:
        a_h = hip.hipHostMalloc(SIZE, flag_comp)
        try:
            a_d = hip.hipHostGetDevicePointer(a_h, 0)
            assert hip.hipHostGetFlags(a_d) == flag_comp
        finally:
            hip.hipHostFree(a_h)
