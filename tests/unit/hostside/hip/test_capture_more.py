"""hipStreamGetCaptureInfo_v2, hipStreamUpdateCaptureDependencies, hipStreamBeginCaptureToGraph,
user objects, hipGraphInstantiateWithParams and hipGraphExecGetFlags (_capture_more, _userobj)."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(60)
E = hip.hipError_t
NO_SYNC = hip.hipUserObjectNoDestructorSync


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 2}, "upstream.py")


def _err(err, fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == err


def _set(mod, ptr, value, stream):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "set_value"), 1, 1, 1, 16, 1, 1, 0, stream,
                              [ptr, value, 16])


# -- capture dependencies ---------------------------------------------------------------------------
@pytest.mark.parametrize("flag", [hip.hipStreamSetCaptureDependencies, hip.hipStreamAddCaptureDependencies],
                         ids=["Set", "Add"])
def test_updated_dependencies_become_the_next_nodes_edges(mod, stream, dmem, flag):
    p = dmem(64)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    _set(mod, p, 1, stream)
    _s, _id, g, (a,) = hip.hipStreamGetCaptureInfo_v2(stream)
    m = hip.hipGraphAddEmptyNode(g, None)                 # added by hand: need not be joined
    hip.hipStreamUpdateCaptureDependencies(stream, [m, m], flag)    # a node twice counts once
    assert hip.hipStreamGetCaptureInfo_v2(stream)[3] == ([m] if flag else [a, m])
    _set(mod, p, 2, stream)
    graph = hip.hipStreamEndCapture(stream)
    assert graph is g
    b = hip.hipGraphGetNodes(graph)[-1]
    assert hip.hipGraphNodeGetDependencies(b) == ([m] if flag else [a, m])
    assert hip.hipGraphGetRootNodes(graph) == [a, m]
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)


def test_update_dependencies_bad_arguments(mod, stream, dmem):
    p = dmem(64)
    other = hip.hipGraphCreate()
    stranger = hip.hipGraphAddEmptyNode(other, None)
    _err(E.hipErrorIllegalState, hip.hipStreamUpdateCaptureDependencies, stream, [], 0)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    _set(mod, p, 1, stream)
    _s, _id, g, deps = hip.hipStreamGetCaptureInfo_v2(stream)
    _err(E.hipErrorInvalidValue, hip.hipStreamUpdateCaptureDependencies, stream, [stranger], 0)
    _err(E.hipErrorInvalidValue, hip.hipStreamUpdateCaptureDependencies, stream, deps, 2)
    _err(E.hipErrorInvalidValue, hip.hipStreamUpdateCaptureDependencies, stream, deps * 2, 0)   # more than nodes
    _err(E.hipErrorInvalidValue, hip.hipStreamUpdateCaptureDependencies, stream, ["node"], 0)
    assert hip.hipStreamGetCaptureInfo_v2(stream)[3] == deps                 # unchanged
    hip.hipGraphDestroy(hip.hipStreamEndCapture(stream))
    hip.hipGraphDestroy(other)


def test_capture_info_v2_of_an_invalidated_capture_is_the_status_only(mod, stream):
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    _err(E.hipErrorStreamCaptureUnsupported, hip.hipStreamSynchronize, stream)
    assert hip.hipStreamGetCaptureInfo_v2(stream) == (hip.hipStreamCaptureStatusInvalidated, 0, None, [])
    _err(E.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, stream)


def test_begin_capture_to_graph_bad_arguments_leave_the_stream_idle(mod, stream):
    g, other = hip.hipGraphCreate(), hip.hipGraphCreate()
    n = hip.hipGraphAddEmptyNode(other, None)
    _err(E.hipErrorNotSupported, hip.hipStreamBeginCaptureToGraph, stream, g, None, [object()])
    _err(E.hipErrorInvalidValue, hip.hipStreamBeginCaptureToGraph, stream, g, [n])
    hip.hipGraphDestroy(other)
    _err(E.hipErrorInvalidValue, hip.hipStreamBeginCaptureToGraph, stream, other)       # destroyed
    _err(E.hipErrorStreamCaptureUnsupported, hip.hipStreamBeginCaptureToGraph, 0, g)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    hip.hipGraphDestroy(g)


def test_begin_capture_to_graph_appends_after_the_given_nodes(mod, stream, dmem):
    p = dmem(64)
    g = hip.hipGraphCreate()
    root = hip.hipGraphAddEmptyNode(g, None)
    loose = hip.hipGraphAddEmptyNode(g, None)             # the graph's own leaf: need not be joined
    hip.hipStreamBeginCaptureToGraph(stream, g, [root])
    status, _id, cg, deps = hip.hipStreamGetCaptureInfo_v2(stream)
    assert (status, cg, deps) == (hip.hipStreamCaptureStatusActive, g, [root])
    _set(mod, p, 7, stream)
    assert hip.hipStreamEndCapture(stream) is g
    k = hip.hipGraphGetNodes(g)[-1]
    assert hip.hipGraphNodeGetDependencies(k) == [root] and loose in hip.hipGraphGetRootNodes(g)
    exe = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    out = np.zeros(16, np.int32)
    hip.hipMemcpy(out, p, 64, hip.hipMemcpyDeviceToHost)
    assert (out == 7).all()
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)


# -- user objects -----------------------------------------------------------------------------------
class Calls(list):
    def __call__(self, ptr):
        self.append((ptr, threading.get_ident()))


def test_destructor_runs_once_in_the_thread_that_destroys_the_last_exec(mod, stream):
    calls = Calls()
    with Gate(mod) as gate:
        g = hip.hipGraphCreate()
        hip.hipGraphAddKernelNode(g, None, hip.hipKernelNodeParams(hip.hipModuleGetFunction(mod, "gate"), 1, 1, 0,
                                                                   [gate.ptr, 30.0]))
        u = hip.hipUserObjectCreate("payload", calls, 1, NO_SYNC)
        hip.hipGraphRetainUserObject(g, u, 1, hip.hipGraphUserObjectMove)
        exe = hip.hipGraphInstantiate(g)
        hip.hipGraphDestroy(g)                            # the exec still holds a reference
        assert calls == []
        hip.hipGraphLaunch(exe, stream)
        t = threading.Thread(target=hip.hipGraphExecDestroy, args=(exe,))
        t.start()
        assert calls == []                                # the launch is still in flight (gate closed)
        gate.open()
        t.join(30)
        assert not t.is_alive()
    assert calls == [("payload", t.ident)]
    hip.hipUserObjectRelease(u)                           # gone already: a no-op
    assert len(calls) == 1


def test_clones_child_nodes_and_execs_own_a_reference_each(mod):
    calls = Calls()
    u = hip.hipUserObjectCreate(1, calls, 1, NO_SYNC)
    g = hip.hipGraphCreate()
    hip.hipGraphRetainUserObject(g, u)                    # a new reference: 2
    hip.hipUserObjectRelease(u)                           # the graph's only: 1
    clone = hip.hipGraphClone(g)
    parent = hip.hipGraphCreate()
    hip.hipGraphAddChildGraphNode(parent, None, g)        # the node's copy owns one too
    exe = hip.hipGraphInstantiate(parent)                 # and the exec, through the child
    for h in (g, clone, parent):
        hip.hipGraphDestroy(h)
        assert calls == []
    hip.hipGraphExecDestroy(exe)
    assert calls == [(1, threading.get_ident())]


def test_a_raising_destructor_is_logged_and_the_release_succeeds(mod, caplog):
    def bad(_ptr):
        raise RuntimeError("boom")
    u = hip.hipUserObjectCreate(None, bad, 1, NO_SYNC)
    hip.hipUserObjectRelease(u)
    assert "boom" in caplog.text
    hip.hipUserObjectRelease(u)


def test_user_object_bad_arguments(mod):
    u = hip.hipUserObjectCreate(None, Calls(), 1, NO_SYNC)
    g = hip.hipGraphCreate()
    _err(E.hipErrorInvalidValue, hip.hipUserObjectCreate, None, Calls(), 1, 0)     # CLR requires the flag
    _err(E.hipErrorInvalidValue, hip.hipUserObjectCreate, None, Calls(), 2 ** 31, NO_SYNC)
    _err(E.hipErrorInvalidValue, hip.hipUserObjectRetain, u, True)
    _err(E.hipErrorInvalidValue, hip.hipUserObjectRelease, "u")
    _err(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, g, u, 1, 2)
    hip.hipGraphDestroy(g)
    _err(E.hipErrorInvalidValue, hip.hipGraphRetainUserObject, g, u)             # destroyed graph
    hip.hipUserObjectRelease(u)


# -- instantiate with params, exec flags ------------------------------------------------------------
def test_instantiate_with_params_upload_and_exec_flags(mod, stream):
    g = hip.hipGraphCreate()
    hip.hipGraphAddEmptyNode(g, None)
    p = hip.hipGraphInstantiateParams(flags=hip.hipGraphInstantiateFlagUpload, uploadStream=stream)
    exe = hip.hipGraphInstantiateWithParams(g, p)
    assert p.result_out == hip.hipGraphInstantiateSuccess and p.errNode_out is None
    assert hip.hipGraphExecGetFlags(exe) == hip.hipGraphInstantiateFlagUpload
    exe2 = hip.hipGraphInstantiateWithFlags(g, hip.hipGraphInstantiateFlagAutoFreeOnLaunch)
    assert hip.hipGraphExecGetFlags(exe2) == 1
    for e in (exe, exe2):
        hip.hipGraphExecDestroy(e)
    _err(E.hipErrorInvalidValue, hip.hipGraphExecGetFlags, exe)
    bad = hip.hipGraphInstantiateParams(flags=3)
    _err(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithParams, g, bad)
    assert bad.result_out == hip.hipGraphInstantiateError
    hip.hipGraphDestroy(g)
    failed = hip.hipGraphInstantiateParams()
    _err(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithParams, g, failed)   # destroyed graph
    assert failed.result_out == hip.hipGraphInstantiateError
