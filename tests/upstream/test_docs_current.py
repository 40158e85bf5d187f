"""docs/upstream.md and the README's HIP function table are generated from the ported suites and
``hostside.hip`` (scripts/upstream_table.py): they must say what the tests say."""
import json
import subprocess
import sys

from tests.paths import ROOT

_SCRIPT = str(ROOT / "scripts" / "upstream_table.py")


def _run(*args):
    r = subprocess.run([sys.executable, _SCRIPT, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
    return r


def test_upstream_doc_and_hip_table_are_current():
    r = _run("--check")
    assert r.returncode == 0, r.stderr


def test_every_ported_module_names_its_upstream_file_and_fewer_than_5_percent_xfail():
    r = _run("--json")
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout.strip().splitlines()[-1])
    assert stats["modules"] > 0 and stats["cases"] > 0
    assert stats["without_upstream"] == [] and stats["without_cases"] == []
    assert stats["xfail"] < 0.05 * stats["cases"], stats
