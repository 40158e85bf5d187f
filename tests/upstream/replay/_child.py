"""Run a child program of tests/upstream/replay/programs (the replay service is configured once per
process) and return the JSON object on its last stdout line."""
import json
import subprocess
import sys

from tests.paths import ROOT
from tests.scenarios.runner import child_env


def run_program(name: str, timeout: float = 90.0) -> dict:
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "upstream" / "replay" / "programs" / f"{name}.py")],
                       cwd=ROOT, env=child_env(inherit_platform=False), capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stderr[-4000:]
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    return json.loads(lines[-1])
