"""What a sweep shows while it runs (``SweepProgress``) and the error of a sweep that cannot start."""
from __future__ import annotations

import sys
import time

__all__ = ["SweepProgress", "SweepError"]


class SweepError(RuntimeError):
    """A sweep that cannot start (a bad directory, no usable Dask cluster); the message says why."""


class SweepProgress:
    """``[sweep NAME] done/total done, R running, F failed, ~T s left`` on stderr: rewritten in place
    on a terminal, one line per change otherwise. Time left is the mean duration of the finished
    points times those left, over the points that run at once."""

    def __init__(self, name: str, total: int, slots: int, stream=None):
        self.name, self.total, self.slots = name, total, max(1, slots)
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = self.failed = self.running = 0
        self.durations: list[float] = []
        self.t0 = time.monotonic()

    def left_s(self) -> float | None:
        if not self.durations:
            return None
        rest = self.total - self.done - self.failed
        return sum(self.durations) / len(self.durations) * rest / self.slots

    def update(self, running: int | None = None, result: dict | None = None, note: str = "") -> None:
        if running is not None:
            self.running = running
        if result is not None:
            if result["status"] == "ok":
                self.done += 1
            else:
                self.failed += 1
            self.durations.append(result["duration_s"])
            note = note or (f"{result['key']} r{result['repeat']}: {result['status']}"
                            + (f" ({result['error'][:60]})" if result["status"] != "ok" else ""))
        left = self.left_s()
        line = (f"[sweep {self.name}] {self.done}/{self.total} done, {self.running} running, {self.failed} failed, "
                f"{'time left ?' if left is None else f'~{left:.0f} s left'} "
                f"({time.monotonic() - self.t0:.0f} s)" + (f" {note}" if note else ""))
        self.stream.write("\r" + line[:150].ljust(150) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
