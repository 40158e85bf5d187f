"""``python -m hostside.platform serve [--config FILE] [--ready-fd FD]``: a standalone platform."""
import sys

from hostside.platform import main

sys.exit(main())
