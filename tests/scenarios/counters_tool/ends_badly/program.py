"""A workload for ``hdemu counters -o out.csv -- python program.py HOW``: two axpy launches from the
main thread, then three inc launches from a non-daemon thread that nobody joins (it starts once the
main thread has reached its end), then the program ends as HOW says: ``return`` (falls off its end),
``raise`` (an uncaught RuntimeError), ``sys_exit`` (sys.exit(3)), ``os_exit`` (os._exit(4), from the
main thread once the worker is done), ``keyboard_interrupt`` (an uncaught KeyboardInterrupt, what
Ctrl-C raises). The table must hold all five dispatches however it ends (for ``os_exit`` the worker
is joined first: os._exit does not wait for threads).

Prints ``CPS {"pids": [...]}`` (the command processors: after os._exit they outlive the program
until they see their supervisor gone, and its segments are left for the test to sweep), ``main
done`` and ``worker done``; no JSON result (the run's table is the result).
"""
import os
import sys
import threading

import numpy as np

from hostside import hip
from hostside.hsa import runtime
from tests.scenarios.common import announce, kernel_file

how = sys.argv[1]
m = hip.hipModuleLoad(kernel_file("replay_kernels.py"))
n = 1000
x = np.arange(n, dtype=np.float32)
dx, dy = hip.hipMalloc(4 * n), hip.hipMalloc(4 * n)
hip.hipMemcpy(dx, x, 4 * n, hip.hipMemcpyHostToDevice)
hip.hipMemset(dy, 0, 4 * n)
s = hip.hipStreamCreate()
announce("CPS", pids=[ag.cp_pid for ag in runtime().agents])
for _ in range(2):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "axpy"), 4, 1, 1, 256, 1, 1, 0, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
go = threading.Event()


def worker():
    go.wait(60)
    ws = hip.hipStreamCreate()
    d = hip.hipMalloc(64)
    hip.hipMemset(d, 0, 64)
    for _ in range(3):
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "inc"), 1, 1, 1, 16, 1, 1, 0, ws, [d, 16])
    hip.hipStreamSynchronize(ws)
    print("worker done", flush=True)


t = threading.Thread(target=worker)
t.start()
print("main done", flush=True)
go.set()
if how == "raise":
    raise RuntimeError("the program failed")
if how == "sys_exit":
    sys.exit(3)
if how == "keyboard_interrupt":
    raise KeyboardInterrupt
if how == "os_exit":
    t.join()
    os._exit(4)
