"""What the ported event-node get/set cases share: the event flags of their SetGet/Functional
sections, and the 1024-byte memset node they use as a node of another type."""
import pytest

from hostside import hip

FLAGS = [pytest.param(hip.hipEventDefault, id="hipEventDefault"),
         pytest.param(hip.hipEventBlockingSync, id="hipEventBlockingSync"),
         pytest.param(hip.hipEventDisableTiming, id="hipEventDisableTiming")]

NBYTES = 1024


def event_with_flags(res, flags):
    e = hip.hipEventCreateWithFlags(flags)
    res._events.append(e)
    return e


def memset_node(res, graph, deps=None):
    """A memset of 1024 bytes of a fresh allocation (elementSize 1, width 1024, height 1)."""
    d = res.malloc(NBYTES)
    return hip.hipGraphAddMemsetNode(graph, deps, hip.hipMemsetParams(d, 0, 0, 1, width=NBYTES, height=1))
