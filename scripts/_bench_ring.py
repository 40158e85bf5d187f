"""The bare shared-memory ring: the physical ceiling ``bench_dispatch.py`` divides its figures by.

Two processes, one POSIX shared-memory segment (``shm_layout.segments.Segment``, posix_ipc), rings of
64-byte records, both sides spinning. No locks, no futexes, no atomics library, no packing: what a
Python process can do at best to hand a 64-byte record to another one on this machine, so the ratio
of an hdemu figure to it says how much of the machine's ceiling the emulator uses.

Record: one 64-byte slot, ``u64 seq`` then 56 payload bytes. The writer stores the payload, then the
sequence word (an aligned 8-byte store through a ``memoryview`` cast to ``Q``); the reader spins until
the slot's sequence word is the one it expects, then reads the payload. Program order is enough on
x86-64 (TSO: stores are seen in order, loads are not reordered with older loads); a weakly ordered
machine would need fences, which this ceiling deliberately leaves out.

* ping-pong (``bare_pingpong``): the parent writes record i into the request ring and spins on the
  reply ring; the child (``echo``) spins on the request ring, copies the payload into the reply ring
  and publishes it. One sample = write -> reply seen.
* streaming (``bare_stream``): the parent writes N records into the request ring as fast as the ring
  has room; the child (``sink``) spins, reads each record and publishes how many it has consumed
  (``tail``); the parent waits for space on ``tail`` only when the ring is full. Messages/s = N /
  (first write -> the child has consumed the last one), best of a few runs.

The peer is started with ``subprocess`` (never fork): ``python _bench_ring.py echo|sink <segment>
<parent pid>``. It stops when told (``stop`` word), when its parent is gone, or after
``IDLE_EXIT_S`` without a record, so a killed benchmark never leaves a core spinning.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from shm_layout.segments import Segment, new_run_token, segment_name  # noqa: E402

SLOT = 64
NSLOTS = 1024                       # power of two
MASK = NSLOTS - 1
HDR = 4096
REQ_OFF = HDR                       # parent -> child ring
REP_OFF = HDR + NSLOTS * SLOT       # child -> parent ring (ping-pong only)
SIZE = HDR + 2 * NSLOTS * SLOT
# control words, as indices into the u64 view; each on its own 64-byte line
W_READY = 0                         # child -> parent: its pid once it is attached and spinning
W_STOP = 8                          # parent -> child: stop now
W_TAIL = 16                         # child -> parent: records consumed (streaming)
PAYLOAD = bytes(range(8, 64))       # 56 bytes after the sequence word
IDLE_EXIT_S = 10.0
START_TIMEOUT_S = 20.0


def _pct(samples_ns: list[int], q: float) -> float:
    s = sorted(samples_ns)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s)) - 1))] / 1e3


class _Peer:
    """A segment and the child process spinning on it."""

    def __init__(self, role: str):
        self.seg = Segment.create(segment_name(os.getpid(), new_run_token(), f"benchring-{role}"), SIZE)
        self.b = memoryview(self.seg.buf)
        self.q = self.b.cast("Q")
        self.child = None
        try:
            self.child = subprocess.Popen([sys.executable, os.path.abspath(__file__), role, self.seg.name,
                                           str(os.getpid())], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + START_TIMEOUT_S
            while self.q[W_READY] != self.child.pid:
                if self.child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"bare-ring peer ({role}) did not start (exit {self.child.poll()})")
                time.sleep(0.001)
        except BaseException:
            self.close()
            raise

    def check(self) -> None:
        if self.child.poll() is not None:
            raise RuntimeError(f"bare-ring peer exited ({self.child.returncode}) in the middle of a run")

    def wait_tail(self, at_least: int) -> None:
        """Spin until the consumer has consumed ``at_least`` records."""
        q = self.q
        while True:
            for _ in range(65536):
                if q[W_TAIL] >= at_least:
                    return
            self.check()

    def close(self) -> None:
        if self.child is not None:
            self.q[W_STOP] = 1
            try:
                self.child.wait(5.0)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
        self.q.release()
        self.b.release()
        self.seg.close()
        self.seg.unlink()


def bare_pingpong(samples: int, warmup: int = 300) -> tuple[float, float]:
    """(p50, p99) in microseconds of a 64-byte record sent to a spinning peer and echoed back."""
    peer = _Peer("echo")
    try:
        b, q, payload = peer.b, peer.q, PAYLOAD
        times = []
        clock = time.perf_counter_ns
        spin = range(65536)
        for seq in range(1, warmup + samples + 1):
            o = REQ_OFF + ((seq - 1) & MASK) * SLOT
            ri = (REP_OFF + ((seq - 1) & MASK) * SLOT) >> 3
            t = clock()
            b[o + 8:o + SLOT] = payload
            q[o >> 3] = seq
            while q[ri] != seq:
                for _ in spin:                      # bounded: a dead peer must not hang the parent
                    if q[ri] == seq:
                        break
                else:
                    peer.check()
            reply = b[(ri << 3) + 8:(ri << 3) + SLOT].tobytes()
            if seq > warmup:
                times.append(clock() - t)
        if reply != payload:
            raise RuntimeError("bare-ring echo returned a different payload")
    finally:
        peer.close()
    return _pct(times, 50), _pct(times, 99)


def bare_stream(n: int, runs: int = 3) -> float:
    """Messages/s of n 64-byte records streamed one way to a spinning consumer: the best of ``runs``
    runs through the same peer. A ceiling is the best the machine does: on a shared 2-core machine a
    run during which another process holds a core puts producer and consumer on one core and
    collapses (10x), which says nothing about the ring."""
    peer = _Peer("sink")
    try:
        b, q, payload = peer.b, peer.q, PAYLOAD
        # warm-up: one ring's worth; sequence numbers then just go on from run to run
        seq = 1
        for seq in range(1, NSLOTS + 1):
            o = REQ_OFF + ((seq - 1) & MASK) * SLOT
            b[o + 8:o + SLOT] = payload
            q[o >> 3] = seq
        peer.wait_tail(NSLOTS)
        first, best = NSLOTS + 1, 0.0
        for _ in range(runs):
            tail = first - 1
            t = time.perf_counter()
            for seq in range(first, first + n):
                if seq - tail > NSLOTS:
                    while seq - (tail := q[W_TAIL]) > NSLOTS:
                        peer.wait_tail(seq - NSLOTS)
                o = REQ_OFF + ((seq - 1) & MASK) * SLOT
                b[o + 8:o + SLOT] = payload
                q[o >> 3] = seq
            peer.wait_tail(first + n - 1)
            best = max(best, n / (time.perf_counter() - t))
            first += n
    finally:
        peer.close()
    return best


# ----------------------------------------------------------------------------------------------- peer

def _wait_for(q, idx: int, seq: int, parent: int) -> bool:
    """Spin until q[idx] == seq; False when told to stop, orphaned or idle too long."""
    idle_since = time.monotonic()
    while True:
        for _ in range(65536):
            if q[idx] == seq:
                return True
        if q[W_STOP] or os.getppid() != parent or time.monotonic() - idle_since > IDLE_EXIT_S:
            return False


def _echo(b, q, parent: int) -> None:
    seq = 1
    while True:
        o = REQ_OFF + ((seq - 1) & MASK) * SLOT
        if q[o >> 3] != seq and not _wait_for(q, o >> 3, seq, parent):
            return
        r = REP_OFF + ((seq - 1) & MASK) * SLOT
        b[r + 8:r + SLOT] = b[o + 8:o + SLOT]
        q[r >> 3] = seq
        seq += 1


def _sink(b, q, parent: int) -> None:
    seq = 1
    while True:
        o = REQ_OFF + ((seq - 1) & MASK) * SLOT
        if q[o >> 3] != seq and not _wait_for(q, o >> 3, seq, parent):
            return
        b[o + 8:o + SLOT].tobytes()                 # the consumer reads the record
        q[W_TAIL] = seq
        seq += 1


def _peer_main(role: str, name: str, parent: int) -> int:
    seg = Segment.attach(name)
    b = memoryview(seg.buf)
    q = b.cast("Q")
    try:
        q[W_READY] = os.getpid()
        (_echo if role == "echo" else _sink)(b, q, parent)
    finally:
        q.release()
        b.release()
        seg.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("echo", "sink"):
        sys.exit("usage: _bench_ring.py echo|sink <segment> <parent pid>  (started by bench_dispatch.py)")
    sys.exit(_peer_main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
