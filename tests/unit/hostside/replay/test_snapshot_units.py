"""Units of ``hostside.replay._snapshot`` beyond the upstream ports: a restore that skips one region
still reverts the others (the per-region path), the device global's module gate, and the outcome
line's ``skipped_regions`` field."""
import numpy as np
import pytest

from hostside import hip
from hostside.replay import Outcome, _diagnostics, _snapshot
from tests.upstream.replay import _snap as K

N = 4096
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def mod():
    yield from K.platform_module()


def test_a_skipped_region_does_not_stop_the_others_from_being_restored(mod, capsys):
    a, b = hip.hipMalloc(N * 4), hip.hipMalloc(N * 4)
    K.fill(mod, a, 1.0, N)
    K.fill(mod, b, 2.0, N)
    s = _snapshot.snap(K.gpu_agent())
    hip.hipFree(a)
    K.add(mod, b, 5.0, N)
    assert _snapshot.restore(s) and s.skipped == 1
    assert np.all(K.read_device(b, N) == 2.0)
    err = capsys.readouterr().err
    assert f"{a:#x}" in err and "restore skips region" in err
    assert _snapshot.restore(s) and s.skipped == 1
    assert f"{a:#x}" not in capsys.readouterr().err      # warned once per snapshot
    hip.hipFree(b)


def test_device_globals_carry_their_code_object_and_follow_its_liveness(mod):
    ptr, _size = hip.hipModuleGetGlobal(mod, "counter")
    s = _snapshot.snap(K.gpu_agent())
    blk = next(b for b in s.blocks if b.base == ptr)
    assert blk.executable != 0 and blk.executable in _snapshot.loaded_executables()
    assert blk.generation == _snapshot.generation_of(ptr)
    plain = hip.hipMalloc(256)
    s2 = _snapshot.snap(K.gpu_agent())
    assert next(b for b in s2.blocks if b.base == plain).executable == 0
    hip.hipFree(plain)


def test_the_outcome_line_names_skipped_regions_only_when_there_are_some():
    o = Outcome(1, 0, "k", "replayed", requested=3, executed=3)
    assert "skipped_regions" not in _diagnostics.format_outcome(o)
    o.skipped_regions = 2
    assert "skipped_regions=2" in _diagnostics.format_outcome(o)
