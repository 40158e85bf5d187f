"""The platform's shape (from its config) and a process's mapping of every segment.

The supervisor writes the topology as JSON into the boot block; every role and client reads it back
with ``PlatformMap.attach(boot_name)``. All offsets below follow from the topology alone, so both
sides compute the same addresses without talking.

The boot block's text (``json_len`` bytes at ``BOOT_JSON_OFF``) is JSON lines: first the topology
(config, segment names, and the supervisor's pid with its start time), then one line per role the
supervisor started (``{"role": i, "pid": p, "start": t}``). Lines are only ever appended, each
before the store of the new ``json_len``, so a reader that takes ``json_len`` once reads whole lines.
A start time (``segments.process_start``) next to each pid makes a reused pid look dead, not alive.
``attach`` checks everything it reads: a corrupt or foreign boot block is a ``LayoutError`` naming
what is wrong, a dead supervisor a ``PlatformError``, never a silent cross-wiring or a hang.
"""
from __future__ import annotations

import json
import time

import numpy as np

from . import layouts as L
from .aql import kernel_dispatch_packet as _packet
from .config import parse_config, platform_defaults
from .dfx import DfxGeometry
from .errors import ConfigError, HdemuError, LayoutError, PlatformError
from .segments import Segment, SegmentError, alive_since, parse_name, process_start, segment_name
from .sync import pid_alive

#: Every ``[platform]`` key with its default (``profiling`` fully defaulted too), from the schema in
#: shm_layout.config: the keys, types, ranges and defaults are declared there and nowhere else.
DEFAULTS = platform_defaults()


def validate_config(cfg: dict | None) -> dict:
    """Defaults filled in, every value checked; raises ``ConfigError`` (a ``ValueError``) naming the
    full key path. See ``shm_layout.config.parse_config``."""
    return parse_config(cfg)


AQL_PACKET_BYTES = _packet.itemsize     # every ring slot, AQL or SDMA, is one 64-byte packet
#: room for the boot block's text: the topology line and one line per started role
BOOT_TEXT_BYTES = L.BOOT_BYTES - L.BOOT_JSON_OFF
#: how often ``attach(wait_up_s=...)`` looks at a booting platform (and at its supervisor's life)
BOOT_POLL_S = 0.002


class Topology:
    """Sizes and offsets derived from a validated config plus the segment names of one run."""

    def __init__(self, cfg: dict, names: dict, supervisor: dict | None = None):
        self.cfg = cfg
        self.names = names
        #: the process that created the segments: {"pid", "start"} (``segments.process_start``)
        self.supervisor = dict(supervisor or {"pid": 0, "start": 0})
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
        return cls(cfg, names, {"pid": pid, "start": process_start(pid)})

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
        return json.dumps({"config": self.cfg, "names": self.names, "supervisor": self.supervisor})

    @classmethod
    def from_json(cls, text: str, boot_name: str | None = None) -> "Topology":
        """The topology of one boot block's first line, every part checked (``LayoutError`` naming
        what is wrong). With ``boot_name``, every segment name must be that run's."""
        where = boot_name or "boot block"
        try:
            d = json.loads(text)
        except ValueError as exc:
            raise LayoutError(f"{where}: the topology is not JSON ({exc})") from None
        if not isinstance(d, dict) or not {"config", "names", "supervisor"} <= set(d):
            raise LayoutError(f"{where}: the topology must be an object with config, names and supervisor")
        cfg, names, sup = d["config"], d["names"], d["supervisor"]
        try:
            cfg = validate_config(cfg)
        except ConfigError as exc:
            raise LayoutError(f"{where}: the topology's config is invalid: {exc}") from None
        if not isinstance(sup, dict) or not all(isinstance(sup.get(k), int) and sup[k] >= 0 for k in ("pid", "start")):
            raise LayoutError(f"{where}: the topology's supervisor must be {{pid, start}} (integers), not {sup!r}")
        if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise LayoutError(f"{where}: the topology's names must map segment keys to names")
        topo = cls(cfg, names, sup)
        want = set(topo.segment_sizes())
        missing, unknown = sorted(want - set(names)), sorted(set(names) - want)
        if missing or unknown:
            raise LayoutError(f"{where}: the topology's segment names do not fit its config: "
                              f"missing {missing}, unknown {unknown}")
        if boot_name is not None:
            if names["boot"] != boot_name or not boot_name.endswith("-boot"):
                raise LayoutError(f"{where}: the topology names its boot block {names['boot']!r}")
            run = boot_name[:-len("boot")]
            foreign = sorted(f"{k}={v}" for k, v in names.items() if v != run + k)
            if foreign:
                raise LayoutError(f"{where}: segment names of another run (expected {run}<key>): "
                                  + ", ".join(foreign))
        return topo

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
        self._text_len = 0              # bytes of the topology line in the boot block's text
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
    def attach(cls, boot_name: str, *, wait_up_s: float = 0.0, require_live: bool = True) -> "PlatformMap":
        """Map every segment of the platform whose boot block is ``boot_name``, after checking the
        block (``LayoutError``: bad length, JSON, names, sizes; ``SegmentError``: not a boot block,
        another version, a segment gone or another user's) and, with ``require_live``, that its
        supervisor is the live process that created it (``PlatformError``: dead, or its pid reused).
        ``wait_up_s``: wait that long for a booting platform to be up (not past its supervisor's death)."""
        boot = Segment.attach(boot_name)
        segs = {"boot": boot}
        try:
            topo, records = read_boot(boot, boot_name)
            if require_live:
                _check_supervisor(topo, boot_name)
            sizes = topo.segment_sizes()
            for key, name in topo.names.items():
                if key == "boot":
                    continue
                seg = segs[key] = Segment.attach(name)
                if seg.size != sizes[key]:
                    raise LayoutError(f"{boot_name}: segment {name} is {seg.size} bytes, its topology says "
                                      f"{sizes[key]} ({key})")
                if seg.uid != boot.uid:
                    raise LayoutError(f"{boot_name}: segment {name} belongs to uid {seg.uid}, the boot block "
                                      f"to uid {boot.uid}")
            pm = cls(topo, segs, boot)
        except BaseException:
            for seg in segs.values():
                seg.close()
            raise
        pm._text_len = records.pop(None)
        if wait_up_s:
            deadline = time.monotonic() + wait_up_s
            while pm.state == L.BOOT_BOOTING and time.monotonic() < deadline:
                if require_live and not pm.supervisor_alive():
                    pm.close()
                    raise PlatformError(f"platform {boot_name} died while booting (supervisor pid "
                                        f"{topo.supervisor['pid']} is gone)")
                time.sleep(BOOT_POLL_S)
        return pm

    # -- liveness: a pid and the start time recorded next to it --------------------------------
    def supervisor_alive(self) -> bool:
        """The supervisor that created these segments still runs (a reused pid is not it)."""
        return alive_since(self.topo.supervisor["pid"], self.topo.supervisor["start"])

    def role_records(self) -> dict[int, tuple[int, int]]:
        """role index -> (pid, start time) as the supervisor recorded them when it started each role."""
        return _role_lines(self.boot, self.topo.names["boot"], self._text_len)

    def role_alive(self, index: int, records: dict | None = None) -> bool:
        """Role ``index`` still runs: its pid alive and, when the supervisor recorded it, with the
        same start time (a role whose pid was reused by a later process is dead)."""
        pid = int(self.roles[index]["pid"])
        rec = (self.role_records() if records is None else records).get(index)
        return alive_since(pid, rec[1] if rec is not None and rec[0] == pid else 0)

    @property
    def state(self) -> int:
        return int(self.boot_hdr["state"][0])

    def close(self) -> bool:
        """Unmap every segment; True when all are unmapped (see ``Segment.close``)."""
        done = True
        for s in self.segs.values():
            done = s.close() and done
        return done

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


# -- the boot block's text ---------------------------------------------------------------------
def write_boot_text(boot: Segment, topo: Topology) -> None:
    """The topology line into a new boot block, then its length (before the block's magic)."""
    text = (topo.to_json() + "\n").encode()
    if len(text) > BOOT_TEXT_BYTES:
        raise PlatformError(f"topology too large for the boot block ({len(text)} > {BOOT_TEXT_BYTES} bytes)")
    boot.u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + len(text)] = memoryview(text)
    boot.view(L.boot_header, 0, 1)["json_len"] = len(text)


def record_role(boot: Segment, index: int, pid: int) -> int:
    """Append role ``index``'s pid and start time to the boot block's text (the supervisor, once it
    started the role; the only writer). The line goes first, the new length last. Returns the start."""
    start = process_start(pid)
    line = (json.dumps({"role": index, "pid": pid, "start": start}) + "\n").encode()
    hdr = boot.view(L.boot_header, 0, 1)
    n = int(hdr["json_len"][0])
    if n + len(line) > BOOT_TEXT_BYTES:
        raise PlatformError(f"no room left in the boot block for role {index}")
    boot.u8[L.BOOT_JSON_OFF + n:L.BOOT_JSON_OFF + n + len(line)] = memoryview(line)
    hdr["json_len"] = n + len(line)
    return start


def _text(boot: Segment, where: str) -> str:
    n = int(boot.view(L.boot_header, 0, 1)["json_len"][0])
    if not 0 < n <= BOOT_TEXT_BYTES:
        raise LayoutError(f"{where}: the boot block's text length is {n}, not in [1, {BOOT_TEXT_BYTES}]")
    try:
        return bytes(boot.u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + n]).decode()
    except UnicodeDecodeError as exc:
        raise LayoutError(f"{where}: the boot block's text is not UTF-8 ({exc})") from None


def _role_lines(boot: Segment, where: str, skip: int) -> dict:
    """The role lines after the first ``skip`` characters of the text: index -> (pid, start)."""
    out = {}
    for line in _text(boot, where)[skip:].splitlines():
        try:
            d = json.loads(line)
            i, pid, start = d["role"], d["pid"], d["start"]
        except (ValueError, TypeError, KeyError):
            raise LayoutError(f"{where}: a role line of the boot block is corrupt: {line[:80]!r}") from None
        if not (isinstance(i, int) and 0 <= i < L.BOOT_MAX_ROLES and isinstance(pid, int) and pid >= 0
                and isinstance(start, int) and start >= 0):
            raise LayoutError(f"{where}: a role line of the boot block is out of range: {line[:80]!r}")
        out[i] = (pid, start)
    return out


def read_boot(boot: Segment, boot_name: str) -> tuple[Topology, dict]:
    """The checked topology of a boot block and its role records (index -> (pid, start); key None:
    the length of the topology line). ``SegmentError`` when it is no boot block of this version,
    ``LayoutError`` naming what is corrupt."""
    if boot.size < L.boot_header.itemsize:
        raise SegmentError(f"{boot_name} is not an hdemu boot block ({boot.size} bytes)")
    hdr = boot.view(L.boot_header, 0, 1)
    if int(hdr["magic"][0]) != L.MAGIC:
        raise SegmentError(f"{boot_name} is not an hdemu boot block (magic {int(hdr['magic'][0]):#x})")
    if int(hdr["version"][0]) != L.VERSION:
        raise SegmentError(f"{boot_name} has layout version {int(hdr['version'][0])}, "
                           f"this code speaks {L.VERSION}")
    if boot.size != L.BOOT_BYTES:
        raise LayoutError(f"{boot_name}: the boot block is {boot.size} bytes, not {L.BOOT_BYTES}")
    text = _text(boot, boot_name)
    first = text.split("\n", 1)[0]
    topo = Topology.from_json(first, boot_name)
    sup = topo.supervisor["pid"]
    run = parse_name(boot_name)
    if run is not None and run[0] != sup:
        raise LayoutError(f"{boot_name}: the topology's supervisor is pid {sup}, the name says {run[0]}")
    if int(hdr["supervisor_pid"][0]) != sup:
        raise LayoutError(f"{boot_name}: the header's supervisor is pid {int(hdr['supervisor_pid'][0])}, "
                          f"the topology says {sup}")
    skip = min(len(text), len(first) + 1)
    records = _role_lines(boot, boot_name, skip)
    records[None] = skip
    return topo, records


def _check_supervisor(topo: Topology, boot_name: str) -> None:
    sup = topo.supervisor
    if alive_since(sup["pid"], sup["start"]):
        return
    why = "runs no more: its pid now belongs to another process" if pid_alive(sup["pid"]) else "is gone"
    raise PlatformError(f"platform {boot_name} is dead: its supervisor (pid {sup['pid']}) {why}; "
                        f"`hdemu clean` removes what it left")


def run_alive(pid: int, token: str) -> bool:
    """Whether the run of creator ``pid`` and ``token`` lives: its pid runs and, when the run's boot
    block is readable and records a start time, with that start time (a reused pid is dead). For
    ``segments.sweep`` (``hdemu clean``) and the CLI's list of live platforms."""
    if not pid_alive(pid):
        return False
    name = segment_name(pid, token, "boot")
    try:
        boot = Segment.attach(name)
    except SegmentError:
        return True                 # no boot block of ours to read (another user's, booting, not a platform)
    try:
        topo, _recs = read_boot(boot, name)
        start = topo.supervisor["start"]
    except HdemuError:
        start = 0                   # booting, or corrupt: the pid alone decides
    finally:
        boot.close()
    return alive_since(pid, start)


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
