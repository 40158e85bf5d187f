"""The invoker cache, the kernel cache (kernel_map, program_map), LoadProgram's order (binary cache, then
compile and store), and what statistics() and MIOPEN_LOG_LEVEL report about each call."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hostside import hip
from hostside import miopen as mi
from hostside.miopen import _program
from tests.paths import ROOT
from tests.unit.hostside.miopen.pooling_ref import Dev, pool_desc, ref_forward, strides_for

pytestmark = pytest.mark.timeout(120)
HAVE_KERNDB = importlib.util.find_spec("hostside.miopen._kerndb") is not None
CONFIG = "m1_dt1_ker3x3_str2x2_pad1x1_it0_im0_is0_xd2x3x7x9_xs189x63x9x1_yd2x3x4x5_ys60x20x5x1"


def forward(h, shape=(2, 3, 7, 9), mode=mi.miopenPoolingMax, k=(3, 3), p=(1, 1), s=(2, 2)):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    y_ref = ref_forward(x, mode, k, p, s)[0]
    pd = pool_desc(mode, k, p, s)
    xt, yt = Dev(shape, np.float32, strides_for(shape, "NCHW")), Dev(y_ref.shape, np.float32,
                                                                      strides_for(y_ref.shape, "NCHW"))
    try:
        xt.put(x)
        mi.miopenPoolingForward(h, pd, 1.0, xt.desc, xt.ptr, 0.0, yt.desc, yt.ptr, False, None, 0)
        hip.hipDeviceSynchronize()
        np.testing.assert_allclose(yt.get(), y_ref, rtol=1e-5, atol=1e-6)
    finally:
        xt.free()
        yt.free()
    return mi.statistics(h)


def test_second_call_is_an_invoker_hit_without_a_solver_search(handle, fresh_cache):
    first = forward(handle)
    assert first["last"]["level"] == "compiled" and first["last"]["solver"] == "PoolingForward2d"
    assert first["last"]["network_config"] == CONFIG
    assert first["solver_searches"] == 1 and first["compilations"] == 1 and first["invokers_built"] == 1
    assert {"search_s", "prepare_invoker_s", "compile_s", "run_s", "total_s"} <= set(first["last"]["steps"])
    second = forward(handle)
    assert second["last"]["level"] == "invoker_cache" and second["invoker_hits"] == 1
    assert second["solver_searches"] == 1 and second["compilations"] == 1 and second["invokers_built"] == 1
    assert set(second["last"]["steps"]) == {"network_config_s", "run_s", "total_s"}
    assert second["invokers"] == 1 and second["program_map"] == 1
    assert second["kernel_map"] == 1 and ("miopenPoolingForwardDirect", CONFIG) in handle.cache.kernel_map


def test_a_new_config_with_the_same_program_is_a_program_cache_hit(handle, fresh_cache):
    forward(handle, shape=(2, 3, 7, 9))
    st = forward(handle, shape=(1, 2, 7, 9))        # N and C are not build parameters of mloPoolingG
    assert st["last"]["level"] == "program_cache" and st["program_cache_hits"] == 1
    assert st["solver_searches"] == 2 and st["compilations"] == 1 and st["program_map"] == 1 and st["invokers"] == 2


def test_a_new_handle_has_its_own_caches_and_loads_from_the_binary_cache(platform, fresh_cache):
    """MIOpen keeps the kernel cache in the handle: a second handle searches, rebuilds the invoker and
    finds the program in the binary cache (compiles it when there is no binary cache)."""
    h1, h2 = mi.miopenCreate(), None
    try:
        assert forward(h1)["last"]["level"] == "compiled"
        h2 = mi.miopenCreate()
        st = forward(h2)
        assert st["solver_searches"] == 1 and st["invokers_built"] == 1
        if HAVE_KERNDB:
            assert st["last"]["level"] == "binary_cache_user" and st["compilations"] == 0
            assert st["binary_cache_hits_user"] == 1
        else:
            assert st["last"]["level"] == "compiled"
    finally:
        mi.miopenDestroy(h1)
        if h2 is not None:
            mi.miopenDestroy(h2)


def test_disable_cache_compiles_every_time(platform, fresh_cache, monkeypatch):
    monkeypatch.setenv("MIOPEN_DISABLE_CACHE", "1")
    for _ in range(2):
        h = mi.miopenCreate()
        try:
            st = forward(h)
            assert st["last"]["level"] == "compiled" and st["binary_cache_stores"] == 0
            assert "binary_cache_load_s" not in st["last"]["steps"]
        finally:
            mi.miopenDestroy(h)


def test_a_registered_invoker_is_never_replaced(handle, fresh_cache):
    forward(handle)
    first = handle.invokers.get(CONFIG, "miopenPoolingForwardDirect")
    handle.invokers.register(lambda h, p: None, CONFIG, "PoolingForward2d", "miopenPoolingForwardDirect")
    assert handle.invokers.get(CONFIG, "miopenPoolingForwardDirect") is first
    assert handle.invokers.get(CONFIG, "miopenPoolingBackwardDirect") is None
    assert handle.invokers.get("m0_no_such_config", "miopenPoolingForwardDirect") is None


def test_log_level_info_prints_miopen_lines(handle, fresh_cache, monkeypatch, capfd):
    monkeypatch.setenv("MIOPEN_LOG_LEVEL", "4")
    forward(handle, shape=(1, 1, 5, 5))
    assert "MIOpen(HIP)" not in capfd.readouterr().err
    monkeypatch.setenv("MIOPEN_LOG_LEVEL", "5")
    forward(handle, shape=(1, 1, 6, 6))
    err = capfd.readouterr().err
    assert "MIOpen(HIP): Info [FindSolutionImpl] PoolingForward2d (not searchable)" in err
    assert "Info2" not in err
    monkeypatch.setenv("MIOPEN_LOG_LEVEL", "6")
    forward(handle, shape=(1, 1, 11, 11), k=(2, 2), p=(0, 0))
    err = capfd.readouterr().err
    assert "MIOpen(HIP): Info2 [PrepareInvoker] Preparing kernel: mloPoolingG" in err
    assert "Info2 [HIPOCProgram] Kernel MIOpenPooling.py Compile Time, ms:" in err
    if HAVE_KERNDB:
        assert "Info2 [LoadBinary] Unable to load binary for: MIOpenPooling.py.o; args: -DMLO_POOLING_OP_ID=1" in err
        assert "-mcpu=" + handle.arch in err


def test_solution_has_miopens_build_parameters_and_work_sizes(handle):
    from hostside.miopen._problem import FORWARD, Problem
    from hostside.miopen._solvers_fwd import FORWARD_SOLVERS
    x, y = mi.miopenCreateTensorDescriptor(), mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(x, mi.miopenHalf, 2, 3, 40, 20)
    pd = pool_desc(mi.miopenPoolingAverage, (2, 2), (0, 0), (2, 2))
    mi.miopenSet4dTensorDescriptor(y, mi.miopenHalf, *mi.miopenGetPoolingForwardOutputDim(pd, x))
    prob = Problem(FORWARD, pd, x, y)
    assert [s.solver_id for s in FORWARD_SOLVERS] == ["PoolingForward2d", "PoolingForwardNd", "PoolingForwardNaive",
                                                      "TransposedPoolingFwd2d", "TransposedPoolingFwdNd"]
    first = next(s for s in FORWARD_SOLVERS if s.is_applicable(handle, prob))
    k = first.get_solution(handle, prob).construction_params[0]
    assert (k.kernel_file, k.kernel_name) == ("MIOpenPooling.py", "mloPoolingG")
    # out 20x10: out_pix_tile1 = 4 (out_h <= 32, 20 % 32 > 16 -> min(16, prePow2(4 * 2)) = 8)
    assert k.comp_options.startswith("-DMLO_POOLING_OP_ID=0 -DMLO_POOLING_KERNEL_SZ1=2 -DMLO_POOLING_STRIDE1=2 "
                                     "-DMLO_POOLING_KERNEL_SZ0=2 -DMLO_POOLING_STRIDE0=2 "
                                     "-DMLO_POOLING_N_HORIZ_OUT_PIX=1 -DMLO_POOLING_N_VERT_OUT_PIX=8 "
                                     "-DMLO_POOLING_GROUP_SZ0=16 -DMLO_POOLING_GROUP_SZ1=4 ")
    assert "-DMIOPEN_USE_FP16=1" in k.comp_options and "SAVE_INDEX" not in k.comp_options
    assert k.l_wk == (16, 4, 1) and k.g_wk == (16, 4, 6)
    src = _program.compile_source(k.kernel_file, k.comp_options)
    assert "MLO_POOLING_KERNEL_SZ0 = 2\n" in src and "MLO_POOLING_SAVE_INDEX = None\n" in src
    assert "#include" not in src and "def forward(" in src      # pooling_functions.py is spliced in
    with pytest.raises(mi.MiopenError, match="Code object build failed.*-DMLO_POOLING_KERNEL_SZ0") as ei:
        _program.compile_source("MIOpenPooling.py", k.comp_options.replace("-DMLO_POOLING_KERNEL_SZ0=2", ""))
    assert ei.value.status == mi.miopenStatus_t.miopenStatusUnknownError


PROGRAM = r'''
import json, sys
import numpy as np
from hostside import hip, hsa
from hostside import miopen as mi
hsa.configure({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 2})
try:
    h = mi.miopenCreate()
    x = np.arange(2 * 3 * 7 * 9, dtype=np.float32).reshape(2, 3, 7, 9) % 11
    xd, yd = mi.miopenCreateTensorDescriptor(), mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(xd, mi.miopenFloat, *x.shape)
    pd = mi.miopenCreatePoolingDescriptor()
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingAverage, 3, 3, 1, 1, 2, 2)
    mi.miopenSet4dTensorDescriptor(yd, mi.miopenFloat, *mi.miopenGetPoolingForwardOutputDim(pd, xd))
    px, py = hip.hipMalloc(x.nbytes), hip.hipMalloc(x.nbytes)
    hip.hipMemcpy(px, x, x.nbytes, hip.hipMemcpyHostToDevice)
    mi.miopenPoolingForward(h, pd, 1.0, xd, px, 0.0, yd, py, False, None, 0)
    y = np.empty(2 * 3 * 4 * 5, np.float32)
    hip.hipMemcpy(y, py, y.nbytes, hip.hipMemcpyDeviceToHost)
    st = mi.statistics(h)
    print(json.dumps({"level": st["last"]["level"], "sum": float(y.sum()),
                      **{k: st[k] for k in ("compilations", "binary_cache_stores", "binary_cache_hits_user",
                                            "solver_searches", "invokers_built")}}))
    mi.miopenDestroy(h)
finally:
    hip.hipDeviceReset()
'''


@pytest.mark.skipif(not (Path(_program.__file__).parent / "_kerndb.py").exists(),
                    reason="the binary cache (hostside/miopen/_kerndb.py) is not there yet")
def test_a_second_process_hits_the_binary_cache_but_searches_and_rebuilds_the_invoker(tmp_path):
    env = dict(os.environ, MIOPEN_USER_DB_PATH=str(tmp_path / "db"), MIOPEN_CUSTOM_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT))
    env.pop("MIOPEN_DISABLE_CACHE", None)
    env.pop("MIOPEN_LOG_LEVEL", None)
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=str(ROOT), capture_output=True, text=True,
                           timeout=90)
        assert r.returncode == 0, r.stderr[-3000:]
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["level"] == "compiled" and cold["compilations"] == 1 and cold["binary_cache_stores"] == 1
    assert warm["level"] == "binary_cache_user" and warm["compilations"] == 0 and warm["binary_cache_hits_user"] == 1
    assert warm["solver_searches"] == 1 and warm["invokers_built"] == 1        # ROCm/rocm-libraries#3553
    assert warm["sum"] == cold["sum"]
    assert list((tmp_path / "cache").rglob("*.ukdb"))
