"""Launch a 60 s kernel and wait for it in hipStreamSynchronize while the test kills the command
processor: the wait must end with a HipError.

Prints ``LAUNCHED {}`` before it waits. Result: {"error": name, "message": str} or {"returned": true}.
"""
from hostside import hip
from tests.scenarios.common import announce, emit, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1, 1, 1, 1, 1, 1, 0, s, [60.0])
announce("LAUNCHED")
try:
    hip.hipStreamSynchronize(s)
    emit(returned=True)
except hip.HipError as e:
    emit(error=e.name, message=str(e))
