"""``python -m hostside.faults run SCENARIO [--out DIR]`` (what ``hdemu run`` runs) and
``python -m hostside.faults workload SPEC EVENTS`` (the workload process a run starts)."""
import sys

from hostside.faults import main

sys.exit(main())
