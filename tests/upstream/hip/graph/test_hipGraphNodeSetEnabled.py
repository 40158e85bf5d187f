"""hipGraphNodeSetEnabled: kernel, copy and memset nodes of an exec switched off and on again (read back
with hipGraphNodeGetEnabled); the other node types are refused."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._enabled_common import all_types_exec

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeSetEnabled.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["kernel", "memcpy", "memset", "host", "empty", "child_graph", "event_wait",
                                     "event_record"])
def test_Unit_hipGraphNodeSetEnabled_Functional_Basic(mod, res, section):
    exe, nodes = all_types_exec(mod, res)
    node = nodes[section]
    if section in ("kernel", "memcpy", "memset"):
        for set_enable in (0, 1):
            hip.hipGraphNodeSetEnabled(exe, node, set_enable)
            assert hip.hipGraphNodeGetEnabled(exe, node) == set_enable
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeSetEnabled, exe, node, 1)
