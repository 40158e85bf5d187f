"""The platform's shape (from its config) and a process's mapping of every segment.

The supervisor writes the topology as JSON into the boot block; every role and client reads it back
with ``PlatformMap.attach(boot_name)``. All offsets below follow from the topology alone, so both
sides compute the same addresses without talking.
"""
from __future__ import annotations

import json
import time

import numpy as np

from . import layouts as L
from .aql import kernel_dispatch_packet as _packet
from .config import parse_config, platform_defaults
from .dfx import DfxGeometry
from .segments import Segment, SegmentError, segment_name

#: Every ``[platform]`` key with its default (``profiling`` fully defaulted too), from the schema in
#: shm_layout.config: the keys, types, ranges and defaults are declared there and nowhere else.
DEFAULTS = platform_defaults()


def validate_config(cfg: dict | None) -> dict:
    """Defaults filled in, every value checked; raises ``ConfigError`` (a ``ValueError``) naming the
    full key path. See ``shm_layout.config.parse_config``."""
    return parse_config(cfg)


AQL_PACKET_BYTES = _packet.itemsize     # every ring slot, AQL or SDMA, is one 64-byte packet


class Topology:
    """Sizes and offsets derived from a validated config plus the segment names of one run."""

    def __init__(self, cfg: dict, names: dict):
        self.cfg = cfg
        self.names = names
        self.n_agents = cfg["agents"]
        self.n_engines = cfg["engines"]
        self.max_queues = cfg["max_queues"]
        self.qmax = cfg["queue_size_max"]
        self.memory_bytes = cfg["memory_mib"] << 20
        self.host_pool_bytes = cfg["host_pool_mib"] << 20
        self.n_signals = cfg["signals"]
        self.max_allocs = cfg["max_allocs"]
        self.trace_rings = cfg["trace_rings"]
        self.trace_events = cfg["trace_events"]
        # agent segment: header | queue descriptors | rings | kernarg slots
        self.qdesc_off = L.AGENT_HEADER_BYTES
        self.ring_off = self.qdesc_off + self.max_queues * L.QUEUE_DESC_BYTES
        self.ring_bytes = self.qmax * AQL_PACKET_BYTES
        self.kernarg_off = self.ring_off + self.max_queues * self.ring_bytes
        self.kernarg_queue_bytes = self.qmax * L.KERNARG_SLOT_BYTES
        self.agent_bytes = self.kernarg_off + self.max_queues * self.kernarg_queue_bytes
        # alloc segment: one region table per memory region (0 = host pool, 1 + a = agent a)
        self.alloc_region_bytes = L.alloc_region_header.itemsize + self.max_allocs * L.alloc_record.itemsize
        self.alloc_bytes = (1 + self.n_agents) * self.alloc_region_bytes
        self.codeobj_bytes = L.CODEOBJ_SLOTS * (L.codeobj_entry.itemsize + L.CODEOBJ_BLOB_BYTES)
        self.trace_ring_bytes = L.trace_ring_header.itemsize + self.trace_events * L.trace_event.itemsize
        self.trace_bytes = self.trace_rings * self.trace_ring_bytes
        self.dfx = None
        if cfg["profiling"]["enabled"]:
            self.dfx = DfxGeometry(cfg["profiling"], cfg["arch"], self.n_agents * self.n_engines)

    @classmethod
    def new(cls, cfg: dict, pid: int, token: str) -> "Topology":
        cfg = validate_config(cfg)
        names = {"boot": segment_name(pid, token, "boot"),
                 "signals": segment_name(pid, token, "signals"),
                 "hostpool": segment_name(pid, token, "hostpool"),
                 "alloc": segment_name(pid, token, "alloc"),
                 "codeobj": segment_name(pid, token, "codeobj"),
                 "trace": segment_name(pid, token, "trace")}
        for a in range(cfg["agents"]):
            names[f"agent{a}"] = segment_name(pid, token, f"agent{a}")
            names[f"mem{a}"] = segment_name(pid, token, f"mem{a}")
        if cfg["profiling"]["enabled"]:
            for k in ("dfxhdr", "dfxbuf", "dfxctl"):
                names[k] = segment_name(pid, token, k)
        return cls(cfg, names)

    def segment_sizes(self) -> dict:
        s = {"boot": L.BOOT_BYTES, "signals": self.n_signals * L.SIGNAL_SLOT_BYTES,
             "hostpool": self.host_pool_bytes, "alloc": self.alloc_bytes,
             "codeobj": self.codeobj_bytes, "trace": self.trace_bytes}
        for a in range(self.n_agents):
            s[f"agent{a}"] = self.agent_bytes
            s[f"mem{a}"] = self.memory_bytes
        if self.dfx is not None:
            s["dfxhdr"] = self.dfx.hdr_bytes + (-self.dfx.hdr_bytes) % 4096
            s["dfxbuf"] = self.dfx.buf_region_bytes + (-self.dfx.buf_region_bytes) % 4096
            s["dfxctl"] = self.dfx.ctl_bytes + (-self.dfx.ctl_bytes) % 4096
        return s

    def to_json(self) -> str:
        return json.dumps({"config": self.cfg, "names": self.names})

    @classmethod
    def from_json(cls, text: str) -> "Topology":
        d = json.loads(text)
        return cls(d["config"], d["names"])

    # apertures: (base, size, segment key, offset in segment, region index for the alloc table)
    def apertures(self):
        out = [(L.HOST_POOL_BASE, self.host_pool_bytes, "hostpool", 0, 0)]
        for a in range(self.n_agents):
            out.append((L.device_base(a), self.memory_bytes, f"mem{a}", 0, 1 + a))
            out.append((L.kernarg_base(a), self.max_queues * self.kernarg_queue_bytes,
                        f"agent{a}", self.kernarg_off, -1))
        return out


class PlatformMap:
    """Every segment of a platform mapped into this process, with typed views."""

    def __init__(self, topo: Topology, segs: dict, boot: Segment):
        self.topo = topo
        self.segs = segs
        self.boot = boot
        self.boot_hdr = boot.view(L.boot_header, 0, 1)[0:1]
        self.roles = boot.view(L.role_entry, L.BOOT_ROLES_OFF, L.BOOT_MAX_ROLES)
        self.signals = segs["signals"].view(L.signal_slot)
        self.signals_addr = segs["signals"].addr
        self.codeobj = segs["codeobj"].view(L.codeobj_entry, 0, L.CODEOBJ_SLOTS)
        self.codeobj_blob_off = L.CODEOBJ_SLOTS * L.codeobj_entry.itemsize
        self.agents = []
        for a in range(topo.n_agents):
            seg = segs[f"agent{a}"]
            self.agents.append(AgentMap(topo, seg, a))
        self.alloc_hdrs = []
        self.alloc_recs = []
        aseg = segs["alloc"]
        for r in range(1 + topo.n_agents):
            off = r * topo.alloc_region_bytes
            self.alloc_hdrs.append(aseg.view(L.alloc_region_header, off, 1))
            self.alloc_recs.append(aseg.view(L.alloc_record, off + L.alloc_region_header.itemsize, topo.max_allocs))
        self.apertures = [(b, s, segs[k], o, r) for (b, s, k, o, r) in topo.apertures()]

    @classmethod
    def attach(cls, boot_name: str, *, wait_up_s: float = 0.0) -> "PlatformMap":
        boot = Segment.attach(boot_name)
        hdr = boot.view(L.boot_header, 0, 1)
        if int(hdr["magic"][0]) != L.MAGIC:
            raise SegmentError(f"{boot_name} is not an hdemu boot block (magic {int(hdr['magic'][0]):#x})")
        if int(hdr["version"][0]) != L.VERSION:
            raise SegmentError(f"{boot_name} has layout version {int(hdr['version'][0])}, "
                               f"this code speaks {L.VERSION}")
        n = int(hdr["json_len"][0])
        text = bytes(boot.u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + n]).decode()
        topo = Topology.from_json(text)
        segs = {}
        for key, name in topo.names.items():
            segs[key] = boot if key == "boot" else Segment.attach(name)
        pm = cls(topo, segs, boot)
        if wait_up_s:
            deadline = time.monotonic() + wait_up_s
            while int(pm.boot_hdr["state"][0]) == L.BOOT_BOOTING and time.monotonic() < deadline:
                time.sleep(0.002)
        return pm

    @property
    def state(self) -> int:
        return int(self.boot_hdr["state"][0])

    def close(self) -> None:
        for s in self.segs.values():
            s.close()

    def signal_slot(self, handle: int) -> int:
        """Slot index of a signal handle, or -1 when the handle is not a valid signal."""
        off = handle - L.SIGNAL_HANDLE_BASE
        if off < 0 or off % L.SIGNAL_SLOT_BYTES or off // L.SIGNAL_SLOT_BYTES >= self.topo.n_signals:
            return -1
        return off // L.SIGNAL_SLOT_BYTES

    def signal_addr(self, slot: int) -> int:
        return self.signals_addr + slot * L.SIGNAL_SLOT_BYTES

    def resolve(self, addr: int, nbytes: int):
        """(segment, offset, region index) holding [addr, addr+nbytes), or None (aperture violation)."""
        for base, size, seg, off, region in self.apertures:
            if base <= addr and addr + nbytes <= base + size:
                return seg, off + (addr - base), region
        return None

    def codeobj_blob(self, slot: int) -> np.ndarray:
        seg = self.segs["codeobj"]
        off = self.codeobj_blob_off + slot * L.CODEOBJ_BLOB_BYTES
        return seg.u8[off:off + L.CODEOBJ_BLOB_BYTES]


class AgentMap:
    """Views of one agent segment: header, engine wake words, queue descriptors, rings, kernargs."""

    def __init__(self, topo: Topology, seg: Segment, index: int):
        self.index = index
        self.seg = seg
        self.hdr = seg.view(L.agent_header, 0, 1)
        self.qdesc = seg.view(L.queue_desc, topo.qdesc_off, topo.max_queues)
        self.qdesc_addr = seg.addr + topo.qdesc_off
        self.engine_stats = seg.view(L.engine_stats, L.AGENT_ENGINE_STATS_OFF, L.AGENT_MAX_ENGINES)
        self.topo = topo

    def engine_wake_addr(self, engine: int) -> int:
        return self.seg.addr + L.AGENT_ENGINE_WAKE_OFF + engine * 64

    def qd_addr(self, q: int) -> int:
        return self.qdesc_addr + q * L.QUEUE_DESC_BYTES

    def ring_offset(self, q: int) -> int:
        return self.topo.ring_off + q * self.topo.ring_bytes

    def kernarg_offset(self, q: int) -> int:
        return self.topo.kernarg_off + q * self.topo.kernarg_queue_bytes

    def kernarg_address(self, q: int, slot: int) -> int:
        return L.kernarg_base(self.index) + q * self.topo.kernarg_queue_bytes + slot * L.KERNARG_SLOT_BYTES
