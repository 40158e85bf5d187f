"""``python -m deviceside.cp BOOT_NAME AGENT``: runs ``deviceside.cp.main``.

The role's code lives in the package, so it is imported once, as ``deviceside.cp``; this module
only calls it (were it the module with the code, ``-m`` would load that code a second time as
``__main__``, with classes distinct from the package's own).
"""
import sys

from deviceside.cp import main

sys.exit(main())
