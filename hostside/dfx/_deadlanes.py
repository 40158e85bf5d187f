"""The collector's part for lanes that died (SIGKILL, a crash): the records left in their current
buffers are collected at the end of the run (``DeadLanes.adopt_dead_lanes``, a part of ``Collector``),
as if the lane had published them: the buffer must be the thread's own on both sides (the host's
table: on the device with that thread; its ownership word: CURRENT with the pool's seq), and the
device's published count moves with them, so ``collected + dropped == total`` holds again and the
adoption is reported (``pool_loss.adopted``, LOSS_ADOPTED).
"""
from __future__ import annotations

from shm_layout import dfx as D
from shm_layout.layouts import offset_of
from shm_layout.logs import role_logger

from ._accounting import lane_dead
from ._ownership import add_loss

__all__ = ["DeadLanes"]

_log = role_logger("collector")
_PB_CUR_PTR = offset_of(D.pool_block, "current_buf_ptr")
_PB_CUR_SEQ = offset_of(D.pool_block, "current_buf_seq")
_PB_COUNT = offset_of(D.pool_block, "current_count")
_PB_PUBLISHED = offset_of(D.pool_block, "published_record_count")
_BUF_RECORDS = D.buffer_header.itemsize          # a buffer's records follow its header


class DeadLanes:
    """Adoption of dead lanes' current buffers (methods of ``Collector``, which holds the state)."""

    def adopt_dead_lanes(self) -> int:
        """Collect the records left in the current buffers of every lane that died (SIGKILL, crash):
        nobody will publish them. Returns the number of records adopted."""
        n = 0
        g = self.g
        for lane in range(g.prof["lanes"]):
            if not lane_dead(self.ctl.view(D.lane_status, g.lane_status_off(lane), 1)[0]):
                continue
            for t in range(lane * g.prof["threads_per_lane"], (lane + 1) * g.prof["threads_per_lane"]):
                if t in self.corrupt:
                    continue
                for k in g.kinds:
                    n += self.adopt_current(t, k)
        return n

    def adopt_current(self, t: int, k: int) -> int:
        """The current buffer of pool (t, k) of a dead lane, collected as if the lane had published it
        (the device's published count moves too, so the accounting still adds up)."""
        g = self.g
        po = g.pool_off(t, k)
        ptr = self.dev_u64(po + _PB_CUR_PTR)
        count = self.dev_u32(po + _PB_COUNT)
        seq = self.dev_u32(po + _PB_CUR_SEQ)
        if not ptr or not count:
            return 0
        try:
            bid = g.buffer_id(k, ptr)
        except ValueError as exc:
            _log.error("dead lane's thread %d: current %s buffer: %s", t, D.KIND_NAMES[k], exc)
            return 0
        own = g.owner_off(bid)
        if (self.table.check_returned(bid, t, seq) is not None or count > g.per_buf[k]
                or self.dev_u64(own) != D.buffer_owner_word(D.BUF_CURRENT, t, seq)):
            _log.error("dead lane's thread %d: current %s buffer %#x (%d records) is not its own: left alone",
                       t, D.KIND_NAMES[k], ptr, count)
            return 0
        self.table.take(bid, seq)
        dt = g.rec_dtype[k]
        rec0 = ptr - D.DFX_BUF_BASE + _BUF_RECORDS
        self.buf.read_range_from_device(rec0, count * dt.itemsize)
        recs = self.buf.host[rec0:rec0 + count * dt.itemsize].view(dt)
        with self.out_lock:
            if k == D.K_ARGS_DUMP:
                self._collect_payloads(t, recs)
            self.write_records(k, recs)
        published = self.dev_u64(po + _PB_PUBLISHED)
        self.publish_collected(t, k, count)
        add_loss(self.c64, g, t, k, "adopted", count, D.LOSS_ADOPTED)
        self.stats["adopted"] += count
        self.host_put_u64(own, D.buffer_owner_word(D.BUF_COLLECTED, t, seq))
        # the dead device's fields, on its behalf: its records are published, it holds nothing
        self.host_put_u64(po + _PB_PUBLISHED, published + count)
        self.host_put_u32(po + _PB_COUNT, 0)
        self.host_put_u64(po + _PB_CUR_PTR, 0)
        _log.warning("collected %d records from the current %s buffer of dead thread %d", count, D.KIND_NAMES[k], t)
        return count
