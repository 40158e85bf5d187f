"""A kernel or module that raises SystemExit or KeyboardInterrupt (or an exception whose ``__str__``
raises) fails its queue and leaves the engine serving; an engine that dies all the same is visible:
its state word says dead (``engine_stats.state``, ``hdemu status``), its queues and the queues later
placed on it fail with HSA_STATUS_ERROR_FATAL, and the CP's other engines serve on."""
from __future__ import annotations

import numpy as np
import pytest

from hostside.platform import format_status, status
from shm_layout import layouts as L
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (RawQueue, alloc, cp_alive, engine_states, load_code, platform,
                                            role_stderr, wait_for)

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
RUDE = '''
import sys

from shm_layout.kernels import kernel


class Nasty(Exception):
    def __str__(self):
        raise SystemExit("not even my message")


@kernel("")
def exits(ctx):
    raise SystemExit(3)


@kernel("")
def interrupts(ctx):
    raise KeyboardInterrupt


@kernel("")
def nasty(ctx):
    raise Nasty()


@kernel("")
def breaks_engine(ctx):
    """Break the engine that runs us (the queue words its next pass reads first, outside any packet's
    processing): an engine crash."""
    engine = sys._getframe(1).f_locals["self"]

    class Broken:
        def __getitem__(self, _i):
            raise SystemExit("the engine's own objects are broken")
        __setitem__ = __getitem__
    engine.a64 = Broken()
'''
EXITS_AT_LOAD = '''
from shm_layout.kernels import kernel

@kernel("")
def never(ctx):
    pass

raise SystemExit(1)
'''


@pytest.fixture
def plat(tmp_path):
    with platform(CFG, tmp_path / "roles.stderr") as p:
        yield p


def _inc_ok(plat, engine: int) -> None:
    """A new queue on ``engine`` runs a kernel: the engine thread serves."""
    co = load_code(plat, BASIC, "basic")
    addr, view = alloc(plat, 16)
    x = view.view(np.int32)
    x[:] = 0
    q = RawQueue(plat, engine=engine)
    k, sig = co.kernels["inc"]
    q.wait_done(q.dispatch(k, sig, (addr, 4)))
    assert list(x) == [1] * 4


@pytest.mark.parametrize("name, text", [("exits", "SystemExit: 3"), ("interrupts", "KeyboardInterrupt"),
                                        ("nasty", "Nasty: <unprintable>")])
def test_kernel_raising_base_exception_fails_its_queue_and_the_engine_serves_on(plat, name, text):
    co = load_code(plat, RUDE, "rude")
    q = RawQueue(plat, engine=0)
    k, sig = co.kernels[name]
    idx = q.dispatch(k, sig)
    assert q.wait_error() == L.HSA_STATUS_ERROR_EXCEPTION
    assert int(q.desc["error_packet_id"][0]) == idx
    assert f"kernel {name} raised {text}" in q.error_msg, q.error_msg
    _inc_ok(plat, 0)
    assert engine_states(plat) == [L.ENGINE_RUNNING] * 3
    assert cp_alive(plat)


def test_module_raising_system_exit_at_load_is_a_bad_code_object(plat):
    co = load_code(plat, EXITS_AT_LOAD, "exits_at_load")
    q = RawQueue(plat, engine=1)
    k, sig = co.kernels["never"]
    q.dispatch(k, sig)
    assert q.wait_error() == L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT
    assert "SystemExit: 1" in q.error_msg, q.error_msg
    _inc_ok(plat, 1)
    assert engine_states(plat) == [L.ENGINE_RUNNING] * 3


def test_dead_engine_is_visible_and_its_queues_fail_while_the_others_serve(plat):
    co = load_code(plat, RUDE, "rude")
    waiting = RawQueue(plat, engine=1)        # a queue of engine 1 with a packet not yet rung
    victim = RawQueue(plat, engine=1)
    k, sig = co.kernels["breaks_engine"]
    victim.dispatch(k, sig)
    victim.dispatch(k, sig, ring=False)       # work of the victim still waiting when the engine dies
    wait_for(plat, lambda: engine_states(plat)[1] == L.ENGINE_DEAD, "engine 1 to be marked dead")
    assert int(plat.pm.agents[0].engine_stats["died_ns"][1]) > 0
    assert victim.wait_error() == L.HSA_STATUS_ERROR_FATAL
    assert "engine 1 of the command processor died: SystemExit: the engine's own objects are broken" \
        in victim.error_msg, victim.error_msg
    assert waiting.wait_error() == L.HSA_STATUS_ERROR_FATAL
    late = RawQueue(plat, engine=1)           # placed on the dead engine after its death
    assert late.wait_error() == L.HSA_STATUS_ERROR_FATAL
    assert "engine 1 of the command processor is dead" in late.error_msg, late.error_msg
    _inc_ok(plat, 0)                          # engine 0 serves on, the CP lives
    assert engine_states(plat) == [L.ENGINE_RUNNING, L.ENGINE_DEAD, L.ENGINE_RUNNING]
    assert cp_alive(plat)
    st = status(plat.name)
    a = st["agents"][0]
    assert a["dead_engines"] == [1]
    assert [e["state"] for e in a["engines"]] == ["running", "dead", "running"]
    text = format_status(st)
    assert "DEAD ENGINES [1]" in text and "engine 1 (aql, dead)" in text, text
    assert "hdemu cp0: engine 1 died: SystemExit: the engine's own objects are broken" in role_stderr(plat)
