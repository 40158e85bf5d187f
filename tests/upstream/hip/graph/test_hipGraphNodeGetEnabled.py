"""hipGraphNodeGetEnabled: kernel, copy and memset nodes of a fresh exec are enabled; asking about the
other node types is an error; so is asking with a node the exec does not have (or no longer: a destroyed
node or graph), or with a destroyed exec."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._enabled_common import NEGATIVE, all_types_exec, negative_functional

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetEnabled.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["kernel", "memcpy", "memset", "host", "empty", "child_graph", "event_wait",
                                     "event_record"])
def test_Unit_hipGraphNodeGetEnabled_Functional_Basic(mod, res, section):
    exe, nodes = all_types_exec(mod, res)
    if section in ("kernel", "memcpy", "memset"):
        assert hip.hipGraphNodeGetEnabled(exe, nodes[section]) == 1
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetEnabled, exe, nodes[section])



@pytest.mark.parametrize("section", NEGATIVE)
def test_Unit_hipGraphNodeGetEnabled_Negative_Functional(mod, res, section):
    # "Pass isEnabled as nullptr" has no Python form (the flag is the return value)
    negative_functional(mod, res, hip.hipGraphNodeGetEnabled, section)
