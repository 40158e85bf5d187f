"""``python -m hostside.dfx BOOT_NAME [OUT_DIR]``: the DFX collector role."""
import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_IGN)   # before the imports: a Ctrl-C is the supervisor's to handle

from hostside.dfx import main  # noqa: E402

sys.exit(main())
