"""hipEventSynchronize: an event recorded on the null stream after a kernel (on the null or a created
stream), and an event never recorded."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch

UPSTREAM = "ROCm/hip-tests:catch/unit/event/hipEventSynchronize.cc"

N = 1024


def _arrays():
    """HipTest::initArrays<float>: A = 3.146 + i, B = 1.618 + i on the host; three device buffers."""
    a_h = (np.arange(N, dtype=np.float32) + np.float32(3.146)).astype(np.float32)
    b_h = (np.arange(N, dtype=np.float32) + np.float32(1.618)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    return a_h, b_h, c_h, [hip.hipMalloc(4 * N) for _ in range(3)]


def _vector_add(mod, stream, dummy=False):
    a_h, b_h, c_h, (a_d, b_d, c_d) = _arrays()
    dummy_event = hip.hipEventCreate() if dummy else None
    end_event = hip.hipEventCreate()
    hip.hipMemcpy(a_d, a_h, 4 * N, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(b_d, b_h, 4 * N, hip.hipMemcpyHostToDevice)
    launch(mod, "vectorADD", [a_d, b_d, c_d, N], stream, n=N)
    if stream is not None:
        hip.hipStreamSynchronize(stream)
    hip.hipEventRecord(end_event, None)
    if dummy:
        hip.hipEventSynchronize(dummy_event)    # never recorded: returns at once
    hip.hipEventSynchronize(end_event)
    hip.hipMemcpy(c_h, c_d, 4 * N, hip.hipMemcpyDeviceToHost)
    if dummy:
        hip.hipEventDestroy(dummy_event)
    hip.hipEventDestroy(end_event)
    assert np.array_equal(c_h, a_h + b_h)
    for p in (a_d, b_d, c_d):
        hip.hipFree(p)


@pytest.mark.parametrize("section", ["null_stream", "created_stream"])
def test_Unit_hipEventSynchronize_Default_Positive(mod, section):
    if section == "null_stream":
        _vector_add(mod, None)
    else:
        s = hip.hipStreamCreate()
        _vector_add(mod, s)
        hip.hipStreamDestroy(s)


def test_Unit_hipEventSynchronize_NoEventRecord_Positive(mod):
    _vector_add(mod, None, dummy=True)
