"""Device-side roles of hdemu: the command processor (with its SDMA engine) and AICPU writer lanes.

Each role is its own program (``python -m deviceside.<role> ...``); this package never imports
``hostside``.
"""
