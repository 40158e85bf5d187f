"""Pageable host copies of a stream through the process's staging buffers (``VirtualGPU``'s base).

A staging buffer (``_qpool.StagingPool``: at most 8 of ``STAGING_BYTES``, in fine-grained system
memory) is lent to one copy at a time. A synchronous copy holds it until its last chunk has landed
(chunks of half a buffer, the two halves alternating). A host-asynchronous copy from pageable memory
to the device whose bytes fit one buffer returns once the data is in the buffer, as CLR's staged
copies: the caller may change its array right after the call, and the buffer is lent again once the
copy's completion signal reads 0 (``StagingPool.release_after``). That covers hipMemcpyAsync
(``copy_from_host(wait=False)``, one SDMA copy) and the pitched hipMemcpy2DAsync / hipMemcpy3DAsync
(``copy_rect_from_host``: the rows gathered into one buffer, one rectangular SDMA packet per slice,
so the device writes the destination's rows a pitch apart and its slices a slice pitch apart). A copy
to pageable memory always waits: the data must be there when it returns, as in CLR.
"""
from __future__ import annotations

import numpy as np

__all__ = ["StagedCopies", "STAGED_SLICES"]

#: Most slices a staged pitched copy may have (one rectangular SDMA packet each, all queued at once
#: behind the stream's earlier work: a quarter of the 256-slot SDMA ring). A copy of more slices, or
#: of more bytes than a staging buffer, is not staged (``copy_rect_from_host`` returns False).
STAGED_SLICES = 64


class StagedCopies:
    """The pageable copies of a stream (see the module doc); the stream (``VirtualGPU``) has ``rt``,
    ``lock``, ``staging``, ``copy``, ``copy_rect``, ``flush``, ``sync_signal`` and ``last_signal``."""

    def _stage_async(self, n: int, fill, submit) -> bool:
        """One host-asynchronous copy of ``n`` bytes through one staging buffer (the caller holds the
        stream lock): ``fill(view)`` writes the data into the buffer's first ``n`` bytes, then
        ``submit(address)`` queues the copy from there and returns the completion signal of its last
        packet, which the buffer stays lent until. False, with nothing done, when the buffer lent is
        smaller than ``n`` (the pool halves its buffers when the host pool is short)."""
        staging = self.staging.acquire()
        if n > staging[1]:
            self.staging.release(staging)
            return False
        try:
            fill(self.rt.host_view(staging[0], n))
            s = submit(staging[0])
            self.flush()
        except BaseException:
            self.staging.discard(staging)       # a copy may still be in flight: never lent again
            raise
        self.staging.release_after(staging, s)
        return True

    def copy_from_host(self, dst: int, data: np.ndarray, wait: bool = True) -> None:
        """Pageable host -> device. ``wait`` (hipMemcpy): returns once the copy has landed. Without it
        (hipMemcpyAsync), a copy that fits one staging buffer returns once the data is in the buffer,
        which stays lent until the copy completes (``StagingPool.release_after``); a larger one
        returns once its last chunk has landed, as with ``wait``. Holds the stream lock throughout."""
        src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        n = len(src)
        with self.lock:
            if not wait and n <= self.staging.nbytes and self._stage_async(
                    n, lambda view: view.__setitem__(slice(None), src), lambda stage: self.copy(dst, stage, n)):
                return
            staging = self.staging.acquire()
            try:
                stage, half = staging[0], staging[1] // 2
                pos, k = 0, 0
                last = [None, None]
                while pos < n:
                    m = min(half, n - pos)
                    buf = stage + (k & 1) * half
                    if last[k & 1] is not None:          # the half is reused: its previous copy must be done
                        self.sync_signal(last[k & 1])
                    self.rt.host_view(buf, m)[:] = src[pos:pos + m]
                    last[k & 1] = self.copy(dst + pos, buf, m)
                    pos += m
                    k += 1
                if self.last_signal is not None:
                    self.sync_signal(self.last_signal)
            except BaseException:
                self.staging.discard(staging)       # a copy may still be in flight: never lent again
                raise
            self.staging.release(staging)

    def copy_rect_from_host(self, dst: int, dst_pitch: int, rows: np.ndarray, slice_pitch: int = 0) -> bool:
        """Pageable host -> device, host-asynchronous (hipMemcpy2DAsync, hipMemcpy3DAsync): ``rows``, a
        u8 array of shape (rows, width) or (slices, rows, width) with any strides, is gathered into one
        staging buffer and copied from there by one rectangular SDMA packet per slice: row r of slice z
        goes to ``dst + z * slice_pitch + r * dst_pitch``. True once the data is staged (the caller's
        array may change at once; the buffer stays lent until the last packet completes). False, with
        nothing done, when the bytes do not fit a staging buffer or there are more than STAGED_SLICES
        slices: the caller copies another way (and waits). Holds the stream lock throughout."""
        if rows.ndim == 2:
            rows = rows[np.newaxis]
        depth, height, width = rows.shape
        n = depth * height * width
        if depth > STAGED_SLICES or n > self.staging.nbytes:
            return False

        def submit(stage: int):
            for z in range(depth):
                s = self.copy_rect(dst + z * slice_pitch, dst_pitch, stage + z * height * width, width, width,
                                   height)
            return s
        with self.lock:
            return self._stage_async(n, lambda view: view.reshape(depth, height, width).__setitem__(
                slice(None), rows), submit)

    def copy_to_host(self, out: np.ndarray, src: int) -> None:
        """Device -> pageable host; ``out`` is a writable contiguous array. Returns once the data is in
        ``out`` (as CLR: a copy to pageable memory waits, async or not). Holds the stream lock and a
        staging buffer of the process throughout."""
        dst = out.reshape(-1).view(np.uint8)
        with self.lock:
            staging = self.staging.acquire()
            try:
                stage, half = staging[0], staging[1] // 2
                pos = 0
                while pos < len(dst):
                    n = min(half, len(dst) - pos)
                    s = self.copy(stage, src + pos, n)
                    self.sync_signal(s)
                    dst[pos:pos + n] = self.rt.host_view(stage, n)
                    pos += n
            except BaseException:
                self.staging.discard(staging)       # a copy may still be in flight: never lent again
                raise
            self.staging.release(staging)
