"""Deadlock freedom with one buffer per pool: four streams on two agents each run N increments
(argv[1], default 60) with every DFX subsystem on; every count must come out right.

platform.toml: 2 agents x 2 engines, 4 lanes, 1 buffer per pool, 8 records per buffer (the test
sets profiling.output_dir). Result: {"engines": [engines the streams ran on]}.
"""
import sys

import numpy as np

from hostside import hip
from tests.scenarios.common import emit, kernel_file

n_per_stream = int(sys.argv[1]) if len(sys.argv) > 1 else 60
m = hip.hipModuleLoad(kernel_file("basic.py"))
inc = hip.hipModuleGetFunction(m, "inc")
streams, bufs = [], []
for dev in (0, 1):
    hip.hipSetDevice(dev)
    for _ in range(2):
        s = hip.hipStreamCreate()
        d = hip.hipMalloc(64)
        hip.hipMemsetAsync(d, 0, 64, s)
        streams.append(s)
        bufs.append(d)
for i in range(n_per_stream):
    for s, d in zip(streams, bufs):
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
for s, d in zip(streams, bufs):
    hip.hipStreamSynchronize(s)
    out = np.zeros(16, np.int32)
    hip.hipMemcpy(out, d, 64, hip.hipMemcpyDeviceToHost)
    assert (out == n_per_stream).all(), out
emit(engines=sorted({s.vgpu.queue.engine for s in streams}))
