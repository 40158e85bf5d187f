"""One Chrome/Perfetto trace from every process's ring: kernel slices, doorbells, flows."""
import json

import pytest

from hostside.hsa import Runtime
from hostside.platform import build_trace
from shm_layout import layouts as L

from tests.rawq import KERNEL_SRC

pytestmark = pytest.mark.timeout(60)


def test_trace_has_slices_instants_and_flows(tmp_path):
    rt = Runtime(config={"agents": 1, "memory_mib": 4, "host_pool_mib": 4})
    try:
        co = rt.load_code_object(KERNEL_SRC, "basic.py")
        from hostside.clr import VirtualGPU
        v = VirtualGPU(rt, 0, 16)
        q = v.queue
        k, sig = co.kernels["empty"]
        for _ in range(3):
            v.launch(k, sig, (), (1, 1, 1), (1, 1, 1))
        v.synchronize()
        t = build_trace(rt.pm)
        json.dumps(t)
        ev = t["traceEvents"]
        slices = [e for e in ev if e["ph"] == "X" and e["name"] == "kernel"]
        assert len(slices) == 3
        assert len([e for e in ev if e["ph"] == "i" and e["name"] == "doorbell"]) == 3
        starts = {e["id"] for e in ev if e["ph"] == "s"}
        ends = {e["id"] for e in ev if e["ph"] == "f"}
        assert len(starts) == 3 and starts == ends      # every launch flows into its execution
        dids = {int(e["args"]["dispatch_id"], 16) for e in slices}
        assert {L.split_dispatch_id(d)[1] for d in dids} == {q.slot}
        names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
        assert f"queue {q.slot}" in names and any(n.startswith("engine") for n in names)
        v.destroy()
    finally:
        out = tmp_path / "trace.json"
        rt.platform.stop(trace_out=str(out))
        rt.shutdown()
    assert json.loads(out.read_text())["traceEvents"]
