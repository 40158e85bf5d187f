"""The house rules, enforced: the import contracts between the rooms, no import cycle, no module over
600 lines, no struct format string of a shared layout outside ``shm_layout`` and no project import
hidden inside a function.

The import graph is built statically with ``ast`` from every module of the three packages (imports
inside functions included), so a forbidden edge fails here even if no test happens to execute it.
"""
from __future__ import annotations

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("hdemu", "shm_layout", "deviceside", "hostside")
MAX_LINES = 600

#: room -> the rooms it may import (besides itself). The layers of the real stack:
#: miopen > hip > replay > clr > hsa > shm_layout; platform and dfx use shm_layout and hsa, never hip;
#: the two sides meet only in shm_layout; shm_layout imports neither side.
ALLOWED = {
    "hdemu": {"hostside.platform"},        # only hdemu._entry, the console script's guarded entry
    "shm_layout": set(),
    "deviceside": {"shm_layout"},
    "deviceside.aicpu": {"shm_layout", "deviceside"},
    "deviceside.cp": {"shm_layout", "deviceside", "deviceside.aicpu"},
    "hostside": set(),
    "hostside.hsa": {"shm_layout", "hostside"},
    "hostside.clr": {"shm_layout", "hostside", "hostside.hsa"},
    "hostside.replay": {"shm_layout", "hostside", "hostside.hsa", "hostside.clr"},
    "hostside.dfx": {"shm_layout", "hostside", "hostside.hsa"},
    "hostside.platform": {"shm_layout", "hostside", "hostside.hsa", "hostside.dfx", "hdemu"},
    "hostside.hip": {"shm_layout", "hostside", "hostside.hsa", "hostside.clr", "hostside.replay",
                     "hostside.platform"},
    "hostside.miopen": {"shm_layout", "hostside", "hostside.hip"},
    "hostside.demo": {"shm_layout", "hostside", "hostside.hip", "hostside.hsa", "hostside.platform",
                      "hostside.dfx"},
    "hostside.faults": {"shm_layout", "hostside", "hostside.hip", "hostside.platform", "hostside.replay",
                        "hostside.dfx", "hostside.miopen"},
    "hostside.studies": {"shm_layout", "hostside", "hostside.hip", "hostside.hsa", "hostside.replay",
                         "hostside.platform", "hostside.dfx", "hostside.miopen"},
}


def _modules() -> dict[str, str]:
    """module name -> file path, for every .py file of the packages."""
    out = {}
    for pkg in PACKAGES:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, pkg)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in files:
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = os.path.join(dirpath, f)
    return out


MODULES = _modules()


def _room(mod: str) -> str:
    parts = mod.split(".")
    if parts[0] in ("hostside", "deviceside") and len(parts) > 1 and not parts[1].startswith("_"):
        return ".".join(parts[:2])
    return parts[0]


def _is_package(mod: str) -> bool:
    return MODULES.get(mod, "").endswith("__init__.py")


def _imports(mod: str, path: str):
    """(imported project module, line, inside a function?, line text) for each import in ``path``."""
    tree = ast.parse(open(path).read(), path)
    lines = open(path).read().splitlines()
    pkg = mod if _is_package(mod) else mod.rpartition(".")[0]
    func_nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if sub is not node:
                    func_nodes.add(id(sub))
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                full = f"{base}.{a.name}"
                targets.append(full if full in MODULES else base)
        else:
            continue
        for t in targets:
            yield t, node.lineno, id(node) in func_nodes, lines[node.lineno - 1]


def _graph():
    edges = {}
    for mod, path in MODULES.items():
        for t, line, in_func, _text in _imports(mod, path):
            if t.split(".")[0] in PACKAGES:
                # importing a.b.c means a.b.c's module; keep the longest known prefix
                while t not in MODULES and "." in t:
                    t = t.rpartition(".")[0]
                if t in MODULES and t != mod:
                    edges.setdefault(mod, {})[t] = line
    return edges


def test_no_forbidden_edge():
    bad = []
    for mod, deps in _graph().items():
        src = _room(mod)
        allowed = ALLOWED.get(src)
        assert allowed is not None, f"module {mod} is in room {src}, which has no import contract in ALLOWED"
        for dep, line in deps.items():
            dst = _room(dep)
            if dst != src and dst not in allowed:
                bad.append(f"{MODULES[mod]}:{line}: {src} must not import {dst} ({dep})")
    assert not bad, "forbidden imports:\n" + "\n".join(sorted(bad))


def test_no_import_cycle():
    edges = _graph()
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):                               # Tarjan, iterative enough for this graph size
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in MODULES:
        if v not in index:
            strong(v)
    assert not sccs, "import cycles: " + "; ".join(" <-> ".join(c) for c in sccs)


def test_no_project_import_inside_a_function():
    """A function-level import is for an optional or heavy dependency only, with a comment saying why;
    never for a module of this project (that is how cycles hide)."""
    bad = []
    for mod, path in MODULES.items():
        for t, line, in_func, text in _imports(mod, path):
            if not in_func:
                continue
            if t.split(".")[0] in PACKAGES:
                bad.append(f"{path}:{line}: imports {t} inside a function")
            elif "#" not in text:
                bad.append(f"{path}:{line}: imports {t} inside a function without a comment saying why")
    assert not bad, "\n".join(bad)


def test_no_module_over_600_lines():
    big = {p: n for p in MODULES.values() if (n := sum(1 for _ in open(p))) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


_FORMAT = re.compile(r"""struct\.(?:Struct|pack|pack_into|unpack|unpack_from|calcsize)\(\s*["'][<>=!@]?[0-9xcbB?hHiIlLqQnNefdspP ]+["']""")


def test_no_struct_format_outside_shm_layout():
    """Struct formats and offsets of shared layouts come from their declarations (shm_layout.struct_of,
    offset_of, word_of); no format string is typed anywhere else."""
    bad = []
    for mod, path in MODULES.items():
        if mod.split(".")[0] == "shm_layout":
            continue
        for i, text in enumerate(open(path), 1):
            if _FORMAT.search(text):
                bad.append(f"{path}:{i}: {text.strip()}")
    assert not bad, "struct format strings outside shm_layout:\n" + "\n".join(bad)


@pytest.mark.parametrize("room", sorted(r for r in ALLOWED if "." in r and os.path.isdir(
    os.path.join(ROOT, *r.split(".")))))
def test_every_room_has_a_public_face(room):
    """Each subpackage has an ``__init__`` with an explicit ``__all__``."""
    init = os.path.join(ROOT, *room.split("."), "__init__.py")
    tree = ast.parse(open(init).read())
    names = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    assert "__all__" in names, f"{init} has no __all__"
