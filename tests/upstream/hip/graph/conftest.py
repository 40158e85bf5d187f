"""The graph suite's resource fixture: what a case creates is released after it, whatever happened."""
import pytest

from tests.upstream.hip.graph._common import Resources


@pytest.fixture
def res(mod):
    """Streams, events, allocations, graphs and execs of one case (hip-tests' guards), released at the end:
    captures still open are ended first, then the device is synchronized."""
    r = Resources(mod)
    try:
        yield r
    finally:
        r.release()
