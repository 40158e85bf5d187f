"""A sweep's description and its expansion into points (docs/SWEEPS.md).

A sweep is a TOML file or an inline SPEC on the command line::

    # replay-sweep.toml                          # the same inline:
    study = "replay"                             #   hdemu study replay --sweep \\
    repeats = 2                                  #     "footprint_kib=64,256; passes=1,2; repeats=2;
    figures = ["bytes_moved", "snap_ms"]         #      figures=bytes_moved,snap_ms"
    [axes]
    footprint_kib = [64, 256]
    passes = [1, 2]
    dispatches = 4                               # one value: a fixed parameter

The axes a study accepts and their defaults are its point mode's (``_sweep_axes.POINT_AXES``); every
axis not named keeps its default. ``mode = "study"`` runs the whole study at each point (axis
``small`` only). Other keys: ``cores_per_point`` (1), ``timeout_s`` (one point's bound, 900), ``x`` (the
plots' x axis: the first axis with more than one value). The points are the cartesian product of the
axes in the order written; a point's key (``footprint_kib=64,passes=1``) names it in the CSV and in
``--resume``.
"""
from __future__ import annotations

import itertools
import os
import tomllib
from dataclasses import dataclass, field

from ._sweep_axes import POINT_AXES as POINTS, axes_of

__all__ = ["SweepSpec", "SpecError", "load_spec", "parse_inline"]

TOP_KEYS = ("study", "mode", "repeats", "cores_per_point", "timeout_s", "figures", "x", "axes")


class SpecError(ValueError):
    """A sweep description that cannot be used; the message names what is wrong."""


@dataclass
class SweepSpec:
    study: str
    axes: dict                          # name -> list of values (only the axes the spec names)
    repeats: int = 1
    mode: str = "point"                 # "point" or "study"
    cores_per_point: int = 1
    timeout_s: float = 900.0
    figures: list = field(default_factory=list)   # empty: every figure a point returns
    x: str | None = None

    @property
    def whole(self) -> bool:
        return self.mode == "study"

    def points(self) -> list[tuple[str, dict]]:
        """``(key, params)`` for every point: params has every axis of the study set."""
        defaults = axes_of(self.study, self.whole)
        names = list(self.axes)
        out = []
        for combo in itertools.product(*(self.axes[n] for n in names)):
            params = dict(defaults, **dict(zip(names, combo)))
            key = ",".join(f"{n}={_fmt(v)}" for n, v in zip(names, combo)) or "default"
            out.append((key, params))
        return out

    def varied(self) -> list[str]:
        return [n for n, vs in self.axes.items() if len(vs) > 1]

    def x_axis(self) -> str | None:
        return self.x or next(iter(self.varied()), None)

    def to_dict(self) -> dict:
        return {"study": self.study, "mode": self.mode, "repeats": self.repeats, "axes": self.axes,
                "cores_per_point": self.cores_per_point, "timeout_s": self.timeout_s,
                "figures": list(self.figures), "x": self.x}


def _fmt(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _typed(study: str, axis: str, default, value, where: str, text: bool):
    """``value`` as the axis's type: a string of the command line is converted, a TOML value must
    already have the type (a float axis takes an integer)."""
    kind = type(default)
    if text and isinstance(value, str) and kind is not str:
        s = value.strip()
        try:
            if kind is bool:
                if s.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(s)
                return s.lower() in ("true", "1", "yes")
            value = kind(s)
        except ValueError:
            raise SpecError(f"{where}: axis {axis!r} of {study} takes {kind.__name__} values, not {s!r}") from None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not kind:
        raise SpecError(f"{where}: axis {axis!r} of {study} takes {kind.__name__} values, "
                        f"not {type(value).__name__} {value!r}")
    if kind in (int, float) and value < 1:
        # every numeric axis counts something (launches, agents, KiB, passes, records): a point with
        # 0 or fewer never finished and was killed at the point's timeout (300 s)
        raise SpecError(f"{where}: axis {axis!r} of {study} takes values of at least 1, not {value!r}")
    return value


def _build(raw: dict, study: str, where: str, text: bool = False) -> SweepSpec:
    unknown = [k for k in raw if k not in TOP_KEYS]
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(TOP_KEYS)})")
    named = raw.get("study", study)
    if study and named != study:
        raise SpecError(f"{where}: the sweep is for study {named!r}, not {study!r}")
    mode = raw.get("mode", "point" if named in POINTS else "study")
    if mode not in ("point", "study"):
        raise SpecError(f"{where}: mode must be \"point\" or \"study\", not {mode!r}")
    if mode == "point" and named not in POINTS:
        raise SpecError(f"{where}: study {named!r} has no point mode (those that do: {', '.join(POINTS)}); "
                        f"use mode = \"study\"")
    known = axes_of(named, mode == "study")
    axes_raw = raw.get("axes", {})
    if not isinstance(axes_raw, dict):
        raise SpecError(f"{where}: [axes] must be a table of axis = [values]")
    axes = {}
    for name, vals in axes_raw.items():
        if name not in known:
            raise SpecError(f"{where}: {named} has no axis {name!r} (its axes: "
                            f"{', '.join(f'{k} (default {_fmt(v)})' for k, v in known.items())})")
        vals = vals if isinstance(vals, list) else [vals]
        if not vals:
            raise SpecError(f"{where}: axis {name!r} has no values")
        typed = [_typed(named, name, known[name], v, where, text) for v in vals]
        if len(set(map(_fmt, typed))) != len(typed):
            raise SpecError(f"{where}: axis {name!r} repeats a value: {vals}")
        axes[name] = typed
    spec = SweepSpec(named, axes, mode=mode)
    for key, kind, low in (("repeats", int, 1), ("cores_per_point", int, 1), ("timeout_s", float, 1)):
        if key in raw:
            v = raw[key]
            try:
                v = kind(v) if isinstance(v, str) else v
            except ValueError:
                raise SpecError(f"{where}: {key} must be a number, not {v!r}") from None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and v != int(v)) or v < low:
                raise SpecError(f"{where}: {key} must be {'an integer' if kind is int else 'a number'} "
                                f">= {low}, not {v!r}")
            setattr(spec, key, kind(v))
    figs = raw.get("figures", [])
    if isinstance(figs, str):
        figs = [f.strip() for f in figs.split(",") if f.strip()]
    if not isinstance(figs, list) or not all(isinstance(f, str) for f in figs):
        raise SpecError(f"{where}: figures must be a list of figure names")
    spec.figures = figs
    x = raw.get("x")
    if x is not None and x not in axes:
        raise SpecError(f"{where}: x = {x!r} is not one of the sweep's axes ({', '.join(axes) or 'none'})")
    spec.x = x
    return spec


def parse_inline(text: str, study: str) -> SweepSpec:
    """``"axis=v1,v2; axis2=v; repeats=2; figures=a,b"``: ``;``-separated ``key=values``, values
    comma-separated; ``repeats``, ``mode``, ``cores_per_point``, ``timeout_s``, ``figures`` and ``x`` are
    the spec's own keys, every other key is an axis."""
    raw: dict = {"axes": {}}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        key, eq, vals = part.partition("=")
        key = key.strip()
        if not eq or not key or not vals.strip():
            raise SpecError(f"--sweep {text!r}: {part!r} is not key=value[,value...]")
        if key in ("repeats", "mode", "cores_per_point", "timeout_s", "x"):
            raw[key] = vals.strip()
        elif key == "figures":
            raw[key] = vals
        else:
            raw["axes"][key] = [v.strip() for v in vals.split(",")]
    return _build(raw, study, f"--sweep {text!r}", text=True)


def load_spec(spec: str, study: str) -> SweepSpec:
    """A TOML file (a path that exists or ends in ``.toml``) or an inline SPEC."""
    if spec.endswith(".toml") or os.path.isfile(spec):
        try:
            with open(spec, "rb") as f:
                raw = tomllib.load(f)
        except OSError as exc:
            raise SpecError(f"--sweep {spec}: cannot read it ({exc.strerror})") from None
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"--sweep {spec}: not valid TOML ({exc})") from None
        return _build(raw, study, spec)
    return parse_inline(spec, study)


def from_dict(d: dict) -> SweepSpec:
    """The spec stored in a sweep directory (``sweep.json``), for ``--resume``."""
    raw = {k: d[k] for k in TOP_KEYS if k in d and d[k] is not None}
    return _build(raw, d["study"], "sweep.json")
