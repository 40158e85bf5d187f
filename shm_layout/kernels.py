"""How a Python kernel declares itself: the code-object metadata both sides agree on.

A code object is the source text of a Python module. Kernels are its functions decorated with
``@kernel("<signature>")``; the signature is a comma-separated list of ``<type> <name>`` where type
is a scalar (``i8 u8 i16 u16 i32 u32 i64 u64 f32 f64``) or a pointer to one (``f32*``). The host
reads the signatures *statically* (``ast``, like reading the metadata note of an ELF code object)
and packs kernargs from them; the command processor executes the module and calls the kernel as
``fn(ctx, *args)``, where a pointer argument arrives as a numpy array of its element type that
starts at the pointer and ends at the end of the allocation that contains it.

Kernarg segment layout: each argument at its natural alignment (pointers 8 bytes), in order.
"""
from __future__ import annotations

import ast
import json
import re
import struct

SCALARS = {
    "i8": ("b", 1), "u8": ("B", 1), "i16": ("h", 2), "u16": ("H", 2), "i32": ("i", 4),
    "u32": ("I", 4), "i64": ("q", 8), "u64": ("Q", 8), "f32": ("f", 4), "f64": ("d", 8),
}
NUMPY_TYPES = {"i8": "<i1", "u8": "<u1", "i16": "<i2", "u16": "<u2", "i32": "<i4", "u32": "<u4",
               "i64": "<i8", "u64": "<u8", "f32": "<f4", "f64": "<f8"}
_ARG_RE = re.compile(r"^\s*([a-z0-9]+)(\*?)\s+([A-Za-z_][A-Za-z_0-9]*)\s*$")
MAX_KERNARG_BYTES = 256


class SignatureError(ValueError):
    """A kernel signature does not parse."""


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
