"""The command processor under attack: a seeded fuzz of random and adversarial AQL and SDMA packets
and corrupted shared fields, written through raw queues by the test process, against a live platform
on which another process (tests/scenarios/cp/victim_stream) does real HIP work and checks every
result. Nothing may end the CP or one of its engines, every bad queue ends in error with an HSA
status, and the other process's stream stays correct throughout."""
import os

import pytest

from hostside.platform import Platform
from shm_layout import layouts as L
from tests.scenarios.cp.fuzzkit import Fuzzer
from tests.unit.deviceside.cp.rawcp import cp_alive, engine_states

pytestmark = pytest.mark.timeout(300)

CFG = {"agents": 1, "engines": 2, "memory_mib": 16, "host_pool_mib": 16, "max_queues": 16, "queue_size_max": 1024}
SEED = int(os.environ.get("HDEMU_FUZZ_SEED", "20240917"))
CASES = int(os.environ.get("HDEMU_FUZZ_CASES", "1500"))


@pytest.fixture
def plat(tmp_path):
    stderr = tmp_path / "roles.stderr"
    with open(stderr, "w") as f:                  # the CP logs one line per queue error: keep them out
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            p = Platform(CFG, embedded=False).start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    p.role_stderr_path = stderr
    yield p
    p.stop()


@pytest.mark.slow
def test_fuzzed_packets_and_fields_never_hurt_the_cp_or_another_client(plat, scenario):
    victim = scenario.start("cp/victim_stream", env={"HDEMU_PLATFORM": plat.name})
    victim.expect("READY", timeout=60)
    fuzz = Fuzzer(plat, SEED, victim.pid)
    counts = fuzz.run(CASES)
    assert cp_alive(plat), plat.role_stderr_path.read_text()[-3000:]
    assert engine_states(plat) == [L.ENGINE_RUNNING] * (CFG["engines"] + 1)
    assert counts["cases"] == CASES and counts["packets"] >= 3000, counts
    assert counts["bad queues"] >= CASES // 3, counts
    assert victim.running(), victim.stderr
    victim.release()
    r = victim.wait(60)
    assert r.result is not None and r.result["errors"] == [] and r.result["bad"] == 0, r
    assert r.result["iterations"] >= 1, r
    print(f"fuzz seed {SEED}: {dict(counts)}; victim: {r.result}")
    assert "Traceback" not in plat.role_stderr_path.read_text(), plat.role_stderr_path.read_text()[-3000:]
