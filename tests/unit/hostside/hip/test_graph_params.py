"""hipGraphDestroyNode and hipGraphNodeFindInClone beyond what hip-tests covers: ids stay unique after a
destroy, a destroyed node is invalid everywhere, and clone lookups refuse unrelated graphs."""
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(60)
E = hip.hipError_t


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 1})


def _err(fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    return ei.value.error


def test_destroyed_node_is_invalid_and_ids_stay_unique(mod):
    g = hip.hipGraphCreate()
    a, b, c = (hip.hipGraphAddEmptyNode(g, None) for _ in range(3))
    hip.hipGraphAddDependencies(g, [a, b], [b, c])
    hip.hipGraphDestroyNode(b)
    assert hip.hipGraphGetEdges(g) == ([], [])
    assert hip.hipGraphNodeGetDependentNodes(a) == [] and hip.hipGraphNodeGetDependencies(c) == []
    assert _err(hip.hipGraphNodeGetType, b) == E.hipErrorInvalidValue
    assert _err(hip.hipGraphDestroyNode, b) == E.hipErrorInvalidValue
    assert _err(hip.hipGraphAddDependencies, g, a, b) == E.hipErrorInvalidValue
    d = hip.hipGraphAddEmptyNode(g, None)
    assert len({n.id for n in hip.hipGraphGetNodes(g)}) == 3 and d.id > c.id
    clone = hip.hipGraphClone(g)
    e = hip.hipGraphAddEmptyNode(clone, None)
    assert e.id not in {n.id for n in hip.hipGraphGetNodes(g)}
    assert hip.hipGraphNodeFindInClone(d, clone).id == d.id
    hip.hipGraphDestroy(clone)
    hip.hipGraphDestroy(g)


def test_find_in_clone_refuses_non_clones_and_unrelated_nodes(mod):
    g, other = hip.hipGraphCreate(), hip.hipGraphCreate()
    n = hip.hipGraphAddEmptyNode(g, None)
    stranger = hip.hipGraphAddEmptyNode(other, None)       # same id 0, another graph
    clone = hip.hipGraphClone(g)
    assert _err(hip.hipGraphNodeFindInClone, n, g) == E.hipErrorInvalidValue          # not a clone
    assert _err(hip.hipGraphNodeFindInClone, stranger, clone) == E.hipErrorInvalidValue
    assert _err(hip.hipGraphNodeFindInClone, None, clone) == E.hipErrorInvalidValue
    assert _err(hip.hipGraphNodeFindInClone, n, None) == E.hipErrorInvalidValue
    found = hip.hipGraphNodeFindInClone(n, clone)
    hip.hipGraphDestroyNode(found)
    assert _err(hip.hipGraphNodeFindInClone, n, clone) == E.hipErrorInvalidValue
    assert hip.hipGraphGetNodes(g) == [n]
    for x in (clone, g, other):
        hip.hipGraphDestroy(x)


def test_exec_survives_destroying_its_graphs_nodes(mod):
    g = hip.hipGraphCreate()
    a = hip.hipGraphAddEmptyNode(g, None)
    b = hip.hipGraphAddEmptyNode(g, [a])
    exe = hip.hipGraphInstantiate(g)
    hip.hipGraphDestroyNode(a)
    hip.hipGraphDestroyNode(b)
    s = hip.hipStreamCreate()
    for _ in range(5):
        hip.hipGraphLaunch(exe, s)
    hip.hipStreamSynchronize(s)
    assert exe.statistics().launches == 5
    hip.hipGraphExecDestroy(exe)
    hip.hipStreamDestroy(s)
    hip.hipGraphDestroy(g)
