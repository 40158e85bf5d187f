"""How a Python kernel declares itself: the code-object metadata both sides agree on.

A code object is the source text of a Python module. Kernels are its functions decorated with
``@kernel("<signature>")``; the signature is a comma-separated list of ``<type> <name>`` where type
is a scalar (``i8 u8 i16 u16 i32 u32 i64 u64 f32 f64``) or a pointer to one (``f32*``). The host
reads the signatures *statically* (``ast``, like reading the metadata note of an ELF code object)
and packs kernargs from them; the command processor executes the module and calls the kernel as
``fn(ctx, *args)``, where a pointer argument arrives as a numpy array of its element type that
starts at the pointer and ends at the end of the allocation that contains it.

Kernarg segment layout: each argument at its natural alignment (pointers 8 bytes), in order.

Device globals (module-scope ``__device__`` variables): a code object may declare them with one
module-level dict literal, ``__hdemu_globals__ = {"counter": "i32[16]", "total": "f64"}`` (a scalar
type, optionally ``[count]``). The host reads it statically (``read_globals``), allocates each global
per agent as coarse-grained device memory when the module is loaded (zero-filled; freed at unload)
and lists the addresses in every kernel's metadata entry under ``"globals"``:
``{name: [type, count, [address on agent 0, address on agent 1, ...]]}``. The command processor binds
each name in the module's namespace to a numpy view of its agent's copy, so a kernel simply uses the
module-level name (``counter[0] += 1``). ``hipModuleGetGlobal(module, name)`` gives the host its
(device pointer, size).
"""
from __future__ import annotations

import ast
import json
import re
import struct

from .errors import SignatureError

SCALARS = {
    "i8": ("b", 1), "u8": ("B", 1), "i16": ("h", 2), "u16": ("H", 2), "i32": ("i", 4),
    "u32": ("I", 4), "i64": ("q", 8), "u64": ("Q", 8), "f32": ("f", 4), "f64": ("d", 8),
}
NUMPY_TYPES = {"i8": "<i1", "u8": "<u1", "i16": "<i2", "u16": "<u2", "i32": "<i4", "u32": "<u4",
               "i64": "<i8", "u64": "<u8", "f32": "<f4", "f64": "<f8"}
_ARG_RE = re.compile(r"^\s*([a-z0-9]+)(\*?)\s+([A-Za-z_][A-Za-z_0-9]*)\s*$")
MAX_KERNARG_BYTES = 256


class Signature:
    """Parsed kernel signature: ``args`` is a list of (name, elem type, is_pointer)."""

    def __init__(self, text: str):
        self.text = text
        self.args = []
        if text.strip():
            for part in text.split(","):
                m = _ARG_RE.match(part)
                if not m or m.group(1) not in SCALARS:
                    raise SignatureError(
                        f"kernel argument must look like 'f32* x' or 'u32 n' with a type in "
                        f"{sorted(SCALARS)}, not {part.strip()!r}")
                self.args.append((m.group(3), m.group(1), bool(m.group(2))))
        fmt = "<"
        off = 0
        for _name, ty, ptr in self.args:
            code, size = ("Q", 8) if ptr else SCALARS[ty]
            pad = (-off) % size
            fmt += "x" * pad + code
            off += pad + size
        self.struct = struct.Struct(fmt)
        self.size = self.struct.size
        if self.size > MAX_KERNARG_BYTES:
            raise SignatureError(f"kernarg segment must be at most {MAX_KERNARG_BYTES} bytes, not {self.size}")

    def pack_into(self, buf, offset: int, values) -> None:
        if len(values) != len(self.args):
            raise SignatureError(f"kernel takes {len(self.args)} arguments ({self.text}), not {len(values)}")
        self.struct.pack_into(buf, offset, *values)

    def unpack_from(self, buf, offset: int):
        return self.struct.unpack_from(buf, offset)


def kernel(signature: str):
    """Decorator marking a code-object function as a kernel with the given argument signature."""
    sig = Signature(signature)

    def mark(fn):
        fn.__hdemu_signature__ = sig
        return fn
    return mark


def read_metadata(source: str, origin: str = "<code object>") -> list[dict]:
    """[{name, signature}] of every ``@kernel(...)`` function in ``source``, without executing it."""
    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as exc:
        raise SignatureError(f"code object {origin} does not parse: {exc}") from exc
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and _decorator_name(dec.func) == "kernel":
                if len(dec.args) != 1 or not isinstance(dec.args[0], ast.Constant) \
                        or not isinstance(dec.args[0].value, str):
                    raise SignatureError(f"{origin}:{node.lineno}: @kernel takes one string literal")
                Signature(dec.args[0].value)
                out.append({"name": node.name, "signature": dec.args[0].value})
    return out


GLOBALS_NAME = "__hdemu_globals__"
_GLOBAL_RE = re.compile(r"^\s*([a-z0-9]+)\s*(?:\[\s*([0-9]+)\s*\])?\s*$")
#: Largest device global, in bytes.
MAX_GLOBAL_BYTES = 16 << 20


def parse_global_type(text: str) -> tuple[str, int]:
    """``"i32[16]"`` -> ("i32", 16); ``"f64"`` -> ("f64", 1)."""
    m = _GLOBAL_RE.match(text) if isinstance(text, str) else None
    if not m or m.group(1) not in SCALARS or (m.group(2) is not None and int(m.group(2)) < 1):
        raise SignatureError(f"a device global's type must look like 'i32' or 'f32[16]' with a type in "
                             f"{sorted(SCALARS)}, not {text!r}")
    count = int(m.group(2)) if m.group(2) is not None else 1
    if count * SCALARS[m.group(1)][1] > MAX_GLOBAL_BYTES:
        raise SignatureError(f"device global {text!r} must be at most {MAX_GLOBAL_BYTES} bytes")
    return m.group(1), count


def read_globals(source: str, origin: str = "<code object>") -> dict[str, tuple[str, int]]:
    """{name: (type, count)} from the module-level ``__hdemu_globals__`` dict literal, if any."""
    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as exc:
        raise SignatureError(f"code object {origin} does not parse: {exc}") from exc
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == GLOBALS_NAME
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None
            if not isinstance(value, dict):
                raise SignatureError(f"{origin}:{node.lineno}: {GLOBALS_NAME} must be a dict literal "
                                     f"{{name: 'type[count]'}}")
            for name, ty in value.items():
                if not isinstance(name, str) or not name.isidentifier():
                    raise SignatureError(f"{origin}:{node.lineno}: a device global's name must be an "
                                         f"identifier, not {name!r}")
                out[name] = parse_global_type(ty)
    return out


def _decorator_name(func) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def encode_blob(source: str, meta: list[dict]) -> tuple[bytes, int]:
    """(blob, meta_len): the metadata JSON followed by the source, as stored in the code-object table."""
    m = json.dumps(meta).encode()
    return m + source.encode(), len(m)
