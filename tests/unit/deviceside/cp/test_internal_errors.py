"""Every packet error on every engine is a queue error with an HSA status, also one the engine did not
foresee (an exception outside the kernel, raised by the CP's own code on a state a code object broke):
the queue fails with HSA_STATUS_ERROR_EXCEPTION, the engine logs the traceback and serves on."""
from __future__ import annotations

import numpy as np
import pytest

from shm_layout import counters as C
from shm_layout import layouts as L
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (RawQueue, alloc, cp_alive, engine_states, load_code, platform,
                                            role_stderr)

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
BREAKERS = '''
import shm_layout.topology

from shm_layout.kernels import kernel


@kernel("")
def break_my_globals(ctx):
    """The module table the counter unit scans is no longer a sequence."""
    global __hdemu_device_globals__
    __hdemu_device_globals__ = 5


@kernel("")
def break_address_resolution(ctx):
    def resolve(self, addr, nbytes):
        raise RuntimeError("address resolution was replaced by a code object")
    shm_layout.topology.PlatformMap.resolve = resolve
'''


@pytest.fixture
def plat(tmp_path):
    with platform(CFG, tmp_path / "roles.stderr") as p:
        yield p


def _counter_block(plat):
    addr, view = alloc(plat, C.REQUEST_BYTES, region=0)
    rec = view.view(C.counter_request)
    rec["n_slots"], rec["ids"][0][0] = 1, C.COUNTER_IDS["WORKITEMS"]
    return addr


def test_exception_of_the_counter_unit_is_a_queue_error(plat):
    co = load_code(plat, BREAKERS, "breakers")
    q = RawQueue(plat)
    k, sig = co.kernels["break_my_globals"]
    q.wait_done(q.dispatch(k, sig))
    q.dispatch(k, sig, reserved2=_counter_block(plat))        # the counter unit trips over the module
    assert q.wait_error() == L.HSA_STATUS_ERROR_EXCEPTION
    assert "processing the packet raised TypeError" in q.error_msg, q.error_msg
    basic = load_code(plat, BASIC, "basic")
    addr, view = alloc(plat, 16)
    x = view.view(np.int32)
    x[:] = 0
    q2 = RawQueue(plat)
    k2, s2 = basic.kernels["inc"]
    q2.wait_done(q2.dispatch(k2, s2, (addr, 4)))
    assert list(x) == [1] * 4
    assert cp_alive(plat) and engine_states(plat) == [L.ENGINE_RUNNING] * 2
    assert "Traceback" in role_stderr(plat)


def test_exception_of_the_sdma_engine_is_a_queue_error(plat):
    addr, view = alloc(plat, 64)                              # allocated before the CP is broken
    view[:] = 0
    co = load_code(plat, BREAKERS, "breakers")
    q = RawQueue(plat)
    k, sig = co.kernels["break_address_resolution"]
    q.wait_done(q.dispatch(k, sig))
    s = RawQueue(plat, kind=L.QKIND_SDMA)
    s.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=5, dst=addr, size=64)
    assert s.wait_error() == L.HSA_STATUS_ERROR_EXCEPTION
    assert "processing the packet raised RuntimeError" in s.error_msg, s.error_msg
    basic = load_code(plat, BASIC, "basic")
    q2 = RawQueue(plat)
    k2, s2 = basic.kernels["inc"]
    q2.dispatch(k2, s2, (addr, 4))                            # a new pointer: the AQL engine trips too
    assert q2.wait_error() == L.HSA_STATUS_ERROR_EXCEPTION
    s2q = RawQueue(plat, kind=L.QKIND_SDMA)                   # and both engines still serve
    s2q.wait_done(s2q.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=5, dst=addr, size=0))
    q3 = RawQueue(plat)
    q3.wait_done(q3.dispatch(*basic.kernels["empty"]))
    assert (view == 0).all()
    assert cp_alive(plat) and engine_states(plat) == [L.ENGINE_RUNNING] * 2
