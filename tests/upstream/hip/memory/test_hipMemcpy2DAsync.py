"""hipMemcpy2DAsync: pitched copies device to host, device to device (between every pair of devices,
with peer access off and on), host to device and host to host, with each kind and pitch, on the null,
per-thread and a created stream; which copies return while earlier device work is still running (host to
device from pageable and pinned memory, device to pinned host, device to device: all of them; device to
pageable host and host to host are disabled on AMD upstream, EXSWHTEC-233); a zero width or height copies
nothing; null pointers and a pitch over maxPitch are hipErrorInvalidValue, a pitch under the width
hipErrorInvalidPitchValue (a bad kind and a destroyed stream are disabled on AMD upstream); a device to
pageable host copy captured into a graph, launched, for each element type, row and column count.
CHECK_IMAGE_SUPPORT is not applied, as in the hipMemcpy2D port: these cases use no image memory, and on
hdemu (ImageSupport 0) it would make them return at once."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memcpy2d_common as m2
from tests.upstream.hip.memory.common import run_captured

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy2DAsync.cc"


def _async(stream):
    def memcpy(dst, dpitch, src, spitch, width, height, kind):
        hip.hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream)
    return memcpy


@pytest.mark.parametrize("section", ["Device to Host", "Device to Device-Peer access disabled",
                                     "Device to Device-Peer access enabled", "Host to Device", "Host to Host"])
@pytest.mark.parametrize("stream", ["nullstream", "perThread", "created"], indirect=True)
def test_Unit_hipMemcpy2DAsync_Positive_Basic(platform, stream, section):
    memcpy = _async(stream)
    if section == "Device to Host":
        m2.device_to_host_shell(memcpy, True, stream)
    elif section.startswith("Device to Device"):
        m2.device_to_device_shell(memcpy, True, section.endswith("enabled"), stream)
    elif section == "Host to Device":
        m2.host_to_device_shell(memcpy, True, stream)
    else:
        m2.host_to_host_shell(memcpy, True, stream)


@pytest.mark.parametrize("section", ["Host to Device-malloc", "Host to Device-hipHostMalloc", "Device to Pinned Host",
                                     "Device to Device"])
def test_Unit_hipMemcpy2DAsync_Positive_Synchronization_Behavior(kmod, section):
    hip.hipDeviceSynchronize()
    memcpy = _async(None)
    if section.startswith("Host to Device"):
        m2.htod_sync_behavior(kmod, memcpy, False, section.split("-")[1])
    elif section == "Device to Pinned Host":
        m2.dtoh_pinned_sync_behavior(kmod, memcpy, False)
    else:
        m2.dtod_sync_behavior(kmod, memcpy, False)


@pytest.mark.parametrize("mult", [(0, 1), (1, 0), (0, 0)])
@pytest.mark.parametrize("section", ["Device to Host", "Device to Device", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy2DAsync_Positive_Parameters(platform, section, mult):
    """Memcpy2DZeroWidthHeight<async> (on the null stream, synchronised after the copy)."""

    def copy(dst, dpitch, src, spitch, width, height, kind):
        hip.hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, None)
        hip.hipStreamSynchronize(None)
    m2.zero_width_height(copy, section, mult)


# "Invalid MemcpyKind" (EXSWHTEC-234) and "Invalid stream" (EXSWHTEC-235) are disabled on AMD upstream, as there.
@pytest.mark.parametrize("case", m2.NEGATIVE_CASES)
@pytest.mark.parametrize("section", ["Host to device", "Device to host", "Host to host", "Device to device"])
def test_Unit_hipMemcpy2DAsync_Negative_Parameters(platform, section, case):
    m2.negative_parameters(_async(None), section, case)


@pytest.mark.parametrize("col", [3, 4, 100])
@pytest.mark.parametrize("row", [3, 4, 100])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64], ids=["int", "float", "double"])
def test_Unit_hipMemcpy2DAsync_capturehipMemcpy2DAsync(platform, dtype, row, col):
    item = np.dtype(dtype).itemsize
    a_h = np.zeros(row * col, dtype=dtype)
    b_h = np.arange(row * col).astype(dtype)
    stream = hip.hipStreamCreate()
    a_d, dev_pitch = hip.hipMallocPitch(item * col, row)
    try:
        hip.hipMemcpy2D(a_d, dev_pitch, b_h, item * col, item * col, row, hip.hipMemcpyHostToDevice)
        hip.hipDeviceSynchronize()
        run_captured(stream, lambda: hip.hipMemcpy2DAsync(a_h, col * item, a_d, dev_pitch, col * item, row,
                                                          hip.hipMemcpyDeviceToHost, stream), sync_device=True)
        assert np.array_equal(a_h, b_h)
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(a_d)
