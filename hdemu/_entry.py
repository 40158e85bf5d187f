"""The ``hdemu`` console script's entry: ``hostside.platform.cli`` imported behind a Ctrl-C guard.

Importing the CLI (numpy, the platform layer) takes most of a second; a Ctrl-C in that time used to end
in a KeyboardInterrupt traceback. Here it ends as every interrupted ``hdemu`` command does: one line
on stderr and exit status 130. This module imports nothing heavy itself."""
from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv=None) -> int:
    try:
        from hostside.platform.cli import main as cli_main
    except KeyboardInterrupt:
        print("hdemu: interrupted", file=sys.stderr)
        return 130
    return cli_main(argv)
