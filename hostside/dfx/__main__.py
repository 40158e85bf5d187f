"""``python -m hostside.dfx BOOT_NAME [OUT_DIR]``: the DFX collector role."""
import sys

from hostside.dfx import main

sys.exit(main())
