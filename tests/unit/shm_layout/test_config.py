"""The platform config schema (shm_layout.config): every key's type, range and unknown-key errors,
the holes the hand-written validators had, defaults, TOML loading and the README key table."""
from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel, ValidationError

from shm_layout import config as C
from shm_layout import dfx as D
from shm_layout import topology as T
from shm_layout.errors import ConfigError
from tests.paths import ROOT

#: A literal copy of what validate_config({}) returned before the schema (do not derive it).
TODAYS_DEFAULTS = {
    "agents": 2, "engines": 2, "max_queues": 16, "queue_size_max": 4096, "memory_mib": 64,
    "host_pool_mib": 64, "signals": 8192, "max_allocs": 4096, "trace_rings": 32, "trace_events": 16384,
    "arch": "a2a3",
    "profiling": {
        "enabled": False, "lanes": 2, "threads_per_lane": 1, "mode": "real",
        "subsystems": ["chip_swimlane", "pmu", "depgen", "args_dump", "scope_stats"],
        "buffers_per_pool": 8, "pool_overrides": {}, "records_per_buffer": {}, "ready_depth": 64,
        "policy": "block", "block_timeout_s": 1.0, "backpressure_timeout_s": 30.0, "drain_shards": 2,
        "on_host_gone": "idle", "output_dir": "", "synthetic_records_per_s": 0, "synthetic_duration_s": 1.0,
        "synthetic_records": 0, "synthetic_batch": 256, "skip_writeback_thread": -1,
        "synthetic_wait_go": False, "autostart": True,
    },
    "counter_slots": 4,
}

#: key path -> (a value of the wrong type, an out-of-range value or None when the key has no range),
#: (value, the key the error must name) when the error is about a sub-key.
KEYS = {
    "platform.agents": ("2", 0),
    "platform.engines": (True, 8),
    "platform.max_queues": (1.5, 257),
    "platform.queue_size_max": ("4096", 1 << 17),
    "platform.memory_mib": ([64], 0),
    "platform.host_pool_mib": (None, 16385),
    "platform.signals": ("x", 63),
    "platform.max_allocs": (4096.0, 15),
    "platform.trace_rings": (False, 1025),
    "platform.trace_events": ("16384", 32),
    "platform.arch": (5, "a9"),
    "platform.profiling": (5, None),
    "platform.counter_slots": ("4", 17),
    "platform.profiling.enabled": ("yes", None),
    "platform.profiling.lanes": ("2", 0),
    "platform.profiling.threads_per_lane": (1.0, 65),
    "platform.profiling.mode": (1, "fake"),
    "platform.profiling.subsystems": ("pmu", ["pmu", "gpu"]),
    "platform.profiling.buffers_per_pool": ("8", 0),
    "platform.profiling.pool_overrides": ([1], ({"0": 0}, "platform.profiling.pool_overrides.0")),
    "platform.profiling.records_per_buffer": ("x", ({"pmu": 0}, "platform.profiling.records_per_buffer.pmu")),
    "platform.profiling.ready_depth": ("64", 0),
    "platform.profiling.policy": (5, "never"),
    "platform.profiling.block_timeout_s": ("1s", -1),
    "platform.profiling.backpressure_timeout_s": ("30", -5),
    "platform.profiling.drain_shards": (2.0, 0),
    "platform.profiling.on_host_gone": (True, "die"),
    "platform.profiling.output_dir": (5, None),
    "platform.profiling.synthetic_records_per_s": ("0", -1),
    "platform.profiling.synthetic_duration_s": (True, -0.5),
    "platform.profiling.synthetic_records": ("0", -1),
    "platform.profiling.synthetic_batch": (256.0, 0),
    "platform.profiling.skip_writeback_thread": ("1", -2),
    "platform.profiling.synthetic_wait_go": (1, None),
    "platform.profiling.autostart": ("true", None),
}


def nest(path: str, value) -> dict:
    """The [platform] table contents that set ``path`` ("platform.a.b") to ``value``."""
    parts = path.split(".")[1:]
    out = value
    for p in reversed(parts):
        out = {p: out}
    return out


def refused(table, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as ei:
        C.parse_config(table, **kw)
    assert not isinstance(ei.value, ValidationError)
    return ei.value


def schema_keys(model=C.Platform, prefix="platform"):
    for name, f in model.model_fields.items():
        yield f"{prefix}.{name}"
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            yield from schema_keys(f.annotation, f"{prefix}.{name}")


def test_the_test_table_covers_every_key_of_the_schema():
    assert sorted(schema_keys()) == sorted(KEYS), "add the new key to KEYS (and regenerate the README table)"


# ---- every key: wrong type, out of range, unknown ------------------------------------------------------
@pytest.mark.parametrize("path", sorted(KEYS))
def test_wrong_type_names_the_key(path):
    e = refused(nest(path, KEYS[path][0]))
    assert e.key == path
    assert str(e).startswith(f"{path} must be "), str(e)
    assert str(e).endswith(f", not {KEYS[path][0]!r}"), str(e)


@pytest.mark.parametrize("path", sorted(p for p, (_w, bad) in KEYS.items() if bad is not None))
def test_out_of_range_names_the_key(path):
    bad = KEYS[path][1]
    value, key = bad if isinstance(bad, tuple) else (bad, path)
    e = refused(nest(path, value))
    assert e.key == key
    assert str(e).startswith(key) and " must be " in str(e), str(e)


@pytest.mark.parametrize("path", sorted(KEYS))
def test_a_misspelt_key_is_unknown_and_the_message_lists_the_real_one(path):
    wrong = path + "x"
    e = refused(nest(wrong, 1))
    assert e.key == wrong
    known = path.rsplit(".", 1)[1]
    assert re.fullmatch(rf"{re.escape(wrong)} is not a known key \(known: .*\b{known}\b.*\)", str(e)), str(e)


@pytest.mark.parametrize("path, key", [
    ("platform.profiling.records_per_buffer.gpu", "platform.profiling.records_per_buffer.gpu"),
    ("platform.profiling.policy.gpu", "platform.profiling.policy.gpu"),
    ("platform.profiling.pool_overrides.first", "platform.profiling.pool_overrides.first"),
])
def test_unknown_sub_keys_of_per_kind_and_per_thread_tables(path, key):
    e = refused(nest(path, "drop" if ".policy." in path else 4))
    assert e.key == key and str(e).startswith(f"{key} is not a known key ("), str(e)


def test_a_power_of_two_key_says_so():
    e = refused({"queue_size_max": 1000})
    assert (e.key, str(e)) == ("platform.queue_size_max", "platform.queue_size_max must be a power of two, not 1000")
    e = refused({"trace_events": 100})
    assert str(e) == "platform.trace_events must be a power of two, not 100"


# ---- the holes of the hand-written validators -------------------------------------------------------------
@pytest.mark.parametrize("table, key, msg", [
    ({"profiling": {"block_timeout_s": "1s"}}, "platform.profiling.block_timeout_s",
     "platform.profiling.block_timeout_s must be a number >= 0, not '1s'"),
    ({"profiling": {"backpressure_timeout_s": -5}}, "platform.profiling.backpressure_timeout_s",
     "platform.profiling.backpressure_timeout_s must be a number >= 0, not -5"),
    ({"profiling": {"backpressure_timeout_s": float("inf")}}, "platform.profiling.backpressure_timeout_s",
     "platform.profiling.backpressure_timeout_s must be a number >= 0, not inf"),
    ({"profiling": {"enabled": "yes"}}, "platform.profiling.enabled",
     "platform.profiling.enabled must be true or false, not 'yes'"),
    ({"profiling": {"output_dir": 5}}, "platform.profiling.output_dir",
     "platform.profiling.output_dir must be a string, not 5"),
    ({"profiling": {"records_per_buffer": {"pmu": 0}}}, "platform.profiling.records_per_buffer.pmu",
     "platform.profiling.records_per_buffer.pmu must be an integer in [1, 1048576], not 0"),
    ({"profiling": {"records_per_buffer": {"pmu": 10**9}}}, "platform.profiling.records_per_buffer.pmu",
     "platform.profiling.records_per_buffer.pmu must be an integer in [1, 1048576], not 1000000000"),
    ({"agents": 0}, "platform.agents", "platform.agents must be an integer in [1, 16], not 0"),
    ({"agents": True}, "platform.agents", "platform.agents must be an integer in [1, 16], not True"),
])
def test_holes_are_closed(table, key, msg):
    e = refused(table)
    assert (e.key, str(e)) == (key, msg)


def test_the_dfxbuf_segment_is_bounded():
    # each value is in range, together they would make a 64 GiB segment
    e = refused({"profiling": {"lanes": 8, "buffers_per_pool": 1024, "records_per_buffer": {"args_dump": 65536}}})
    assert e.key == "platform.profiling.records_per_buffer"
    assert "dfxbuf segment would be" in str(e) and f"{D.DFX_BUF_MAX_BYTES >> 20} MiB" in str(e)
    e = refused({"profiling": {"lanes": 64, "buffers_per_pool": 1024}})
    assert e.key == "platform.profiling.buffers_per_pool"
    ok = C.parse_config({"profiling": {"lanes": 4, "buffers_per_pool": 16}})
    assert D.DfxGeometry(ok["profiling"], ok["arch"], 4).buf_region_bytes <= D.DFX_BUF_MAX_BYTES


def test_unknown_key_lists_the_known_ones():
    e = refused({"foo": 1})
    assert e.key == "platform.foo"
    assert str(e) == ("platform.foo is not a known key (known: agents, arch, counter_slots, engines, "
                      "host_pool_mib, max_allocs, max_queues, memory_mib, profiling, queue_size_max, signals, "
                      "trace_events, trace_rings)")


def test_strict_types_but_an_int_is_a_number():
    assert C.parse_config({"profiling": {"block_timeout_s": 2}})["profiling"]["block_timeout_s"] == 2.0
    assert refused({"profiling": {"block_timeout_s": True}}).key == "platform.profiling.block_timeout_s"
    assert refused({"profiling": {"lanes": 2.0}}).key == "platform.profiling.lanes"
    assert refused({"profiling": {"autostart": 1}}).key == "platform.profiling.autostart"
    assert refused({"profiling": {"subsystems": ("pmu",)}}).key == "platform.profiling.subsystems"


def test_source_prefixes_every_line_and_all_errors_are_reported():
    e = refused({"agents": 0, "profiling": {"enabled": "yes"}}, source="p.toml")
    assert e.key == "platform.agents"
    assert str(e).splitlines() == ["p.toml: platform.agents must be an integer in [1, 16], not 0",
                                   "p.toml: platform.profiling.enabled must be true or false, not 'yes'"]


def test_not_a_table():
    e = refused(5)
    assert (e.key, str(e)) == ("platform", "platform must be a table, not 5")
    e = refused({"profiling": [1]})
    assert (e.key, str(e)) == ("platform.profiling", "platform.profiling must be a table, not [1]")


# ---- checks across keys ------------------------------------------------------------------------------------
def test_lanes_times_threads_per_lane_is_at_most_64():
    e = refused({"profiling": {"lanes": 8, "threads_per_lane": 9}})
    assert e.key == "platform.profiling.threads_per_lane"
    assert str(e).startswith("platform.profiling.threads_per_lane must be at most 8 with 8 lanes")
    C.parse_config({"profiling": {"lanes": 8, "threads_per_lane": 8}})


def test_roles_fit_the_boot_block_only_when_profiling_is_enabled():
    from shm_layout.layouts import BOOT_MAX_ROLES
    lanes = BOOT_MAX_ROLES - 16           # 16 agents + 1 collector + lanes = BOOT_MAX_ROLES + 1
    C.parse_config({"agents": 16, "profiling": {"lanes": lanes}})
    e = refused({"agents": 16, "profiling": {"enabled": True, "lanes": lanes}})
    assert e.key == "platform.profiling.lanes"
    assert f"<= {BOOT_MAX_ROLES} roles" in str(e) and str(e).endswith(f"not {lanes}")
    C.parse_config({"agents": 16, "profiling": {"enabled": True, "lanes": lanes - 1}})


def test_thread_indexes_must_exist():
    e = refused({"profiling": {"pool_overrides": {"2": 1}}})
    assert e.key == "platform.profiling.pool_overrides.2" and "threads 0 .. 1" in str(e)
    e = refused({"profiling": {"skip_writeback_thread": 2}})
    assert e.key == "platform.profiling.skip_writeback_thread"
    cfg = C.parse_config({"profiling": {"lanes": 3, "pool_overrides": {2: 1, "0": 2}, "skip_writeback_thread": 2}})
    assert cfg["profiling"]["pool_overrides"] == {"2": 1, "0": 2}     # int keys become TOML-style strings


def test_policy_is_a_name_or_a_table_of_kind_names():
    assert C.parse_config({"profiling": {"policy": {"pmu": "drop"}}})["profiling"]["policy"] == {"pmu": "drop"}
    e = refused({"profiling": {"policy": {"pmu": "never"}}})
    assert e.key == "platform.profiling.policy.pmu" and "'block_timeout'" in str(e)
    e = refused({"profiling": {"policy": "never"}})
    assert e.key == "platform.profiling.policy" and "or a table of kind name" in str(e)


# ---- defaults, shape, the old names ------------------------------------------------------------------------
def test_defaults_are_todays():
    assert C.parse_config({}) == TODAYS_DEFAULTS
    assert C.parse_config(None) == TODAYS_DEFAULTS
    assert T.validate_config({}) == TODAYS_DEFAULTS
    assert T.DEFAULTS == TODAYS_DEFAULTS
    assert D.PROFILING_DEFAULTS == TODAYS_DEFAULTS["profiling"]
    assert D.validate_profiling({}, "a5") == TODAYS_DEFAULTS["profiling"]
    assert list(C.parse_config({})) == list(TODAYS_DEFAULTS)          # same key order too


def test_the_result_is_plain_fresh_json_and_validates_again():
    a = C.parse_config({"profiling": {"enabled": True, "records_per_buffer": {"pmu": 8}}})
    assert json.loads(json.dumps(a)) == a
    assert C.parse_config(a) == a
    a["profiling"]["subsystems"].append("x")
    assert C.parse_config({})["profiling"]["subsystems"] == TODAYS_DEFAULTS["profiling"]["subsystems"]


def test_old_entry_points_raise_config_error_which_is_a_value_error():
    with pytest.raises(ConfigError) as ei:
        T.validate_config({"agents": 99})
    assert isinstance(ei.value, ValueError) and ei.value.key == "platform.agents"
    with pytest.raises(ConfigError) as ei:
        D.validate_profiling({"lanes": 0}, "a2a3")
    assert ei.value.key == "platform.profiling.lanes"


def test_consumers_read_the_result():
    cfg = C.parse_config({"agents": 1, "arch": "a5", "profiling": {"enabled": True, "lanes": 1,
                                                                    "pool_overrides": {0: 2}}})
    topo = T.Topology.new(cfg, 12345, "cafe")
    assert topo.dfx.pool_size == {0: 2} and not topo.dfx.svm
    assert "dfxbuf" in topo.segment_sizes()


# ---- TOML ----------------------------------------------------------------------------------------------------
GOOD_TOML = """
[platform]
agents = 1
arch = "a5"

[platform.profiling]
enabled = true
lanes = 1
block_timeout_s = 2
policy = { pmu = "drop" }
records_per_buffer = { aicpu_task = 16 }
pool_overrides = { "0" = 2 }
"""


def test_a_valid_toml_file_loads(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(GOOD_TOML)
    cfg = C.load_config_file(str(p))
    assert cfg["agents"] == 1 and cfg["arch"] == "a5"
    assert cfg["profiling"]["policy"] == {"pmu": "drop"} and cfg["profiling"]["block_timeout_s"] == 2.0
    assert cfg["profiling"]["pool_overrides"] == {"0": 2}
    assert cfg == C.load_config_text(GOOD_TOML, "x")


def test_toml_errors_name_the_file(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text("[platform]\nagents = 1\n[hardware]\nx = 1\n")
    with pytest.raises(ConfigError) as ei:
        C.load_config_file(str(p))
    assert str(ei.value).startswith(f"{p}: unknown table [hardware]") and ei.value.key == "hardware"
    p.write_text("[platform]\nagents = 1\nengines = \n")
    with pytest.raises(ConfigError) as ei:
        C.load_config_file(str(p))
    assert str(ei.value).startswith(f"{p}:3: not valid TOML") and "line 3" in str(ei.value)
    p.write_text("[platform]\nagents = 0\n")
    with pytest.raises(ConfigError, match=r"^HDEMU_CONFIG=p\.toml: platform\.agents must be an integer"):
        C.load_config_file(str(p), source="HDEMU_CONFIG=p.toml")
    p.write_text("agents = 1\n")
    with pytest.raises(ConfigError, match="key agents outside \\[platform\\]"):
        C.load_config_file(str(p))
    p.write_text("")
    with pytest.raises(ConfigError, match=r"no \[platform\] table"):
        C.load_config_file(str(p))
    with pytest.raises(ConfigError, match=r"nothere\.toml: cannot read the config"):
        C.load_config_file(str(tmp_path / "nothere.toml"))


# ---- the README table ----------------------------------------------------------------------------------------
def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_key_table_is_the_generated_one():
    text = _readme()
    m = re.search(r"<!-- config-table:begin -->\n(.*?)<!-- config-table:end -->", text, re.S)
    assert m, "README.md has no <!-- config-table:begin --> ... <!-- config-table:end --> block"
    assert m.group(1) == C.config_table_markdown(), (
        "README.md's config key table differs from the schema in shm_layout/config.py; regenerate it with "
        "`.venv/bin/python -m shm_layout.config --markdown` and paste the output between the markers")


def test_readme_config_example_loads():
    section = _readme().split("### Configuration", 1)[1]
    example = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    C.load_config_text(example, "README.md")


def test_the_table_has_a_row_per_key_with_its_default():
    md = C.config_table_markdown()
    for path in KEYS:
        assert f"| `{path}` |" in md
    assert "| `platform.agents` | integer | `2` | 1 – 16 |" in md
    assert "| `platform.queue_size_max` | integer | `4096` | power of two, 2 – 65536 |" in md


def test_main_prints_the_table_and_checks_a_file(tmp_path, capsys):
    assert C.main(["--markdown"]) == 0
    assert capsys.readouterr().out == C.config_table_markdown()
    p = tmp_path / "p.toml"
    p.write_text(GOOD_TOML)
    assert C.main([str(p)]) == 0
    assert json.loads(capsys.readouterr().out) == C.load_config_file(str(p))
    p.write_text("[platform]\nagents = 0\n")
    assert C.main([str(p)]) == 2
    assert "platform.agents must be" in capsys.readouterr().err
