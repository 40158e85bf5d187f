"""hipGraphAddDependencies (older cases): the seven-node graph joined edge by edge computes its vector
sum, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._dependency_common import arrays, graph_nodes_common
from tests.upstream.hip.graph.test_hipGraphAddDependencies import NEGATIVE, negative_cases

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddDependencies_old.cc"


def test_Unit_hipGraphAddDependencies_Functional(mod, res):
    stream = res.stream()
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, _nodelist = graph_nodes_common(mod, graph, ar)
    for f, t in zip(from_, to):
        hip.hipGraphAddDependencies(graph, [f], [t])
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


@pytest.mark.parametrize("section", ["zero_dependencies"] + [s for s in NEGATIVE if s != "graph_uninitialized"])
def test_Unit_hipGraphAddDependencies_NegTest(mod, res, section):
    if section == "zero_dependencies":
        hip.hipGraphAddDependencies(res.graph(), None, None)
    else:
        negative_cases(res, section)
