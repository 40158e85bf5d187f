"""hipDeviceReset (hsa shutdown) gives a platform's memory back: no mapping of its segments is left.

An embedded platform's segments are unlinked at teardown, but a deleted file that is still mapped
keeps its memory in /dev/shm. The exit hook of each runtime used to hold it (and with it every
mapping, device memory included) until the process ended, so a program that reset the device again
and again grew by a whole platform per reset. The program runs in its own process so that nothing of
the test session holds a runtime. (A stream or event handle the program keeps past the reset still
holds views of the old platform until it is dropped, as the README says.)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.paths import ROOT

PROGRAM = r"""
import json, os, sys
from hostside import hip

def mapped():
    # fds and mappings of hdemu segments of this process (the mmap module dups each segment's fd)
    fds = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds += "/hdemu-" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        maps = sum("/hdemu-" in line for line in f)
    return fds, maps

seen = []
for i in range(4):
    p = hip.hipMalloc(1 << 20)
    s = hip.hipStreamCreate()
    hip.hipMemsetAsync(p, 7, 1 << 20, s)
    hip.hipStreamSynchronize(s)
    during = mapped()
    del s                          # a handle kept past the reset keeps its runtime's views (docs)
    hip.hipDeviceReset()           # the allocation is gone with the device
    seen.append({"during": during, "after": mapped()})
print(json.dumps(seen))
"""


def _run(program: str):
    """Run ``program`` in a process of its own with an embedded platform; its last line, as JSON."""
    env = dict(os.environ)
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG"):
        env.pop(var, None)
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_device_reset_leaves_no_mapping_of_the_platform_segments():
    seen = _run(PROGRAM)
    for i, s in enumerate(seen):
        assert s["during"][1] > 0, s              # the platform was mapped while in use (the test can fail)
        assert s["after"] == [0, 0], f"reset {i}: {s['after'][0]} fds and {s['after'][1]} mappings left"


STALE = r"""
import json
from hostside import hip
s = hip.hipStreamCreate()
hip.hipMemsetAsync(hip.hipMalloc(64), 0, 64, s)
hip.hipDeviceReset()
out = {}
for name in ("hipStreamSynchronize", "hipStreamQuery", "hipStreamDestroy"):
    try:
        getattr(hip, name)(s)
        out[name] = "ok"
    except hip.HipError as exc:
        out[name] = exc.error.name
p = hip.hipMalloc(64)                  # the device works again: a new runtime
hip.hipMemsetAsync(p, 1, 64, None)
hip.hipDeviceSynchronize()
print(json.dumps(out))
"""


def test_a_stream_kept_past_a_reset_is_destroyed_with_the_device():
    """Every stream goes with the device (as CLR destroys them): using one kept past the reset is
    hipErrorContextIsDestroyed, not a "command processor gone" launch failure of the old platform."""
    env = dict(os.environ)
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG"):
        env.pop(var, None)
    r = subprocess.run([sys.executable, "-c", STALE], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == dict.fromkeys(("hipStreamSynchronize", "hipStreamQuery", "hipStreamDestroy"),
                                "hipErrorContextIsDestroyed"), out


FINALIZER = r"""
import gc
from hostside import hip
gc.disable()                    # the reset's own collection is the one that finds the cycle
calls = []

class Buffer:
    def __init__(self):
        self.me = self          # a reference cycle: freed only by a collection
        self.ptr = hip.hipMalloc(64)

    def __del__(self):
        calls.append(hip.hipGetDeviceCount())      # HIP from a finalizer: starts a new runtime

b = Buffer()
del b
hip.hipDeviceReset()
print("finalizer ran" if calls else "finalizer did not run")
"""


def test_a_finalizer_that_calls_hip_during_the_reset_does_not_deadlock_it():
    """The reset collects the old runtime's cycles; a finalizer run by that collection may call HIP,
    which starts a new runtime: the collection must not run under the runtime lock (it did: the
    reset hung)."""
    env = dict(os.environ)
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG"):
        env.pop(var, None)
    r = subprocess.run([sys.executable, "-c", FINALIZER], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "finalizer ran" in r.stdout, r.stdout


INTERRUPTED = r"""
import json, os
from hostside import hip
from hostside.hsa import _queue
from shm_layout.segments import parse_name

def mine():
    return sorted(n for n in os.listdir("/dev/shm") if (parse_name(n) or (None,))[0] == os.getpid())

s = hip.hipStreamCreate()
hip.hipMemsetAsync(hip.hipMalloc(4096), 1, 4096, s)
hip.hipStreamSynchronize(s)
before = mine()

def interrupted(self, *args):
    raise KeyboardInterrupt        # Ctrl-C while a queue is torn down (a stopped CP's drain waits)

_queue.Queue.destroy = interrupted
try:
    hip.hipDeviceReset()
    raised = False
except KeyboardInterrupt:
    raised = True
print(json.dumps({"before": len(before), "after": mine(), "raised": raised}))
"""


def test_ctrl_c_in_the_queue_teardown_still_stops_the_embedded_platform():
    """A KeyboardInterrupt in the reset's queue teardown propagates, and the embedded platform is stopped
    anyway: before, the exit hook was already unregistered and every segment of the run was left in
    /dev/shm (found by ending ``hdemu demo`` with Ctrl-C during its teardown)."""
    out = _run(INTERRUPTED)
    assert out["before"] > 0, out           # the platform's segments existed (the test can fail)
    assert out["raised"] and out["after"] == [], out
