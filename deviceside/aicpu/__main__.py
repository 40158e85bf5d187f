"""``python -m deviceside.aicpu BOOT_NAME LANE``: runs ``deviceside.aicpu.main``.

The role's code lives in the package, so it is imported once, as ``deviceside.aicpu``; this module
only calls it.
"""
import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_IGN)   # before the imports: a Ctrl-C is the supervisor's to handle

from deviceside.aicpu import main  # noqa: E402

sys.exit(main())
