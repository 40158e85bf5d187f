"""Two processes on one platform, each with more streams than half the agent's queue slots: each
process owns at most half of the slots and shares its own queues past that (hostside/clr/_qpool.py),
so neither starves the other, and every stream of both still runs in order."""
import json
import os
import subprocess
import sys

import pytest

from hostside.platform import Platform
from tests.paths import kernel_file

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

CFG = {"agents": 1, "engines": 2, "memory_mib": 16, "host_pool_mib": 16, "max_queues": 16}
CLIENT = r'''
import json, sys
import numpy as np
from hostside import hip
mod = hip.hipModuleLoad(sys.argv[1])
inc = hip.hipModuleGetFunction(mod, "inc")
N = 4
streams = [hip.hipStreamCreate() for _ in range(12)]
bufs = [hip.hipMalloc(4 * N) for _ in streams]
for it in range(20):
    for s, b in zip(streams, bufs):
        if it == 0:
            hip.hipMemsetAsync(b, 0, 4 * N, s)
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, N, 1, 1, 0, s, [b, N])
host = np.zeros(N, np.int32)
out = []
for s, b in zip(streams, bufs):
    hip.hipMemcpyAsync(host, b, 4 * N, hip.hipMemcpyDeviceToHost, s)
    hip.hipStreamSynchronize(s)
    out.append(int(host.min()))
print(json.dumps({"values": out, "queues": len({s.vgpu.queue for s in streams})}))
'''


@pytest.fixture
def plat(tmp_path):
    p = Platform(CFG, embedded=False).start()
    yield p
    p.stop()


def test_two_processes_with_12_streams_each_share_16_slots(plat, tmp_path):
    env = dict(os.environ, HDEMU_PLATFORM=plat.name)
    procs = [subprocess.Popen([sys.executable, "-c", CLIENT, kernel_file("basic.py")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=150)
            assert p.returncode == 0, err[-2000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    for r in results:
        assert r["values"] == [20] * 12, r
        assert r["queues"] <= CFG["max_queues"] // 2, r          # half the slots at most: shared past that
