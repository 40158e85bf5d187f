"""The supervisor's start of the roles: each in a session (and process group) of its own, so that a
terminal's Ctrl-C or hangup, sent to the user's foreground process group, never reaches a role; the
supervisor alone decides when they stop (tests/scenarios/test_platform.py runs the Ctrl-C itself)."""
from __future__ import annotations

import os

from hostside.platform import Platform

CFG = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4}


def test_every_role_runs_in_a_session_of_its_own(tmp_path):
    cfg = dict(CFG, profiling={"enabled": True, "lanes": 1, "output_dir": str(tmp_path / "out")})
    with Platform(cfg, quiet_roles=True) as plat:
        pids = list(plat.role_pids().values())
        assert len(pids) == 3                                  # a CP, the collector, a lane
        for pid in pids:
            assert os.getsid(pid) == pid and os.getpgid(pid) == pid, pid
            assert os.getpgid(pid) != os.getpgrp()
