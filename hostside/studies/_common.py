"""What every study shares: its run directory, a one-line progress display on stderr, CSV and JSON
writers, matplotlib (Agg) figures saved small, and the platform configs the studies start."""
from __future__ import annotations

import csv
import json
import math
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")                  # files only: no display, no GUI toolkit

__all__ = ["Study", "Progress", "plt", "FIG_SIZE", "FIG_DPI", "clean_env"]

FIG_SIZE = (7.2, 4.2)                  # inches: at FIG_DPI a PNG of about 40-90 KB
FIG_DPI = 80


def clean_env() -> None:
    """The studies measure platforms they start themselves: never a user's HDEMU_PLATFORM/CONFIG."""
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG"):
        os.environ.pop(var, None)


class Progress:
    """``[study] step i/n: what (elapsed)`` rewritten in place on stderr (a terminal), or one line per
    step when stderr is not a terminal (a log, a test)."""

    def __init__(self, study: str, total: int, *, stream=None):
        self.study, self.total, self.done = study, max(1, total), 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()

    def step(self, what: str) -> None:
        self.done += 1
        line = (f"[{self.study}] {min(self.done, self.total)}/{self.total} {what} "
                f"({time.monotonic() - self.t0:.1f} s)")
        if self.tty:
            self.stream.write("\r" + line[:118].ljust(118))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _plain(v):
    """A JSON-safe value: numpy scalars to Python, NaN/inf to None."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


class Study:
    """The run directory of one study: ``<name>.csv`` files, ``<name>.png`` figures, ``summary.json``."""

    def __init__(self, name: str, out_dir: str, small: bool):
        self.name, self.small = name, small
        self.dir = os.path.abspath(out_dir)
        os.makedirs(self.dir, exist_ok=True)
        self.files: list[str] = []
        self.t0 = time.monotonic()

    def path(self, fname: str) -> str:
        p = os.path.join(self.dir, fname)
        if fname not in self.files:
            self.files.append(fname)
        return p

    def write_csv(self, fname: str, rows: list[dict]) -> str:
        """``rows`` (dicts with the same keys, in order) as CSV; returns the path."""
        p = self.path(fname)
        with open(p, "w", newline="") as f:
            if rows:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                for r in rows:
                    w.writerow({k: _plain(v) for k, v in r.items()})
        return p

    def write_json(self, fname: str, obj) -> str:
        p = self.path(fname)
        with open(p, "w") as f:
            json.dump(_plain(obj), f, indent=1)
        return p

    def figure(self, ncols: int = 1, nrows: int = 1, size=FIG_SIZE):
        import matplotlib.pyplot as plt     # heavy: only when drawing (a sweep point's process draws nothing)
        fig, axes = plt.subplots(nrows, ncols, figsize=size, dpi=FIG_DPI, squeeze=False)
        return fig, axes

    def save(self, fig, fname: str, title: str) -> str:
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        p = self.path(fname)
        fig.savefig(p, dpi=FIG_DPI, pil_kwargs={"optimize": True})
        import matplotlib.pyplot as plt     # heavy: only when drawing (see figure)
        plt.close(fig)
        return p

    def finish(self, figures: dict, claim: str, held: bool | None) -> dict:
        """Write ``summary.json`` and return it: the study, its claim and whether the run bears it
        out, the headline figures, the files written and the wall time."""
        out = {"study": self.name, "small": self.small, "claim": claim,
               "claim_held": held, "figures": figures,
               "duration_s": round(time.monotonic() - self.t0, 2), "out_dir": self.dir}
        out["files"] = sorted(self.files) + ["summary.json"]
        self.write_json("summary.json", out)
        return _plain(out)
