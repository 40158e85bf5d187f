"""hipGraphLaunch: a two-host-node graph on a created stream and on hipStreamPerThread, and launches of
null and destroyed execs."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphLaunch.cc"

E = hip.hipError_t


def _set_to_zero(number):
    number[0] = 0


def _add_one(number):
    number[0] += 1


def _test_exec(number):
    """CreateTestExecutableGraph: sets number[0] to one."""
    graph = hip.hipGraphCreate(0)
    zero = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(_set_to_zero, number))
    hip.hipGraphAddHostNode(graph, zero, hip.hipHostNodeParams(_add_one, number))
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphDestroy(graph)
    return exe


def _simple(stream):
    number = np.array([5])
    exe = _test_exec(number)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert number[0] == 1
    hip.hipGraphExecDestroy(exe)


@pytest.mark.parametrize("section", ["created", "perThread"])
def test_Unit_hipGraphLaunch_Positive(mod, res, section):
    if section == "created":
        stream = hip.hipStreamCreate()
        _simple(stream)
        hip.hipStreamDestroy(stream)
    else:
        _simple(hip.hipStreamPerThread)


@pytest.mark.parametrize("section", ["null_exec_created_stream",
                                     "null_exec_per_thread",
                                     "empty_exec",
                                     "destroyed_exec"])
def test_Unit_hipGraphLaunch_Negative_Parameters(mod, res, section):
    if section == "null_exec_created_stream":
        stream = hip.hipStreamCreate()
        try:
            with pytest.raises(hip.HipError) as ei:
                hip.hipGraphLaunch(None, stream)
        finally:
            hip.hipStreamDestroy(stream)
        assert ei.value.error == E.hipErrorInvalidValue
    elif section in ("null_exec_per_thread", "empty_exec"):       # hipGraphExec_t{} is a null handle
        expect_error(E.hipErrorInvalidValue, hip.hipGraphLaunch, None, hip.hipStreamPerThread)
    else:
        number = np.array([5])
        exe = _test_exec(number)
        hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
        assert number[0] == 1
        hip.hipGraphExecDestroy(exe)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphLaunch, exe, hip.hipStreamPerThread)
