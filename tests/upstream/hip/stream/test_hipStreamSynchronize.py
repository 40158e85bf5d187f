"""hipStreamSynchronize: empty and unknown streams, finishing delayed work (gates), and the null stream
synchronizing the blocking streams of the device."""
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate, launch

from .stream_common import drop_stream, gates, make_stream

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamSynchronize.cc"

OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady


def test_Unit_hipStreamSynchronize_EmptyStream(mod):
    s = hip.hipStreamCreate()
    hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamSynchronize_UninitializedStream(mod):
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamSynchronize(0xFFFF)
    assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed


@pytest.mark.parametrize("kind", ["created", "null", "per_thread"])
def test_Unit_hipStreamSynchronize_FinishWork(mod, kind):
    s = make_stream(kind)
    with Gate(mod) as g:
        g.launch(s)
        g.open()        # upstream's delay ends by itself; synchronize must still wait for it
        hip.hipStreamSynchronize(s)
        assert hip.hipStreamQuery(s) == OK
    drop_stream(kind, s)


def test_Unit_hipStreamSynchronize_NullStreamSynchronization(mod):
    streams = [hip.hipStreamCreate() for _ in range(10)]
    with Gate(mod) as g:
        for s in streams:
            g.launch(s)
        assert hip.hipStreamQuery(None) == NOT_READY
        for s in streams:
            assert hip.hipStreamQuery(s) == NOT_READY
        g.open()
        hip.hipStreamSynchronize(None)
        assert hip.hipStreamQuery(None) == OK
        for s in streams:
            assert hip.hipStreamQuery(s) == OK
    for s in streams:
        hip.hipStreamDestroy(s)


# Upstream skips this case on AMD (EXSWCPHIPT-22) and runs it elsewhere; the port runs the body.
@pytest.mark.parametrize("section", ["no_null_stream", "kernel_on_null_stream", "query_null_stream"])
def test_Unit_hipStreamSynchronize_SynchronizeStreamAndQueryNullStream(mod, section):
    s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
    with gates(mod, 2) as (g1, g2):     # upstream: 500 ms on stream1, 2000 ms on stream2
        g1.launch(s1)
        g2.launch(s2)
        if section == "kernel_on_null_stream":
            launch(mod, "empty", [], None)
        elif section == "query_null_stream":
            assert hip.hipStreamQuery(None) == NOT_READY
        assert hip.hipStreamQuery(s1) == NOT_READY
        assert hip.hipStreamQuery(s2) == NOT_READY
        g1.open()
        hip.hipStreamSynchronize(s1)
        assert hip.hipStreamQuery(s1) == OK
        assert hip.hipStreamQuery(s2) == NOT_READY
        assert hip.hipStreamQuery(None) == NOT_READY
        g2.open()
        hip.hipStreamSynchronize(s2)
        assert hip.hipStreamQuery(s2) == OK
    hip.hipStreamDestroy(s1)
    hip.hipStreamDestroy(s2)


def test_Unit_hipStreamSynchronize_NullStreamAndStreamPerThread(mod):
    with gates(mod, 2) as (g1, g2):
        g1.launch(hip.hipStreamPerThread)
        assert hip.hipStreamQuery(None) == NOT_READY
        assert hip.hipStreamQuery(hip.hipStreamPerThread) == NOT_READY
        g2.launch(None)
        g1.open()
        g2.open()
        hip.hipStreamSynchronize(None)
        assert hip.hipStreamQuery(hip.hipStreamPerThread) == OK
        assert hip.hipStreamQuery(None) == OK
