"""Device-side roles of hdemu, one subpackage per layer of the real stack:

* ``deviceside.cp``     the command processor of a GPU agent (AQL engines, SDMA engine):
                        ``python -m deviceside.cp BOOT_NAME AGENT``
* ``deviceside.aicpu``  the AICPU writer lanes of DFX profiling: ``python -m deviceside.aicpu BOOT_NAME LANE``

Each role is its own program; this package imports only ``shm_layout`` (never ``hostside``), and
``deviceside.aicpu`` never imports ``deviceside.cp`` (the command processor hands work to the lanes
through ``deviceside.aicpu.TaskRings``, in shared memory).
"""
