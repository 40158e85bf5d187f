"""``python -m hostside.demo``: the demo workload (``./scripts/demo``)."""
import sys

from hostside.demo import main

sys.exit(main(sys.argv[1:]))
