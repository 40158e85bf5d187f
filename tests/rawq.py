"""Helpers for tests that drive the HSA runtime's queues packet by packet."""
import os

from shm_layout import aql as A
from shm_layout import layouts as L

KERNEL_SRC = open(os.path.join(os.path.dirname(__file__), "kernels", "basic.py")).read()
DISPATCH = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True)
BARRIER_AND = A.make_header(A.HSA_PACKET_TYPE_BARRIER_AND, barrier=True)
BARRIER_OR = A.make_header(A.HSA_PACKET_TYPE_BARRIER_OR, barrier=True)


def dispatch(q, co, name, args=(), *, signal=0, grid=(1, 1, 1), block=(1, 1, 1), header=DISPATCH,
             setup=1, kobj=None, karg=None, ring=True):
    """Reserve a slot and write one kernel dispatch; returns its packet id."""
    k, sig = co.kernels[name]
    idx = q.add_write_index(1)
    q.wait_for_space(idx)
    off, addr = q.kernarg_slot(idx)
    sig.pack_into(q.buf, off, list(args))
    q.write_dispatch(idx, header, setup, block, grid, k if kobj is None else kobj,
                     addr if karg is None else karg, signal)
    if ring:
        q.ring_doorbell(idx)
    return idx


def barrier(q, deps, signal=0, header=BARRIER_AND, ring=True):
    idx = q.add_write_index(1)
    q.wait_for_space(idx)
    q.write_barrier(idx, header, deps, signal)
    if ring:
        q.ring_doorbell(idx)
    return idx


def wait_zero(sig, timeout=20.0):
    from hostside.hsa import HSA_SIGNAL_CONDITION_EQ
    return sig.wait(HSA_SIGNAL_CONDITION_EQ, 0, timeout)


def header_at(q, idx):
    return q.a16[q.slot_offset(idx) >> 1]


INVALID = A.HSA_PACKET_TYPE_INVALID
STATUS = L
