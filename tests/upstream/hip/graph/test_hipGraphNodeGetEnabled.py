"""hipGraphNodeGetEnabled: kernel, copy and memset nodes of a fresh exec are enabled; asking about the
other node types is an error."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._enabled_common import all_types_exec

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
