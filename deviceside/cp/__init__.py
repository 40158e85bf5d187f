"""The command processor of one GPU agent: ``python -m deviceside.cp BOOT_NAME AGENT``.

It fetches 64-byte packets from the agent's ring queues, resolves barriers, runs Python kernels on the
agent's device memory, serves copy queues with an SDMA engine and decrements completion signals.
Behind this face (private modules):

* ``_ring``       the ring protocol both engines share: QueueState, next_packet/retire, the park
                  back-off of a packet whose dependency is not met, PacketError
* ``_aql``        the AQL engine: dispatches (geometry checks, KernelContext), barriers
* ``_loader``     the kernel loader: code objects exec-ed once, cached kernels re-validated per dispatch
* ``_sdma``       the SDMA engine: copies and fills
* ``_queues``     the queue table: which engine serves which queue, every descriptor validated
* ``_processor``  CommandProcessor: signals, fail_queue, engine threads and their state, housekeeping,
                  reclaim; main
* ``_memory``     device addresses of the queue owner's allocations -> numpy views, or a MemoryFault
* ``_counters``   the counter unit (dispatches whose ``reserved2`` names a counter block)
* ``_devglobals`` module-scope device globals of a code object
"""
from ._aql import MAX_GRID_ITEMS, MAX_WORKGROUP_ITEMS, KernelContext
from ._memory import MemoryFault
from ._processor import ENGINE_CRASH_EXIT, HOUSEKEEPING_S, IDLE_SLICE_S, CommandProcessor, main
from ._ring import BARRIER_POLL_MAX_S, BARRIER_POLL_MIN_S, PacketError

__all__ = ["CommandProcessor", "main", "PacketError", "MemoryFault", "KernelContext", "HOUSEKEEPING_S",
           "IDLE_SLICE_S", "BARRIER_POLL_MIN_S", "BARRIER_POLL_MAX_S", "MAX_WORKGROUP_ITEMS", "MAX_GRID_ITEMS",
           "ENGINE_CRASH_EXIT"]
