"""The embedded platform: what ``hsa.Runtime`` starts when a process has no platform to attach to.

``hostside.hsa`` sits below this layer and never imports it; importing ``hostside.platform``
registers ``start_embedded`` with ``hsa.set_platform_factory`` (``hostside.hip`` does that import).
"""
from __future__ import annotations

import os

from .. import hsa
from ._supervisor import Platform, load_config

__all__ = ["start_embedded"]


def start_embedded(config: dict | None) -> Platform:
    """Start a platform owned by this process: ``config``, else the TOML file named by
    ``HDEMU_CONFIG``, else the defaults."""
    if config is None and os.environ.get("HDEMU_CONFIG"):
        path = os.environ["HDEMU_CONFIG"]
        config = load_config(path, source=f"HDEMU_CONFIG={path}")
    return Platform(config).start()


hsa.set_platform_factory(start_embedded)
