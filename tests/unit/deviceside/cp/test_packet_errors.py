"""Bad SDMA packets become queue errors, never a dead command processor.

A live platform (``hostside.platform.Platform``) runs the real CP process (``python -m deviceside.cp``);
the test plays the host with raw queues, signals and allocations built from the ``shm_layout``
declarations only, so what is tested is the device side of the protocol. Each bad packet must put
its queue in error with an HSA status, and the CP must go on serving another queue.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from hostside.platform import Platform
from shm_layout import layouts as L
from shm_layout.alloc import AllocTable
from shm_layout.coherence import wmb
from shm_layout.sync import cas, fetch_add, notify

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
U64_MAX = (1 << 64) - 1
WAIT_S = 10.0


@pytest.fixture
def plat(tmp_path):
    """A platform whose roles inherit a stderr of their own (``role_stderr(plat)`` reads it)."""
    path = tmp_path / "roles.stderr"
    with open(path, "w") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)            # the roles are spawned with this fd 2
        try:
            p = Platform(CFG).start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    p.role_stderr_path = path
    yield p
    p.stop()


def role_stderr(plat) -> str:
    return plat.role_stderr_path.read_text()


def cp_alive(plat) -> bool:
    return plat.procs[0].poll() is None


class RawSdmaQueue:
    """An SDMA queue of agent 0, created and written the way the host runtime does it."""

    def __init__(self, plat, size: int = 16, layout=L.sdma_packet):
        pm = plat.pm
        am = pm.agents[0]
        me = os.getpid()
        claiming = L.own_word(me, 2)
        self.q = next(q for q in range(pm.topo.max_queues) if cas(am.qd_addr(q), 0, claiming))
        d = self.desc = am.qdesc[self.q:self.q + 1]
        self.engine = pm.topo.n_engines                      # the SDMA engine
        d["size"], d["engine"], d["kind"] = size, self.engine, L.QKIND_SDMA
        d["generation"] += 1
        d["status"] = d["error_packet_id"] = d["read_dispatch_id"] = d["write_dispatch_id"] = 0
        d["doorbell"] = U64_MAX
        d["created_ns"] = time.monotonic_ns()
        self.ring = am.seg.view(layout, am.ring_offset(self.q), size)
        self.ring[:] = np.zeros(size, layout)
        self.ring["header"] = L.SDMA_TYPE_INVALID
        self.mask = size - 1
        self.wake = am.engine_wake_addr(self.engine)
        self.next = 0
        d["active"] = 1
        wmb()
        assert cas(am.qd_addr(self.q), claiming, L.own_word(me, L.Q_ACTIVE))
        fetch_add(am.seg.addr + L.offset_of(L.agent_header, "queue_table_gen"), 1)
        notify(self.wake)

    def submit(self, ptype: int, **fields) -> int:
        """Write one packet (body, then header), ring the doorbell; returns its packet id."""
        idx = self.next
        self.next += 1
        self.desc["write_dispatch_id"] = idx + 1
        slot = self.ring[idx & self.mask:(idx & self.mask) + 1]
        for k, v in fields.items():
            slot[k] = v
        wmb()
        slot["header"] = ptype
        self.desc["doorbell"] = idx
        notify(self.wake)
        return idx

    def wait(self, plat, cond) -> None:
        deadline = time.monotonic() + WAIT_S
        while not cond():
            assert cp_alive(plat), f"the command processor died (exit code {plat.procs[0].poll()})"
            assert time.monotonic() < deadline, f"queue {self.q}: {self.desc[0]}"
            time.sleep(0.002)

    @property
    def status(self) -> int:
        return int(self.desc["status"][0])


def new_signal(plat, value: int) -> int:
    """Claim a signal slot (from the top of the table: no runtime shares this platform) with ``value``."""
    pm = plat.pm
    me = os.getpid()
    for s in range(pm.topo.n_signals - 1, 0, -1):
        if cas(pm.signal_addr(s) + L.offset_of(L.signal_slot, "owner"), 0, L.own_word(me, L.OWN_ALLOCATED)):
            pm.signals[s]["value"] = value
            return L.SIGNAL_HANDLE_BASE + s * L.SIGNAL_SLOT_BYTES
    raise AssertionError("no free signal slot")


def signal_value(plat, handle: int) -> int:
    return int(plat.pm.signals[plat.pm.signal_slot(handle)]["value"])


def device_alloc(plat, nbytes: int) -> tuple[int, np.ndarray]:
    """(device address, byte view) of a fresh coarse-grained allocation on agent 0."""
    pm = plat.pm
    table = AllocTable(pm.alloc_hdrs[1], pm.alloc_recs[1], L.device_base(0), pm.topo.memory_bytes, 0)
    addr = table.allocate(nbytes, L.ALLOC_DEVICE)
    off = addr - L.device_base(0)
    return addr, pm.segs["mem0"].u8[off:off + nbytes]


def fill_ok(plat, q: RawSdmaQueue, value: int = 0xAB) -> None:
    """A good fill on ``q``, with a met dependency and a completion signal: the CP serves it."""
    addr, view = device_alloc(plat, 256)
    dep, done = new_signal(plat, 0), new_signal(plat, 1)
    view[:] = 0
    idx = q.submit(L.SDMA_TYPE_FILL, fill_width=1, fill_value=value, dst=addr, size=256, dep_signal=dep,
                   completion_signal=done)
    q.wait(plat, lambda: signal_value(plat, done) == 0)
    q.wait(plat, lambda: int(q.desc["read_dispatch_id"][0]) == idx + 1)
    assert q.status == 0
    assert (view == value).all()


BAD = {
    # a dependency handle that is no signal (the SDMA engine's except must catch the CP's PacketError)
    "bad_dependency": (dict(dep_signal=0x1234), L.HSA_STATUS_ERROR_INVALID_SIGNAL, "dependency 0x1234"),
    "bad_completion_signal": (dict(completion_signal=L.SIGNAL_HANDLE_BASE + 8), L.HSA_STATUS_ERROR_INVALID_SIGNAL,
                              "completion signal"),
    "fill_value_too_wide": (dict(fill_value=511), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "fill value 0x1ff"),
    "fill_width_3": (dict(fill_width=3), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "fill width"),
    "unknown_type": (dict(header=0x33), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "not an SDMA packet"),
    "fill_outside_memory": (dict(dst=L.DEVICE_BASE - 4096), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                            "outside every aperture"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_sdma_packet_fails_its_queue_and_the_cp_serves_on(plat, case):
    fields, status, msg = BAD[case]
    addr, _view = device_alloc(plat, 256)
    pkt = dict(fill_width=1, fill_value=7, dst=addr, size=256)
    pkt.update(fields)
    ptype = pkt.pop("header", L.SDMA_TYPE_FILL)
    bad = RawSdmaQueue(plat)
    idx = bad.submit(ptype, **pkt)
    bad.wait(plat, lambda: bad.status != 0)
    assert bad.status == status, L.STATUS_NAMES.get(bad.status, bad.status)
    assert int(bad.desc["error_packet_id"][0]) == idx
    assert int(bad.desc["active"][0]) == 0
    assert msg in bad.desc["error_msg"][0].decode()
    assert int(bad.desc["read_dispatch_id"][0]) == idx       # the failed packet is not consumed
    fill_ok(plat, RawSdmaQueue(plat))                         # another queue is still served
    assert cp_alive(plat)
    err = role_stderr(plat)
    assert f"hdemu cp0: queue {bad.q} error {L.STATUS_NAMES[status]} at packet {idx}: " in err, err


def test_rect_packets_move_only_their_rows(plat):
    """SDMA_TYPE_COPY_RECT / FILL_RECT: rows a pitch apart on each side in one packet; the bytes
    between the rows are left alone; widths of 2 and 4 bytes fill whole elements."""
    q = RawSdmaQueue(plat, layout=L.sdma_rect_packet)
    src, sv = device_alloc(plat, 4096)
    dst, dv = device_alloc(plat, 4096)
    sv[:] = np.arange(4096, dtype=np.uint32).astype(np.uint8)
    dv[:] = 0xEE
    done = new_signal(plat, 1)
    q.submit(L.SDMA_TYPE_COPY_RECT, src=src + 3, dst=dst + 5, width=40, rows=30, src_pitch=100, dst_pitch=130,
             completion_signal=done)
    q.wait(plat, lambda: signal_value(plat, done) == 0)
    want = np.full(4096, 0xEE, np.uint8)
    for r in range(30):
        want[5 + r * 130:5 + r * 130 + 40] = sv[3 + r * 100:3 + r * 100 + 40]
    assert (dv == want).all()
    for width, value in ((1, 0x5A), (2, 0xBEEF), (4, 0xDEADBEEF)):
        done = new_signal(plat, 1)
        dv[:] = 0
        q.submit(L.SDMA_TYPE_FILL_RECT, dst=dst + 1, width=12, rows=50, dst_pitch=70, fill_width=width,
                 fill_value=value, completion_signal=done)
        q.wait(plat, lambda: signal_value(plat, done) == 0)
        want = np.zeros(4096, np.uint8)
        row = np.frombuffer(np.full(12 // width, value, {1: "<u1", 2: "<u2", 4: "<u4"}[width]).tobytes(), np.uint8)
        for r in range(50):
            want[1 + r * 70:1 + r * 70 + 12] = row
        assert (dv == want).all(), width
    assert q.status == 0 and cp_alive(plat)


RECT_BAD = {
    "dst_pitch_under_width": (dict(dst_pitch=10), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "under the width"),
    "src_pitch_under_width": (dict(src_pitch=10, header=L.SDMA_TYPE_COPY_RECT), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              "under the width"),
    "rows_past_allocation": (dict(rows=64), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, "rectangular fill"),
    "huge_rows_and_pitch": (dict(rows=2 ** 32 - 1, dst_pitch=2 ** 32 - 1), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                            "rectangular fill"),
    "src_past_allocation": (dict(header=L.SDMA_TYPE_COPY_RECT, src_pitch=1000), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                            "rectangular copy"),
    "fill_value_too_wide": (dict(fill_value=256), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "does not fit"),
    "fill_width_not_dividing": (dict(fill_width=4, width=6), L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "fill width"),
}


@pytest.mark.parametrize("case", sorted(RECT_BAD))
def test_bad_rect_packet_fails_its_queue_and_the_cp_serves_on(plat, case):
    fields, status, msg = RECT_BAD[case]
    addr, view = device_alloc(plat, 1024)
    view[:] = 0x11
    pkt = dict(fill_width=1, fill_value=7, src=addr, dst=addr, width=16, rows=8, src_pitch=64, dst_pitch=64)
    pkt.update(fields)
    ptype = pkt.pop("header", L.SDMA_TYPE_FILL_RECT)
    bad = RawSdmaQueue(plat, layout=L.sdma_rect_packet)
    idx = bad.submit(ptype, **pkt)
    bad.wait(plat, lambda: bad.status != 0)
    assert bad.status == status, L.STATUS_NAMES.get(bad.status, bad.status)
    assert int(bad.desc["error_packet_id"][0]) == idx
    assert msg in bad.desc["error_msg"][0].decode(), bad.desc["error_msg"][0]
    assert (view == 0x11).all()                               # nothing was written
    fill_ok(plat, RawSdmaQueue(plat))
    assert cp_alive(plat)


def _run_role(args, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=30)


@pytest.mark.parametrize("role", ["deviceside.cp", "deviceside.aicpu"])
def test_role_without_arguments_prints_usage_from_any_cwd(role, tmp_path):
    r = _run_role([role], tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith(f"usage: python -m {role} BOOT_NAME "), r.stderr


@pytest.mark.parametrize("role, name", [("deviceside.cp", "cp0"), ("deviceside.aicpu", "aicpu0")])
def test_role_that_cannot_attach_says_why_in_one_line(role, name, tmp_path):
    r = _run_role([role, "hdemu-0-nosuch-boot", "0"], tmp_path)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"hdemu {name}: cannot start: "), r.stderr


def test_constructors_raise_hdemu_errors_not_system_exit(plat):
    from deviceside.aicpu import Lane
    from deviceside.cp import CommandProcessor
    from shm_layout.errors import ConfigError, PlatformError
    with pytest.raises(ConfigError, match=r"agent must be in \[0, 1\), not 5"):
        CommandProcessor(plat.name, 5)
    with pytest.raises(PlatformError, match="profiling is not enabled"):
        Lane(plat.name, 0)
