"""The shared contract: AQL layouts against the real hsa.h vectors, layout validation, segments."""
import json
import os
import stat

import numpy as np
import pytest

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout._dtype import LayoutError, checked_dtype
from shm_layout.segments import Segment, list_segments, new_run_token, segment_name, sweep
from tests.paths import DATA

VECTORS = DATA / "aql_packets.json"     # from the real hsa.h; see tests/data/README.md


def _vectors():
    with open(VECTORS) as f:
        return json.load(f)


def test_packets_are_64_bytes_with_hsa_offsets():
    d = A.kernel_dispatch_packet
    assert d.itemsize == 64
    offs = {k: d.fields[k][1] for k in d.names}
    assert offs == {"header": 0, "setup": 2, "workgroup_size_x": 4, "workgroup_size_y": 6,
                    "workgroup_size_z": 8, "reserved0": 10, "grid_size_x": 12, "grid_size_y": 16,
                    "grid_size_z": 20, "private_segment_size": 24, "group_segment_size": 28,
                    "kernel_object": 32, "kernarg_address": 40, "reserved2": 48, "completion_signal": 56}
    b = A.barrier_and_packet
    assert {k: b.fields[k][1] for k in b.names} == {"header": 0, "reserved0": 2, "reserved1": 4,
                                                     "dep_signal": 8, "reserved2": 48, "completion_signal": 56}


@pytest.mark.parametrize("i", range(5))
def test_vectors_encode_and_decode(i):
    v = _vectors()
    p = v["packets"][i]
    assert A.encode(p["type"], **p["fields"]).hex() == p["bytes_hex"], p["name"]
    assert A.decode(p["type"], bytes.fromhex(p["bytes_hex"])) == p["fields"], p["name"]


def test_constants_match_hsa_h():
    c = _vectors()["constants"]
    for k, val in c.items():
        if k.startswith("HSA_STATUS"):
            assert getattr(L, k) == val, k
        else:
            assert getattr(A, k) == val, k


def test_header_bits():
    h = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True, acquire=2, release=2)
    assert h == 5378  # the vector's dispatch_3d_barrier_system header
    assert A.header_type(h) == 2 and A.header_barrier(h) and A.header_acquire(h) == 2 and A.header_release(h) == 2
    with pytest.raises(ValueError, match="fence scope"):
        A.make_header(2, acquire=3)


def test_layout_validation_names_the_problem():
    with pytest.raises(LayoutError, match="overlaps"):
        checked_dtype("bad", [("a", "<u8", 0), ("b", "<u4", 4)], itemsize=16)
    with pytest.raises(LayoutError, match="aligned"):
        checked_dtype("bad", [("a", "<u8", 4)], itemsize=16)
    with pytest.raises(LayoutError, match="own 64-byte line"):
        checked_dtype("bad", [("a", "<u8", 8)], itemsize=128, align_hot=("a",))


def test_hot_indices_on_their_own_lines():
    q = L.queue_desc
    lines = {q.fields[k][1] // 64 for k in ("write_dispatch_id", "read_dispatch_id", "doorbell")}
    assert len(lines) == 3


@pytest.mark.xdist_group("sweep")   # sweeps every dead segment: one worker, one at a time
def test_segment_mode_name_and_sweep():
    tok = new_run_token()
    name = segment_name(os.getpid(), tok, "unit")
    seg = Segment.create(name, 4096)
    try:
        st = os.stat(f"/dev/shm/{name}")
        assert stat.S_IMODE(st.st_mode) == 0o600
        assert (name, os.getpid(), tok) in list_segments()
        assert name not in sweep()  # creator (us) alive: kept
        other = Segment.attach(name)
        other.u8[0] = 7
        assert seg.u8[0] == 7
        with pytest.raises(Exception, match="only the creator"):
            other.unlink()
        other.close()
    finally:
        seg.unlink()
        seg.close()
    assert name not in [n for n, _p, _t in list_segments()]


def test_kernel_signature_errors():
    from shm_layout.kernels import Signature, SignatureError, read_metadata
    s = Signature("f32* a, u32 n, f64 x")
    assert s.size == 24  # 8 + 4 + pad 4 + 8
    with pytest.raises(SignatureError, match="f32\\* x"):
        Signature("float* a")
    meta = read_metadata("from shm_layout.kernels import kernel\n@kernel('u32 n')\ndef k(ctx, n): pass\n")
    assert meta == [{"name": "k", "signature": "u32 n"}]
    with pytest.raises(SignatureError, match="does not parse"):
        read_metadata("def (")
