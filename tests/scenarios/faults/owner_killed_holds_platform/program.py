"""Own an embedded platform (default config) and hold until killed.

Prints ``READY {"pid": ..., "cps": [command processor pids]}``; then holds (stdin).
"""
import os

from hostside import hip
from hostside.hsa import runtime
from tests.scenarios.common import announce, hold

hip.hipGetDeviceCount()
announce("READY", pid=os.getpid(), cps=[a.cp_pid for a in runtime().agents])
hold()
