"""Constructors of torch's own C types replaced in place: ``torch.device``, ``torch.Generator``.

Why in place. Replacing ``torch.device`` in torch's namespace by another class gives the process
two device classes, and torch keeps the one it saw first in tables: TorchScript's ``ann is
torch.device``, ``torch.library``'s supported parameter types (``custom_op`` with a ``device:
torch.device`` parameter), fx's code generation (``device(type='cpu')`` needs the name
``device``), Dynamo's guards (``type(x) in (torch.device, ...)``). Each of them broke under
the shim, depending on which module was imported before the patch. Here the type object stays
torch's; only what ``torch.device(...)`` runs changes.

How. A C type's constructor is its ``tp_new`` slot. Assigning ``cls.__new__`` a Python function
makes CPython point that slot at its generic one, which calls ``cls.__new__`` — the way a Python
class that defines ``__new__`` is built. C types refuse the assignment
(``Py_TPFLAGS_IMMUTABLETYPE``), so the flag is lifted for the one assignment and put back
(ctypes, on the type object's own ``tp_flags``). The C constructor stays callable through its
saved function pointer (``ctypes.PYFUNCTYPE``: the GIL held, a raised exception propagates as
usual). Objects torch makes in C++ (``tensor.device``) never pass through ``tp_new`` and are
untouched.

Contracts:
- ``override_new(cls, make)``: ``make(original_new)`` is called once and returns the function
  that becomes ``cls.__new__`` (called as ``new(cls, *args, **kwargs)``); ``original_new(cls,
  args, kwargs)`` runs the type's own C constructor (``args`` a tuple, ``kwargs`` a dict).
  Returns a handle for ``restore_new``. ``cls`` is the same object before, during and after; the
  replacement carries the name, documentation and ``inspect.signature`` of torch's ``__new__``.
- ``restore_new(handle)`` puts back the C constructor and the original ``__new__`` entry, so
  ``cls.__new__`` is again the object it was.
- Both raise ``Unsupported`` (and change nothing) when the interpreter is not one whose type
  layout was checked: CPython 3.10 or newer with the GIL, a static (non-heap) type whose
  ``tp_flags``, sizes and metatype read back as Python sees them, and no ``tp_vectorcall`` (which
  would bypass ``tp_new``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import sys
import sysconfig

__all__ = ["Handle", "Unsupported", "override_new", "restore_new"]

_IMMUTABLETYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE (3.10+)
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


class Unsupported(RuntimeError):
    """This interpreter or type is not one whose constructor devshim can replace in place."""


class _TypeObject(ctypes.Structure):
    """PyTypeObject up to tp_vectorcall: the same fields from CPython 3.8 to 3.13 (later
    versions append after it); PyObject_VAR_HEAD of a GIL build."""

    _fields_ = [(name, kind) for name, kind in (
        ("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p),
        ("ob_size", ctypes.c_ssize_t), ("tp_name", ctypes.c_char_p),
        ("tp_basicsize", ctypes.c_ssize_t), ("tp_itemsize", ctypes.c_ssize_t),
        ("tp_dealloc", ctypes.c_void_p), ("tp_vectorcall_offset", ctypes.c_ssize_t),
        ("tp_getattr", ctypes.c_void_p), ("tp_setattr", ctypes.c_void_p),
        ("tp_as_async", ctypes.c_void_p), ("tp_repr", ctypes.c_void_p),
        ("tp_as_number", ctypes.c_void_p), ("tp_as_sequence", ctypes.c_void_p),
        ("tp_as_mapping", ctypes.c_void_p), ("tp_hash", ctypes.c_void_p),
        ("tp_call", ctypes.c_void_p), ("tp_str", ctypes.c_void_p),
        ("tp_getattro", ctypes.c_void_p), ("tp_setattro", ctypes.c_void_p),
        ("tp_as_buffer", ctypes.c_void_p), ("tp_flags", ctypes.c_ulong),
        ("tp_doc", ctypes.c_char_p), ("tp_traverse", ctypes.c_void_p),
        ("tp_clear", ctypes.c_void_p), ("tp_richcompare", ctypes.c_void_p),
        ("tp_weaklistoffset", ctypes.c_ssize_t), ("tp_iter", ctypes.c_void_p),
        ("tp_iternext", ctypes.c_void_p), ("tp_methods", ctypes.c_void_p),
        ("tp_members", ctypes.c_void_p), ("tp_getset", ctypes.c_void_p),
        ("tp_base", ctypes.c_void_p), ("tp_dict", ctypes.c_void_p),
        ("tp_descr_get", ctypes.c_void_p), ("tp_descr_set", ctypes.c_void_p),
        ("tp_dictoffset", ctypes.c_ssize_t), ("tp_init", ctypes.c_void_p),
        ("tp_alloc", ctypes.c_void_p), ("tp_new", ctypes.c_void_p),
        ("tp_free", ctypes.c_void_p), ("tp_is_gc", ctypes.c_void_p),
        ("tp_bases", ctypes.c_void_p), ("tp_mro", ctypes.c_void_p),
        ("tp_cache", ctypes.c_void_p), ("tp_subclasses", ctypes.c_void_p),
        ("tp_weaklist", ctypes.c_void_p), ("tp_del", ctypes.c_void_p),
        ("tp_version_tag", ctypes.c_uint), ("tp_finalize", ctypes.c_void_p),
        ("tp_vectorcall", ctypes.c_void_p))]


# newfunc: PyObject *(*)(PyTypeObject *, PyObject *args, PyObject *kwargs), called with the GIL.
_NEWFUNC = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object, ctypes.py_object,
                             ctypes.py_object)


@dataclasses.dataclass
class Handle:
    """What ``restore_new`` needs to put a type's constructor back."""

    cls: type
    c_new: int  # the type's own tp_new
    entry: object  # the type's own __new__ (its tp_new wrapper)
    original_new: object  # keeps the ctypes function object alive while the override is on
    replacement: object


def _type_object(cls) -> _TypeObject:
    """``cls``'s PyTypeObject, checked field by field against what Python says of it."""
    if sys.implementation.name != "cpython" or sys.version_info < (3, 10):
        raise Unsupported(f"needs CPython 3.10 or newer, not {sys.implementation.name} "
                          f"{sys.version_info[0]}.{sys.version_info[1]}")
    if sysconfig.get_config_var("Py_GIL_DISABLED") or hasattr(sys, "gettotalrefcount"):
        raise Unsupported("a free-threaded or debug build of CPython has another type layout")
    if not isinstance(cls, type) or cls.__flags__ & _HEAPTYPE:
        raise Unsupported(f"{cls!r} is not a C type")
    t = _TypeObject.from_address(id(cls))
    if (t.tp_flags != cls.__flags__ or t.tp_basicsize != cls.__basicsize__
            or t.tp_itemsize != cls.__itemsize__ or t.ob_type != id(type(cls))
            or not t.tp_new or t.tp_vectorcall):
        raise Unsupported(f"the type object of {cls.__qualname__} does not have the layout "
                          "devshim checked")
    if not cls.__flags__ & _IMMUTABLETYPE or "__new__" not in vars(cls):
        raise Unsupported(f"{cls.__qualname__} has no constructor of its own to replace")
    return t


def _assign_new(t: _TypeObject, cls, value) -> None:
    """``cls.__new__ = value`` with the immutable flag lifted for the assignment."""
    t.tp_flags &= ~_IMMUTABLETYPE
    try:
        type.__setattr__(cls, "__new__", value)
    finally:
        t.tp_flags |= _IMMUTABLETYPE


def override_new(cls, make) -> Handle:
    """Makes ``cls(...)`` call ``make(original_new)`` (see the module's contracts)."""
    t = _type_object(cls)
    c_new = t.tp_new
    original_new = _NEWFUNC(c_new)
    entry = vars(cls)["__new__"]
    replacement = functools.wraps(entry)(make(original_new))  # name, doc and signature of torch's
    handle = Handle(cls, c_new, entry, original_new, replacement)
    _assign_new(t, cls, staticmethod(replacement))
    return handle


def restore_new(handle: Handle) -> None:
    """Undoes ``override_new``: the C constructor first, then ``__new__``, which CPython reads
    back as that constructor."""
    t = _TypeObject.from_address(id(handle.cls))
    t.tp_new = handle.c_new
    _assign_new(t, handle.cls, handle.entry)
