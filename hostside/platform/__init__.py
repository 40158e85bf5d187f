"""The platform layer: the supervisor (creates every segment, starts and watches every role, removes
it all), the standalone server, ``hdemu status``, trace export and the ``hdemu`` CLI.

Public face of ``hostside.platform``; the modules behind it are private except ``cli`` (the
``hdemu`` entry point). Importing this package registers the embedded-platform factory with
``hostside.hsa``. Imports ``hostside.dfx``, ``hostside.hsa`` and ``shm_layout``; never ``hip``.
"""
from shm_layout.errors import PlatformError

from ._embedded import start_embedded
from ._serve import main, request_shutdown, serve
from ._status import format_status, status
from ._supervisor import STARTUP_TIMEOUT_S, STOP_TIMEOUT_S, WATCH_PERIOD_S, Platform, load_config
from ._trace_export import build_trace, write_trace

__all__ = ["Platform", "PlatformError", "load_config", "start_embedded", "serve", "request_shutdown", "main",
           "status", "format_status", "build_trace", "write_trace", "STARTUP_TIMEOUT_S", "STOP_TIMEOUT_S",
           "WATCH_PERIOD_S"]
