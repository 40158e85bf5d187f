"""The ``hdemu`` console script enters through ``hdemu._entry``: a Ctrl-C while the CLI is still being
imported (most of a second) ends with one line and exit status 130, as any interrupted command does,
not with a KeyboardInterrupt traceback."""
import subprocess
import sys
import tomllib

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.timeout(60)

INTERRUPTED_IMPORT = r"""
import builtins, sys
real = builtins.__import__
def imp(name, *args, **kwargs):
    if name == "hostside.platform.cli":
        raise KeyboardInterrupt          # the Ctrl-C lands while the CLI is being imported
    return real(name, *args, **kwargs)
builtins.__import__ = imp
from hdemu._entry import main
sys.exit(main(["ls"]))
"""


def test_ctrl_c_while_the_cli_imports_exits_130_without_a_traceback():
    r = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=30,
                       cwd=ROOT)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert r.stderr.strip() == "hdemu: interrupted", r.stderr
    assert "Traceback" not in r.stderr


def test_the_console_script_is_the_guarded_entry_and_runs_the_cli():
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["scripts"]["hdemu"] == "hdemu._entry:main"
    r = subprocess.run([sys.executable, "-c", "import sys; from hdemu._entry import main; sys.exit(main(['--help']))"],
                       capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert r.returncode == 0 and "usage: hdemu" in r.stdout, (r.returncode, r.stdout, r.stderr)
