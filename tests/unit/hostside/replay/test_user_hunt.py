"""``hdemu counters``'s command line as a user types it: an output path that cannot be written, an
empty or spaced counter list (no platform starts: these are refused before the program runs)."""
from __future__ import annotations

import pytest

from hostside.replay.counters import CounterCollector
from tests.unit.hostside.platform.test_cli import hdemu, one_line_error


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "prog.py"
    p.write_text("print('program ran')\n")
    return p


@pytest.mark.parametrize("where", ["missing_dir/t.csv", "."])
def test_an_output_that_cannot_be_written_is_refused_before_the_program_runs(tmp_path, prog, where):
    """Was: the program ran to its end, then writing the CSV raised FileNotFoundError /
    IsADirectoryError as a traceback and the whole run's counters were lost."""
    out = tmp_path / where
    r = hdemu("counters", "-o", str(out), "--", str(prog))
    assert r.returncode == 2, r
    one_line_error(r, "cannot write the table", str(out))
    assert "program ran" not in r.stdout


def test_an_empty_counter_list_is_a_usage_error(prog):
    """Was: ``--counters ""`` silently collected every counter."""
    r = hdemu("counters", "--counters", "", "--", str(prog))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r
    assert "--counters is empty" in r.stderr and "program ran" not in r.stdout


def test_counter_names_may_be_spaced_and_repeated():
    """``--counters "WAVEFRONTS, bytes_written"`` as people type it (was: ' BYTES_WRITTEN' refused)."""
    tool = CounterCollector("WAVEFRONTS, bytes_written,WAVEFRONTS")
    assert tool.names == ["WAVEFRONTS", "BYTES_WRITTEN"]
    assert CounterCollector([" WORKITEMS "]).names == ["WORKITEMS"]
    with pytest.raises(ValueError, match="no counters"):
        CounterCollector([])                 # was: accepted, then every dispatch "refused: pass count 0"
    with pytest.raises(ValueError, match="not ''"):
        CounterCollector("WAVEFRONTS,,WORKITEMS")
