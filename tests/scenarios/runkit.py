"""Helpers of the ``hdemu run`` tests (tests/scenarios/test_run_*.py): run a shipped scenario from the
CLI into the test's tmp dir, load what it wrote, and check the report against the history."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hostside.faults import builtin_scenarios, load_scenario
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from tests.scenarios.runner import ROOT, child_env


#: what ``hdemu run`` execs into (test_run_cli.py runs ``hdemu run`` itself): one interpreter start less
RUN = [sys.executable, "-m", "hostside.faults", "run"]


def run(name: str, tmp_path: Path, *extra, timeout: float = 100.0):
    """``hdemu run NAME --out DIR -q`` (as ``python -m hostside.faults run``); returns (the finished
    process, report, history). ``subprocess.run`` kills and reaps it if ``timeout`` runs out."""
    out = tmp_path / ("run-" + Path(name).stem)
    r = subprocess.run([*RUN, name, "--out", str(out), "-q", *extra], cwd=ROOT, env=child_env(inherit_platform=False),
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    assert (out / "report.json").is_file(), f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    rep = json.loads((out / "report.json").read_text())
    hist = [json.loads(ln) for ln in (out / "history.jsonl").read_text().splitlines() if ln.strip()]
    return r, rep, hist


#: the bound a test puts on a shipped scenario's timed promises (``untimed``): what a role or the host
#: takes to notice a fault is a latency, which a loaded CI machine stretches at will; the tests assert
#: the outcome and its order (after the fault), never its speed
UNTIMED_S = 30.0


def untimed(name: str, tmp_path: Path) -> tuple[str, dict]:
    """A copy of the shipped scenario ``name`` in ``tmp_path`` (same file name, so ``run`` writes to the same
    ``run-<name>`` folder) with every promise's ``within_s`` raised to ``UNTIMED_S``; returns (its path, for
    ``run``, and {promise index: the shipped bound}). The copy is checked to be the shipped scenario in all
    but those bounds."""
    src = builtin_scenarios()[name]
    text, n = re.subn(r"(?m)^(\s*within_s\s*=\s*)[0-9][0-9_.eE+-]*", rf"\g<1>{UNTIMED_S}", src.read_text())
    assert n >= 1, f"{src}: no within_s to raise"
    dst = tmp_path / src.name
    dst.write_text(text)
    shipped, copy = load_scenario(name)[0].model_dump(), load_scenario(str(dst))[0].model_dump()
    bounds = {i: p["within_s"] for i, p in enumerate(shipped["promise"]) if p["within_s"] is not None}
    assert len(bounds) == n and all(copy["promise"][i]["within_s"] == UNTIMED_S for i in bounds), (bounds, copy)
    for p in (*shipped["promise"], *copy["promise"]):
        p["within_s"] = None
    assert copy == shipped, "the copy differs from the shipped scenario in more than its bounds"
    return str(dst), bounds


def show_latencies(rep, bounds: dict) -> None:
    """Print (evidence only, never asserted) how long each timed promise took against its shipped bound."""
    for i, bound in bounds.items():
        p = rep["promises"][i]
        d = p["details"]
        took = d.get("latency_s", max(d.get("exit_after_s", {}).values(), default=None))
        print(f"{rep['scenario']}: promise [{i}] {p['kind']} took {took} s (shipped bound {bound} s, run with "
              f"{UNTIMED_S} s): {p['evidence']}")


def of(hist, type_, **match):
    return [h for h in hist if h["type"] == type_ and all(h.get(k) == v for k, v in match.items())]


def verdicts(rep) -> dict:
    return {(p["index"], p["kind"]): p["verdict"] for p in rep["promises"]}


def check_consistent(r, rep, hist) -> None:
    """What every run must show: exit status from the verdicts, every fault in the report matches its
    history line, the counts are the history's, nothing of the run is left (processes, segments)."""
    want = 0 if all(p["verdict"] == "HELD" for p in rep["promises"]) else 1
    assert r.returncode == want, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert rep["verdict"] == ("HELD" if want == 0 else "FAILED")
    for f in rep["faults"]:
        lines = of(hist, "fault", index=f["index"])
        assert len(lines) == 1, (f, lines)
        if f["state"] == "injected":
            assert lines[0].get("injected", True) and lines[0]["t_s"] == f["t_s"]
        if "end_t_s" in f:
            end = of(hist, "fault_end", index=f["index"])
            assert len(end) == 1 and end[0]["t_s"] == f["end_t_s"] > f["t_s"]
    wl = of(hist, "workload")
    c = rep["counts"]
    assert c["syncs"] == sum(1 for h in wl if h["ev"] == "sync")
    assert c["workload_errors"] == sum(1 for h in wl if h["ev"] == "error")
    assert c["faults_injected"] == sum(1 for f in rep["faults"] if f["state"] == "injected")
    pools = of(hist, "dfx_pool")
    if pools:
        assert c["dfx"]["total"] == sum(p["total"] for p in pools)
        assert c["dfx"]["dropped"] == sum(p["dropped"] for p in pools)
    creator = int(rep["platform"].split("-")[1])
    assert not [n for n, pid, _t in list_segments() if pid == creator], "segments left by the run"
    pids = [rep["workload"]["pid"], *of(hist, "run")[0]["roles"].values()]
    pids += [h["pid"] for h in of(hist, "probe")]
    assert not [p for p in pids if pid_alive(p)], "processes left by the run"
    for p in rep["promises"]:
        assert p["evidence"], p
    assert r.stdout.strip().endswith("report.json"), r.stdout    # the terminal report was printed
