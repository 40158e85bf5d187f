"""Helpers for scenario programs (``tests/scenarios/<area>/<name>/program.py``).

Programs run with the repo root as cwd and on PYTHONPATH (the runner sets both; by hand:
``PYTHONPATH=. .venv/bin/python tests/scenarios/<area>/<name>/program.py``). The contract: a program
prints its results as ONE JSON object on the last line of stdout (``emit``); earlier lines are free
(handshakes such as ``READY ...`` that a test awaits with ``ScenarioProcess.expect``).
"""
import json
import sys

from tests.paths import kernel_file

__all__ = ["emit", "announce", "hold", "kernel_file"]


def emit(**result) -> None:
    """Print the program's result: one JSON object, the last line of stdout."""
    print(json.dumps(result), flush=True)


def announce(word: str, **data) -> None:
    """A handshake line, ``WORD {json}``, that a test waits for before acting on the process."""
    print(f"{word} {json.dumps(data)}", flush=True)


def hold() -> None:
    """Stay alive until stdin is closed (the runner's ``release()`` or teardown) or we are killed."""
    sys.stdin.read()
