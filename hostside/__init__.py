"""The host side of hdemu, one subpackage per layer of the real stack (each with a small public face):

``hip`` (HIP names) > ``replay`` (kernel replay, an interceptor of ``clr``) > ``clr`` (command layer) >
``hsa`` (runtime) > ``shm_layout``; ``dfx`` (the profiling collector process and its readers) and
``platform`` (supervisor, standalone server, status, trace export, the ``hdemu`` CLI) use ``hsa`` and
``shm_layout`` only; ``demo`` is a program on the HIP face. Never imports ``deviceside``: the device
roles are separate programs. tests/unit/test_house.py enforces the contracts.
"""
__all__: list[str] = []
