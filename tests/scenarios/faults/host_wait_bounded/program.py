"""A host wait on device work that never completes in time (a 5 s kernel) runs out after
HDEMU_WAIT_TIMEOUT_S (the test sets 0.5).

Result: {"error": name, "message": str} or {"returned": true}.
"""
from hostside import hip
from tests.scenarios.common import emit, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1, 1, 1, 1, 1, 1, 0, s, [5.0])
try:
    hip.hipStreamSynchronize(s)
    emit(returned=True)
except hip.HipError as e:
    emit(error=e.name, message=str(e))
