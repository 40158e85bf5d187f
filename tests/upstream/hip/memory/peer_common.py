"""What the ported hipMemcpyPeer.cc and hipMemcpyPeerAsync.cc share: the peer-access guard around each
case (hipDeviceCanAccessPeer, hipDeviceEnablePeerAccess ... hipDeviceDisablePeerAccess from the source
device), VectorSet, and the "returns while device work is still running" check of their
synchronisation-behaviour cases with gates in place of upstream's 100 ms delay kernels."""
from __future__ import annotations

import contextlib
import threading

from hostside import hip
from tests.upstream.hip.memory.common import vector_set
from tests.upstream.hipkit import Gate, wait_until

__all__ = ["K_PAGE_SIZE", "SIZES", "peer_access", "vector_set", "returns_before_gates_open"]

K_PAGE_SIZE = 4096
SIZES = (K_PAGE_SIZE // 2, K_PAGE_SIZE, K_PAGE_SIZE * 2)


@contextlib.contextmanager
def peer_access(src_device: int, dst_device: int):
    """hipSetDevice(src); if hipDeviceCanAccessPeer(src, dst): enable access to dst, yield True, then
    disable it again from src (and make device 0 current); else yield False (upstream's INFO branch)."""
    hip.hipSetDevice(src_device)
    try:
        if not hip.hipDeviceCanAccessPeer(src_device, dst_device):
            yield False
            return
        hip.hipDeviceEnablePeerAccess(dst_device, 0)
        try:
            yield True
        finally:
            hip.hipSetDevice(src_device)
            hip.hipDeviceDisablePeerAccess(dst_device)
    finally:
        hip.hipSetDevice(0)


def returns_before_gates_open(mod, gate_devices, call, deadline_s: float = 1.0):
    """A gate on the null stream of each of ``gate_devices`` (in that order, the last one current after),
    then ``call()`` in a thread; ``call`` must return while every gate is shut (within ``deadline_s``).
    Gives (whether it did, hipStreamQuery(nullptr) of the current device right after it returned or
    None when it did not)."""
    with contextlib.ExitStack() as es:
        gates = []
        for d in gate_devices:
            hip.hipSetDevice(d)
            g = es.enter_context(Gate(mod))
            g.launch(None)
            gates.append(g)
        out = {}

        def worker():
            try:
                call()
                out["status"] = hip.hipStreamQuery(None)
                out["while_shut"] = all(g.flag[0] == 0 for g in gates)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc
            out["done"] = True

        current = gate_devices[-1]
        t = threading.Thread(target=lambda: (hip.hipSetDevice(current), worker()))
        t.start()
        try:
            wait_until(lambda: out.get("done"), deadline_s, "the copy to return while device work runs")
        except AssertionError:
            pass                # reported below, once the gates are open and the thread has ended
        for g in gates:
            g.open()
        t.join(60)
        assert not t.is_alive(), "the copy never returned"
        hip.hipSetDevice(current)
    if "exc" in out:
        raise out["exc"]
    returned = bool(out.get("while_shut"))
    return returned, (out["status"] if returned else None)
