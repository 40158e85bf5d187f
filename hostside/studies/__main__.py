"""``python -m hostside.studies NAME [--small] [--out DIR]`` (what ``hdemu study`` runs)."""
import sys

from hostside.studies import main

sys.exit(main())
