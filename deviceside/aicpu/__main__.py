"""``python -m deviceside.aicpu BOOT_NAME LANE``: runs ``deviceside.aicpu.main``.

The role's code lives in the package, so it is imported once, as ``deviceside.aicpu``; this module
only calls it.
"""
import sys

from deviceside.aicpu import main

sys.exit(main())
