"""A queue parked on a wait (a barrier on a signal, a hipStreamWaitValue) is re-polled on a
backing-off delay, up to BARRIER_POLL_MAX_S; meanwhile its engine sleeps on its wake word, so a
doorbell of another queue is served at once. (The engine used to sleep out the delay: every round
trip of another stream on that engine then waited for the parked queue's next poll, about 2.5 ms
instead of tens of us.) Counted, not timed: the round trips that saw no poll of the parked queue."""
import numpy as np
import pytest

from hostside import hip
from hostside.hip import _context
from hostside.hsa import runtime
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4})


#: round trips per test; at least QUIET_MIN of them must see no poll of a parked queue
ROUND_TRIPS = 200
QUIET_MIN = ROUND_TRIPS // 4


def _round_trips_beside(mod, park) -> int:
    """Of ROUND_TRIPS round trips on another stream, each started just after a poll of a parked queue,
    how many saw no poll (of any parked queue of the agent: the barrier test parks two). Just after a
    poll the engine waits out the poll delay (BARRIER_POLL_MAX_S by then): before the fix it slept
    through it, so the round trip's kernel ran only at the next poll (0 or 1 of 200 round trips quiet,
    with the fix reverted); now the doorbell wakes it, and a round trip shorter than the delay sees no
    poll (175-200 of 200; 139-197 beside two CPU burners). Counted per round trip, not summed over the
    run: a slow round trip (a loaded machine) costs only itself."""
    empty = hip.hipModuleGetFunction(mod, "empty")
    a, b = (hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking) for _ in range(2))
    release = park(a)
    try:
        desc = runtime().pm.agents[0].qdesc
        slot = _context._resolve(a, False).vgpu.queue.slot

        def polls():            # of every queue of the agent: the barrier test parks a second one
            return int(desc["barrier_waits"].sum())

        wait_until(lambda: int(desc[slot]["barrier_waits"]) >= 12, what="the wait to reach its longest poll delay")
        quiet = 0
        for _ in range(ROUND_TRIPS):
            seen = polls()
            wait_until(lambda: polls() != seen, what="the parked queue's next poll")
            seen = polls()
            hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, b, [])
            hip.hipStreamSynchronize(b)
            quiet += polls() == seen
        return quiet
    finally:
        release()
        hip.hipStreamSynchronize(a)
        hip.hipStreamDestroy(a)
        hip.hipStreamDestroy(b)


def test_a_parked_value_wait_does_not_slow_the_other_queues_of_its_engine(mod):
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 1)
    view[0] = 0

    def park(a):
        hip.hipStreamWaitValue32(a, flag, 1, hip.hipStreamWaitValueEq)
        return lambda: view.__setitem__(0, 1)

    quiet = _round_trips_beside(mod, park)
    hip.hipHostFree(flag)
    assert quiet >= QUIET_MIN, f"{quiet} of {ROUND_TRIPS} round trips of another queue saw no poll of a parked queue"


def test_a_barrier_on_an_unrecorded_event_does_not_slow_the_other_queues_of_its_engine(mod):
    """The same for a stream that waits on an event a third stream records only later."""
    gate = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 1)
    view[0] = 0
    ev = hip.hipEventCreate()
    hip.hipStreamWaitValue32(gate, flag, 1, hip.hipStreamWaitValueEq)   # holds the event's record
    hip.hipEventRecord(ev, gate)

    def park(a):
        hip.hipStreamWaitEvent(a, ev, 0)
        return lambda: view.__setitem__(0, 1)

    quiet = _round_trips_beside(mod, park)
    hip.hipStreamSynchronize(gate)
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(gate)
    hip.hipHostFree(flag)
    assert quiet >= QUIET_MIN, f"{quiet} of {ROUND_TRIPS} round trips of another queue saw no poll of a parked queue"
