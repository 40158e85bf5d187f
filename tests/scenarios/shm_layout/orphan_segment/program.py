"""Create a shared-memory segment and exit without unlinking it: its creator is then dead.

Result: {"name": the segment's name}.
"""
import os

from shm_layout.segments import Segment, new_run_token, segment_name
from tests.scenarios.common import emit

seg = Segment.create(segment_name(os.getpid(), new_run_token(), "orphan"), 4096)
emit(name=seg.name)
os._exit(0)     # no cleanup at all: the segment outlives its creator
