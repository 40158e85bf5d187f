"""hipEventQuery: a finished and a pending record, queried from the device they were recorded on and from
another device (upstream's 3 s delay is a gate)."""
from hostside import hip
from tests.upstream.hip.stream.stream_common import gates

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEventQuery.cc"

OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady


def test_Unit_hipEventQuery_DifferentDevice(mod):
    ev1, ev2 = hip.hipEventCreate(), hip.hipEventCreate()
    assert ev1 is not None and ev2 is not None
    s = hip.hipStreamCreate()
    with gates(mod, 1) as (g,):
        hip.hipSetDevice(0)
        hip.hipEventRecord(ev1, s)
        g.launch(s)
        hip.hipEventRecord(ev2, s)
        hip.hipEventSynchronize(ev1)
        assert hip.hipEventQuery(ev1) == OK
        assert hip.hipEventQuery(ev2) == NOT_READY       # the stream is held by the gate
        hip.hipSetDevice(1)
        assert hip.hipEventQuery(ev1) == OK
        assert hip.hipEventQuery(ev2) == NOT_READY
        g.open()
        hip.hipEventSynchronize(ev2)
        assert hip.hipEventQuery(ev2) == OK
        hip.hipSetDevice(0)
        assert hip.hipEventQuery(ev2) == OK
    hip.hipEventDestroy(ev1)
    hip.hipEventDestroy(ev2)
    hip.hipStreamDestroy(s)
