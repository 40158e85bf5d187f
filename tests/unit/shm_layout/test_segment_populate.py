"""``Segment.populate``: every page of a fresh mapping becomes resident in this process at once (the
lanes and the collector call it so that streaming through their buffers costs no first-touch page
fault per page), and the contents stay what they were."""
from __future__ import annotations

import os

import numpy as np
import pytest

from shm_layout.segments import Segment, new_run_token, segment_name

pytestmark = pytest.mark.timeout(30)

SIZE = 64 * 4096


def resident_kib(addr: int) -> int:
    """Rss of the mapping that starts at ``addr``, read from /proc/self/smaps."""
    with open("/proc/self/smaps") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        rng = line.split()[0]
        if "-" in rng and not line.startswith(("Rss", "Size")):
            try:
                lo = int(rng.split("-")[0], 16)
            except ValueError:
                continue
            if lo == addr:
                for follow in lines[i + 1:i + 30]:
                    if follow.startswith("Rss:"):
                        return int(follow.split()[1])
    raise AssertionError(f"no mapping at {addr:#x}")


@pytest.mark.parametrize("write", [True, False])
def test_populate_maps_every_page_and_keeps_the_contents(write):
    name = segment_name(os.getpid(), new_run_token(), "populate")
    seg = Segment.create(name, SIZE)
    try:
        pattern = (np.arange(SIZE, dtype=np.uint64) * 2654435761 % 251).astype(np.uint8)
        seg.u8[:] = pattern
        other = Segment.attach(name)       # a second, untouched mapping: nothing resident yet
        try:
            assert resident_kib(other.addr) < SIZE // 1024
            assert other.populate(write=write) is True
            assert resident_kib(other.addr) == SIZE // 1024
            assert np.array_equal(other.u8, pattern), "populate must not change the contents"
        finally:
            other.close()
    finally:
        seg.close()
        seg.unlink()
