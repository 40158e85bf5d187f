"""The ``hdemu`` console script's entry: ``hostside.platform.cli`` imported behind a Ctrl-C guard.

Importing the CLI (numpy, the platform layer) takes most of a second; a Ctrl-C in that time used to end
in a KeyboardInterrupt traceback. Here it ends as every interrupted ``hdemu`` command does: one line
on stderr and exit status 130. The import is at module level (the house keeps imports out of
functions): the console script's ``from hdemu._entry import main`` runs it, guarded."""
from __future__ import annotations

import sys

try:
    from hostside.platform.cli import main as _cli_main
except KeyboardInterrupt:
    _cli_main = None

__all__ = ["main"]


def main(argv=None) -> int:
    if _cli_main is None:
        print("hdemu: interrupted", file=sys.stderr)
        return 130
    return _cli_main(argv)
