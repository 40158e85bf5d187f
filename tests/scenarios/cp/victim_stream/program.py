"""A well-behaved client that keeps doing real HIP work while another process attacks its platform
(``HDEMU_PLATFORM``): upload two vectors (pageable memcpy: staging and the SDMA engine), a vector
add on its stream, download and check the result, until stdin closes.

Prints ``READY {"pid": ...}`` after its first good iteration (its queues, signals, allocations and
code object exist then). Result: {"iterations": n, "bad": results that were wrong, "errors": [the
HIP error that ended the loop, if any]}.
"""
import os
import sys
import threading

import numpy as np

from hostside import hip
from tests.scenarios.common import announce, emit, kernel_file

N = 4096
m = hip.hipModuleLoad(kernel_file("basic.py"))
vadd = hip.hipModuleGetFunction(m, "vadd")
stream = hip.hipStreamCreate()
da, db, dc = hip.hipMalloc(4 * N), hip.hipMalloc(4 * N), hip.hipMalloc(4 * N)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
rng = np.random.default_rng(7)
iterations = bad = 0
errors = []
while not stop.is_set():
    a = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    c = np.zeros(N, np.float32)
    try:
        hip.hipMemcpyAsync(da, a, 4 * N, hip.hipMemcpyHostToDevice, stream)
        hip.hipMemcpyAsync(db, b, 4 * N, hip.hipMemcpyHostToDevice, stream)
        hip.hipModuleLaunchKernel(vadd, N // 256, 1, 1, 256, 1, 1, 0, stream, [da, db, dc, N])
        hip.hipMemcpyAsync(c, dc, 4 * N, hip.hipMemcpyDeviceToHost, stream)
        hip.hipStreamSynchronize(stream)
    except hip.HipError as exc:
        errors.append(str(exc))
        break
    bad += not np.array_equal(c, a + b)
    iterations += 1
    if iterations == 1:
        announce("READY", pid=os.getpid())
emit(iterations=iterations, bad=bad, errors=errors)
