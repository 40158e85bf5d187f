"""hdemu's shared contract: layouts, coherence helpers, rings, segments and waits.

Imported by both sides; imports neither. See docs/ARCHITECTURE.md for who writes which field.
"""
from . import aql, layouts  # noqa: F401
