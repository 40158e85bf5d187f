"""AICPU writer lanes: ``python -m deviceside.aicpu BOOT_NAME LANE``.

Each lane is a process with ``threads_per_lane`` AICPU threads. Thread ``t`` turns executed work
(mode real: the task rings the command processor fills) or a synthetic load into DFX records, fills
its pools' buffers and hands them to the host collector through its ready queue, blocking at the
push and pop gates under backpressure. Behind this face (private modules):

* ``_lane``      Lane: the process (attach, threads, lane status, end of run); main
* ``_writer``    AicpuThread: record writer, ArgsDump arena, task-ring consumer, real/synthetic sources
* ``_gates``     the buffer protocol: Pool, push/pop gates, stall log, common-mode park
* ``_taskring``  TaskRings: the producer side of the task rings (used by the command processor)
This package never imports ``deviceside.cp``.
"""
from ._gates import GATE_SLICE_S, GATE_SPIN_S
from ._lane import LANE_WAIT_S, Lane, main
from ._taskring import TaskRings
from ._writer import TASK_IDLE_SLICE_S, THREAD_CRASH_EXIT, AicpuThread

__all__ = ["Lane", "AicpuThread", "TaskRings", "main", "GATE_SLICE_S", "GATE_SPIN_S", "TASK_IDLE_SLICE_S",
           "LANE_WAIT_S", "THREAD_CRASH_EXIT"]
