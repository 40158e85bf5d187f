"""Programs and kernels: "compiling" a kernel template, the binary cache, and a launchable Kernel.

Compiling (``compile_source``) is what HIPOCProgram does with a .cl file and its options, for Python
kernel templates: the program's ``-D`` defines replace the template's build-parameter block (each
declared name becomes ``NAME = value``; one not defined stays None, as an #ifdef'd macro; a required
one missing is a build failure) and every ``#include "file"`` line is replaced by that file of the
kernels folder. The result is the source text of one code object; its bytes are the blob the binary
cache stores and ``hipModuleLoadData`` loads.

The binary cache is ``_kerndb.KernDb`` (another module of this package), reached only through
``binary_cache()``: no such module, or ``MIOPEN_DISABLE_CACHE=1``, means no binary cache.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from hostside import hip

from ._errors import MiopenError, miopenStatus_t

try:                                    # the binary cache is an optional part of the package
    from ._kerndb import KernDb
except ImportError:                     # pragma: no cover - a checkout without it: no binary cache
    KernDb = None

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
_DEFINE = re.compile(r"-D([A-Za-z_][A-Za-z_0-9]*)(?:=(\S*))?")
_BLOCK = re.compile(r"^# @build-parameters.*?^# @end-build-parameters[^\n]*\n", re.S | re.M)
_DECL = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*) = None(\s*#\s*required)?", re.M)
_INCLUDE = re.compile(r'^#include "([A-Za-z_][A-Za-z_0-9.]*)"[^\n]*$', re.M)
_INT = re.compile(r"-?[0-9]+")
_sources: dict[str, str] = {}


def parse_defines(options: str) -> list[tuple[str, str | None]]:
    """[(name, value or None)] of the ``-DNAME[=VALUE]`` words of an option string (others ignored)."""
    return [(m.group(1), m.group(2)) for m in _DEFINE.finditer(options)]


def _read(name: str) -> str:
    src = _sources.get(name)
    if src is None:
        path = KERNELS_DIR / name
        if path.parent != KERNELS_DIR or not path.is_file():
            raise MiopenError(miopenStatus_t.miopenStatusInternalError,
                              f"no kernel source {name!r} in {KERNELS_DIR}")
        src = _sources[name] = path.read_text()
    return src


def _literal(value: str | None):
    if value is None or value == "":
        return 1                # -DNAME defines NAME as 1, as a C compiler does
    return int(value) if _INT.fullmatch(value) else value


def compile_source(program_name: str, options: str) -> str:
    """The code-object source of ``program_name`` (a template of the kernels folder) built with
    ``options``; a template without a build-parameter block, a required define missing, or an
    include that does not exist is a build failure (miopenStatusUnknownError, as MIOpen's "Code
    object build failed")."""
    template = _read(program_name)
    block = _BLOCK.search(template)
    if block is None:
        raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                          f"Code object build failed. Source: {program_name}: no build-parameter block")
    declared = _DECL.findall(block.group(0))
    defines = dict(parse_defines(options))
    missing = [n for n, req in declared if req and n not in defines]
    if missing:
        raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                          f"Code object build failed. Source: {program_name}: not defined: "
                          f"{', '.join('-D' + n for n in missing)} (options: {options})")
    lines = [f"# built from {program_name} with: {options}"]
    names = [n for n, _r in declared]
    lines += [f"{n} = {_literal(defines[n])!r}" if n in defines else f"{n} = None" for n in names]
    lines += [f"{n} = {_literal(v)!r}" for n, v in defines.items() if n not in names and n.isidentifier()]
    body = template[:block.start()] + "\n".join(lines) + "\n" + template[block.end():]

    def include(m):
        return _read(m.group(1)).rstrip("\n") + f"\n# end of {m.group(1)}"
    try:
        return _INCLUDE.sub(include, body)
    except MiopenError as exc:
        raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                          f"Code object build failed. Source: {program_name}: {exc}") from None


def binary_cache(arch: str, num_cu: int):
    """The binary cache (a ``KernDb``) for this device, or None: the module is not there, or
    MIOPEN_DISABLE_CACHE is set."""
    if os.environ.get("MIOPEN_DISABLE_CACHE", "").strip().lower() in ("1", "on", "yes", "true", "enable"):
        return None
    if KernDb is None:
        return None
    return KernDb.for_device(arch, num_cu)


class Program:
    """A loaded program (HIPOCProgram): the module of its code object and the functions looked up."""

    __slots__ = ("name", "options", "blob", "module", "functions", "source")

    def __init__(self, name: str, options: str, blob: bytes, source: str):
        self.name, self.options, self.blob, self.source = name, options, blob, source
        try:
            self.module = hip.hipModuleLoadData(blob, name)
        except hip.HipError as exc:
            err = MiopenError(miopenStatus_t.miopenStatusUnknownError,
                              f"cannot load the code object of {name} ({source}): {exc}")
            err.out_of_resources = "OUT_OF_RESOURCES" in str(exc)    # every code-object slot in use
            raise err from exc
        self.functions = {}

    def function(self, kernel_name: str):
        f = self.functions.get(kernel_name)
        if f is None:
            try:
                f = self.functions[kernel_name] = hip.hipModuleGetFunction(self.module, kernel_name)
            except hip.HipError as exc:
                raise MiopenError(miopenStatus_t.miopenStatusInternalError,
                                  f"program {self.name} has no kernel {kernel_name}: {exc}") from exc
        return f

    def unload(self) -> None:
        try:
            hip.hipModuleUnload(self.module)
        except hip.HipError:
            pass


class Kernel:
    """A kernel of a program with its work sizes (MIOpen's Kernel): ``launch(stream, *args)`` runs it
    with hipExtModuleLaunchKernel's global/local sizes (as hipModuleLaunchKernel when every global
    size is a multiple of the local one, the same launch)."""

    __slots__ = ("program", "name", "l_wk", "g_wk", "f", "_blocks")

    def __init__(self, program: Program, name: str, l_wk, g_wk):
        self.program, self.name = program, name
        self.l_wk = tuple(l_wk) + (1,) * (3 - len(l_wk))
        self.g_wk = tuple(g_wk) + (1,) * (3 - len(g_wk))
        self.f = program.function(name)
        g, l = self.g_wk, self.l_wk
        self._blocks = tuple(a // b for a, b in zip(g, l)) if all(a % b == 0 for a, b in zip(g, l)) else None

    def launch(self, stream, *args) -> None:
        b = self._blocks
        try:
            if b is not None:
                l = self.l_wk
                hip.hipModuleLaunchKernel(self.f, b[0], b[1], b[2], l[0], l[1], l[2], 0, stream, args)
            else:
                g, l = self.g_wk, self.l_wk
                hip.hipExtModuleLaunchKernel(self.f, g[0], g[1], g[2], l[0], l[1], l[2], 0, stream, args)
        except hip.HipError as exc:
            raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                              f"launch of {self.name} ({self.program.name}) failed: {exc}") from exc

    def __repr__(self):
        return f"<Kernel {self.name} of {self.program.name} l_wk={self.l_wk} g_wk={self.g_wk}>"
