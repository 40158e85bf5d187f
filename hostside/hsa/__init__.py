"""The HSA runtime layer (ROCR-like): agents, queues, signals, memory pools and the allocation
tracker, code objects and the async-handler thread, on top of the platform's shared memory.

Public face of ``hostside.hsa``; the modules behind it are private:
``_runtime`` (Runtime, agents, pools, code objects, hsa_init), ``_queue`` (hsa_queue_t),
``_signal`` (hsa_signal_t and its pool), ``_async`` (the async-handler thread), ``_errors``.
Imports only ``shm_layout``; the embedded platform is started through the factory that
``hostside.platform`` registers (``set_platform_factory``).
"""
from ._async import AsyncHandler
from ._errors import DeviceLost, HostWaitTimeout, HsaError
from ._queue import HSA_QUEUE_TYPE_MULTIPLE, HSA_QUEUE_TYPE_SINGLE, QUEUE_DESTROY_TIMEOUT_S, Queue, QueueStatistics
from ._runtime import (DEFAULT_WAIT_TIMEOUT_S, DEVICE_LOSS_BOUND_S, Agent, AgentStatistics, Allocation, CodeObject, Runtime,
                       configure, runtime, set_platform_factory, shutdown, wait_timeout_from_env)
from ._signal import (CONDITIONS, HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_GTE, HSA_SIGNAL_CONDITION_LT,
                      HSA_SIGNAL_CONDITION_NE, U64_MAX, Signal, SignalPool)

__all__ = ["Runtime", "Agent", "AgentStatistics", "QueueStatistics", "Allocation", "CodeObject", "Queue", "Signal", "SignalPool", "AsyncHandler",
           "HsaError", "HostWaitTimeout", "DeviceLost", "configure", "runtime", "shutdown",
           "set_platform_factory", "wait_timeout_from_env", "DEFAULT_WAIT_TIMEOUT_S", "DEVICE_LOSS_BOUND_S",
           "QUEUE_DESTROY_TIMEOUT_S", "HSA_SIGNAL_CONDITION_EQ", "HSA_SIGNAL_CONDITION_NE",
           "HSA_SIGNAL_CONDITION_LT", "HSA_SIGNAL_CONDITION_GTE", "CONDITIONS", "U64_MAX",
           "HSA_QUEUE_TYPE_MULTIPLE", "HSA_QUEUE_TYPE_SINGLE"]
