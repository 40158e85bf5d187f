"""The kernel loader of a command processor: kernel objects -> loaded kernels, shared by the agent's
AQL engines.

A kernel object names (code-object slot, generation, kernel index). The first dispatch of any kernel
of a code object ``exec``-s the object's source and binds its device globals; every kernel of it is
cached then (``kernels``, read without the lock: a dict lookup is atomic). A cached kernel is only
used while its code object is still the one it was loaded from: the engine compares the slot's owner
word (loaded, and owned by the queue's owner) and generation with the kernel's on every dispatch
(``LoadedKernel.i_owner`` / ``i_gen``: two loads), so a packet that names an unloaded or replaced code
object is a queue error (INVALID_CODE_OBJECT), never a run of stale code. A code object is trusted
code (like a GPU binary): it runs as Python inside the CP. Its metadata is not trusted: a bad
signature, kernel index or name, or a module that raises anything (``SystemExit`` included) while it
loads, is INVALID_CODE_OBJECT. Each module gets its own copy of the builtins.
"""
from __future__ import annotations

import builtins
import json
import threading

from shm_layout import layouts as L
from shm_layout.kernels import NUMPY_TYPES, Signature, kernel as _kernel_decorator

from ._devglobals import bind_globals
from ._ring import PacketError, describe_exception

__all__ = ["KernelLoader", "LoadedKernel"]

_CO_OWNER64 = L.word_of(L.codeobj_entry, "owner")
_CO_GEN32 = L.word_of(L.codeobj_entry, "gen", 4)
_CO_STRIDE64 = L.codeobj_entry.itemsize // 8
_CO_STRIDE32 = L.codeobj_entry.itemsize // 4
_GEN_MASK = 0xFFFF                     # the generation bits a kernel object carries (make_kernel_object)
_BAD = L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT


class LoadedKernel:
    """One kernel of a loaded code object: its function, signature, the numpy type of each pointer
    argument (None for a scalar), and what the code-object slot held when it was loaded (``owner``
    word and ``gen``, at words ``i_owner`` / ``i_gen`` of the table)."""

    __slots__ = ("name", "fn", "sig", "views", "module", "owner", "gen", "i_owner", "i_gen")

    def __init__(self, name, fn, sig, module, slot=0, owner=0, gen=0):
        self.name, self.fn, self.sig, self.module = name, fn, sig, module
        self.views = [(NUMPY_TYPES[ty] if ptr else None) for (_n, ty, ptr) in sig.args]
        self.owner, self.gen = owner, gen
        self.i_owner = slot * _CO_STRIDE64 + _CO_OWNER64
        self.i_gen = slot * _CO_STRIDE32 + _CO_GEN32


def _bad(msg: str) -> PacketError:
    return PacketError(_BAD, msg)


class KernelLoader:
    """Kernel objects -> loaded kernels, shared by the agent's AQL engines (see the module doc)."""

    def __init__(self, pm, mem, agent: int):
        self.pm, self.mem, self.agent = pm, mem, agent
        self.kernels: dict[int, LoadedKernel] = {}
        self._lock = threading.Lock()
        seg = pm.segs["codeobj"]
        self.co64 = memoryview(seg.buf).cast("Q")      # the table's words the engines compare
        self.co32 = memoryview(seg.buf).cast("I")

    def kernel(self, kobj: int, pid: int) -> LoadedKernel:
        """The kernel ``kobj`` for a queue of process ``pid``: validated against the code-object table
        and loaded if needed; PacketError(INVALID_CODE_OBJECT) naming why it cannot run."""
        if kobj == 0:
            raise _bad("kernel_object is null")
        parts = L.split_kernel_object(kobj)
        if parts is None or parts[0] >= L.CODEOBJ_SLOTS:
            raise _bad(f"kernel_object {kobj:#x} is not a kernel object handle")
        slot, gen, index = parts
        with self._lock:
            e = self.pm.codeobj[slot]
            own, egen = int(e["owner"]), int(e["gen"])
            if L.owner_state(own) != L.CO_LOADED or egen & _GEN_MASK != gen:
                self._evict(slot, None)
                raise _bad(f"kernel_object {kobj:#x} names code-object slot {slot} generation {gen}, which is "
                           f"not loaded (unloaded or replaced)")
            if L.owner_pid(own) != pid:
                raise _bad(f"kernel_object {kobj:#x} is a kernel of process {L.owner_pid(own)}'s code object, "
                           f"not of the queue's owner (pid {pid})")
            k = self.kernels.get(kobj)
            if k is not None and k.owner == own and k.gen == egen:
                return k                        # another engine loaded it meanwhile
            return self._load(kobj, slot, index, e, own, egen)

    def _evict(self, slot: int, keep_gen) -> None:
        """Forget the cached kernels of ``slot`` (but those loaded from generation ``keep_gen``)."""
        for key, k in list(self.kernels.items()):
            if (key >> 12) & 0xFFF == slot and k.gen != keep_gen:
                self.kernels.pop(key, None)

    def _load(self, kobj, slot, index, e, own, egen) -> LoadedKernel:
        self._evict(slot, None)
        blob = self.pm.codeobj_blob(slot)
        ml, sl, n = int(e["meta_len"]), int(e["src_len"]), int(e["n_kernels"])
        name = bytes(e["name"]).split(b"\0", 1)[0].decode(errors="replace")
        try:
            if ml + sl > L.CODEOBJ_BLOB_BYTES:
                raise ValueError(f"metadata ({ml} bytes) and source ({sl} bytes) overrun the "
                                 f"{L.CODEOBJ_BLOB_BYTES}-byte blob")
            meta = json.loads(bytes(blob[:ml]).decode())
            if not isinstance(meta, list) or len(meta) != n:
                raise ValueError(f"metadata is not a list of n_kernels = {n} kernel entries")
            sigs = []
            for i, m in enumerate(meta):
                if not isinstance(m, dict) or not isinstance(m.get("name"), str) or \
                        not isinstance(m.get("signature"), str):
                    raise ValueError(f"kernel entry {i} has no name and signature strings")
                sigs.append(Signature(m["signature"]))
            source = bytes(blob[ml:ml + sl]).decode()
            ns = {"__name__": f"hdemu_codeobj_{slot}_{egen}", "kernel": _kernel_decorator,
                  "__builtins__": dict(builtins.__dict__)}
            exec(compile(source, f"<code object {name}>", "exec"), ns)
            bind_globals(self.mem, self.agent, ns, meta, L.owner_pid(own))
        except PacketError as exc:
            raise _bad(f"code object in slot {slot} does not load: {exc}") from None
        except BaseException as exc:  # noqa: BLE001 - any failure of the metadata or of user code (SystemExit too)
            raise _bad(f"code object in slot {slot} does not load: {describe_exception(exc)}") from None
        if index >= n:
            raise _bad(f"kernel_object {kobj:#x}: code object has {n} kernels, not index {index}")
        out = None
        loaded = {}
        for i, (m, sig) in enumerate(zip(meta, sigs)):
            fn = ns.get(m["name"])
            if not callable(fn):
                raise _bad(f"code object {name} has no kernel function {m['name']!r}")
            lk = LoadedKernel(m["name"], fn, sig, ns, slot, own, egen)
            loaded[L.make_kernel_object(slot, egen, i)] = lk
            if i == index:
                out = lk
        self.kernels.update(loaded)
        return out
