"""hipGraphDebugDotPrint: argument errors and flag values. The Functional case (it checks CLR's dot
text for a graph with 3-D array and symbol copies) is in NOT_PORTED.md."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphDebugDotPrint.cc"

E = hip.hipError_t
#: hipGraphDebugDotFlagsVerbose is 1 << 0 and hipGraphDebugDotFlagsHandles 1 << 10 (hip_runtime_api.h)
FLAGS_VERBOSE, FLAGS_HANDLES = 1 << 0, 1 << 10
INT_MAX = 2 ** 31 - 1


@pytest.mark.parametrize("section", ["graph_null", "graph_uninitialized", "path_null", "path_empty",
                                     "flag_min_minus_1", "flag_max_plus_1", "flag_int_max"])
def test_Unit_hipGraphDebugDotPrint_Argument_Check(mod, res, section, tmp_path):
    graph = res.graph()
    path = str(tmp_path / "graphDotFileNeg.dot")
    if section in ("graph_null", "graph_uninitialized"):       # an uninitialized hipGraph_t is a null handle
        expect_error(E.hipErrorInvalidValue, hip.hipGraphDebugDotPrint, None, path, 0)
    elif section == "path_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphDebugDotPrint, graph, None, 0)
    elif section == "path_empty":
        expect_error(E.hipErrorOperatingSystem, hip.hipGraphDebugDotPrint, graph, "", 0)
    else:
        flag = {"flag_min_minus_1": FLAGS_VERBOSE - 1, "flag_max_plus_1": FLAGS_HANDLES + 1,
                "flag_int_max": INT_MAX}[section]
        hip.hipGraphDebugDotPrint(graph, path, flag)
