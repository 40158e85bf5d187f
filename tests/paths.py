"""Where things are, for tests and scenario programs (import as ``tests.paths``)."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
KERNELS = TESTS / "kernels"        # code objects of the tests: basic.py, replay_kernels.py
DATA = TESTS / "data"              # static test data (data/README.md)
SCENARIOS = TESTS / "scenarios"    # scenario folders: scenarios/<area>/<name>/program.py


def kernel_file(name: str) -> str:
    """The path of a test code object, e.g. ``kernel_file("basic.py")``."""
    return str(KERNELS / name)
