"""Whether a memset waits for earlier device work: with device work still running on the stream,
asynchronous memsets and synchronous ones on device memory return at once (the stream is then still
busy); a synchronous memset of pinned host memory waits for it. 1-D parts only: Unit_hipMemset2DSync and
Unit_hipMemset3DSync need hipMallocPitch / hipMemset2D / hipMalloc3D / hipMemset3D, and the
hipHostRegister allocation kinds are left out (not in hdemu). Upstream's 100 ms delay kernel is a gate;
upstream's GENERATE over the widths 512 and 1024 is a loop inside each case."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memset_common as m

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetSync.cc"

TEST_VALUE = 0x11
WIDTHS = (512, 1024)


def _cases():
    for kind in m.ALLOC_KINDS:
        for stream_type in ("null", "created"):
            for is_async in (True, False):
                yield pytest.param(kind, stream_type, is_async,
                                   id=f"{kind}-{stream_type}-{'async' if is_async else 'sync'}")


def _run_tests(kmod, api, dtype, kind, stream_type, is_async):
    stream = hip.hipStreamCreate() if stream_type == "created" else None
    try:
        for width in WIDTHS:
            ptr = m.alloc(kind, width * np.dtype(dtype).itemsize)
            try:
                m.sync_check(kmod, lambda: m.memset_call(api, ptr, TEST_VALUE, width, is_async, stream),
                             should_wait=not (is_async or kind == "deviceMalloc"), stream=stream)
                hip.hipStreamSynchronize(stream)
                assert np.all(m.read_back(kind, ptr, width, dtype) == TEST_VALUE), width
            finally:
                m.free(kind, ptr)
    finally:
        if stream is not None:
            hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
def test_Unit_hipMemsetSync(kmod, kind, stream_type, is_async):
    _run_tests(kmod, "hipMemset", np.int8, kind, stream_type, is_async)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
@pytest.mark.parametrize("api,dtype", [("D8", np.int8), ("D16", np.int16), ("D32", np.uint32)],
                         ids=["int8_t", "int16_t", "uint32_t"])
def test_Unit_hipMemsetDSync(kmod, api, dtype, kind, stream_type, is_async):
    _run_tests(kmod, api, dtype, kind, stream_type, is_async)
