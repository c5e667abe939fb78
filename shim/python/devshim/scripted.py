"""Redirection inside TorchScript: the devices written in scripted code.

TorchScript compiles a function, a module's methods or a class's methods to graphs that run
without calling Python, so devshim's wrappers never see a ``device="cuda"`` written inside them.
What TorchScript makes of such a device is a constant of the graph
(``prim::Constant[value="cuda:0"]()`` of type Device; ``torch.device("cuda", 0)`` with constant
arguments is an ``aten::device`` node of constants), and ``x.cuda()`` is ``aten::cuda(x)``. Once a
graph is compiled, and before it first runs, ``rewrite_graph`` applies the redirection policy to
those, as the eager wrappers do to the same calls:

- a device constant used by an operator that places data (an ``aten::`` op other than the ones
  that treat a device as a value: comparisons, ``str``, list and dict operations), or passed to
  another scripted function or method, gets the device used instead, in that use only:
  ``torch.zeros(2, device="cuda")`` in a scripted function makes a tensor on the device used;
- a device constant the device-object policy builds as the device used
  (``TORCHDEVICE_DEVICE_OBJECTS=redirect``: no index or one that exists; ``redirect-indexed``:
  one that exists; devshim/devices.py) is that device object in every use, comparisons
  included, as ``torch.device("cuda", 0)`` is in eager code; under ``keep`` a comparison sees
  the device as written;
- ``aten::cuda(x)`` becomes ``aten::to(x, <device used>)``;
- ``torch.autocast("cuda")`` (a constant device type given to its ``__init__``, which
  TorchScript's autocast pass reads) gets the type of the device used and, without a dtype,
  CUDA's (float16 unless set), as the eager ``torch.autocast`` does (devshim/amp.py).
  ``torch.cuda.amp.autocast`` is a class of its own that the pass takes for CUDA: left as
  written.

Each rewrite is recorded as API ``torch.jit.script`` at the call site that compiled the code
(the program's frame outwards of torch's). A device made at run time inside the scripted code
(``torch.device(name)`` of a string argument) is not redirected: nothing in the graph says what
it will be, and an operator of devshim's in the graph would make archives that load only where
devshim is installed. ``torch.cuda`` calls inside scripted code (TorchScript's ``cuda::`` ops)
are left as TorchScript compiles them.

When graphs are seen: TorchScript's emit hooks (``torch._C._jit_set_emit_hooks``: called for every
compiled function and every scripted module; the hooks already set are chained, not replaced),
the registration of a scripted class (``_compile_and_register_class``, which has no hook),
``torch.jit.load``'s result (devshim/serialization.py), and at activation every function compiled
before. A graph rewritten holds the devices used: ``torch.jit.save`` of it writes them, as
``torch.save`` of a tensor the shim placed writes the device it is on.

Contract: never raises. A graph the rewrite cannot handle (another torch version) is logged at
ERROR and runs as TorchScript compiled it.
"""

from __future__ import annotations

import atexit
import sys

from devshim import devices, record, runtime
from devshim.log import logger
from devshim.patching import Patch, unpatched, wraps

__all__ = ["rewrite_graph", "rewrite_function", "rewrite_module", "install_hooks",
           "remove_hooks", "plan"]

API = "torch.jit.script"

# aten ops that take a device as a value, not as where to put data.
_VALUE_OPS = frozenset({
    "aten::eq", "aten::ne", "aten::__is__", "aten::__isnot__", "aten::str", "aten::format",
    "aten::hash", "aten::__contains__", "aten::append", "aten::insert", "aten::_set_item",
    "aten::index", "aten::count", "aten::remove", "aten::__getitem__", "aten::list",
})

_AUTOCAST = "__torch__.torch.amp.autocast_mode.autocast"
_previous_hooks = None  # the emit hooks found when install_hooks set devshim's, or None
_exit_registered = False


_KINDS = ("prim::Constant", "aten::device", "aten::cuda", "prim::CallMethod")


def _candidates(graph):
    """The nodes of ``graph`` (nested blocks included) that may hold a device to rewrite, found
    by TorchScript's own search (in C++: a graph with nothing to rewrite costs a few µs)."""
    found = []
    for kind in _KINDS:
        found += graph.findAllNodes(kind, True)
    return found


def _device_of(node):
    """The device a node makes from constants only (a Device constant, ``aten::device`` of
    constants), or None."""
    kind = node.kind()
    if kind == "prim::Constant":
        if node.output().type().kind() != "DeviceObjType":
            return None
        return node.output().toIValue()
    if kind == "aten::device" and node.output().type().kind() == "DeviceObjType":
        args = []
        for value in node.inputs():
            if value.node().kind() != "prim::Constant":
                return None
            args.append(value.node().output().toIValue())
        try:
            return devices.as_written(*args)
        except (RuntimeError, TypeError, ValueError):
            return None  # TorchScript raises it when the code runs, as without devshim
    return None


def _places(kind) -> bool:
    """Whether a node of ``kind`` may place data with a device it is given: an aten op but those
    taking a device as a value, or a call of another scripted function or method (which
    TorchScript inlines or runs later, after this rewrite: its parameter is no constant there)."""
    if kind.startswith("aten::"):
        return kind not in _VALUE_OPS
    return kind in ("prim::CallFunction", "prim::CallMethod")


def _is_autocast_init(node):
    """``torch.autocast(device_type, ...)``'s ``__init__`` with a constant device type: what
    TorchScript's autocast pass reads to choose the device an autocast region is for."""
    if node.s("name") != "__init__" or node.inputsSize() < 2:
        return False
    cls = node.inputsAt(0).type()
    return (getattr(cls, "qualified_name", lambda: "")() == _AUTOCAST
            and node.inputsAt(1).node().kind() == "prim::Constant")


def _is_none(node, i):
    """Whether input ``i`` of ``node`` is a constant None (an argument left at its default)."""
    if node.inputsSize() <= i:
        return False
    given = node.inputsAt(i).node()
    return given.kind() == "prim::Constant" and given.output().type().kind() == "NoneType"


def _cuda_autocast_dtype():
    """``torch.get_autocast_dtype("cuda")`` as torch keeps it (float16 unless set)."""
    import torch

    return unpatched(torch.get_autocast_dtype)("cuda")


def rewrite_graph(graph):
    """Applies the policy to the devices written in ``graph`` (module docstring). Returns the
    (requested, used) pairs rewritten; a graph with nothing to rewrite is left untouched, so a
    second call changes nothing."""
    nodes = _candidates(graph)
    if not nodes:
        return []
    constants = {}  # (type, text) -> Value of a constant at the top of the graph

    def constant(value):
        """A constant of the graph holding ``value`` (a device or a string), made once."""
        key = (type(value), str(value))
        if key not in constants:
            with graph.insert_point_guard(next(iter(graph.nodes()))):
                constants[key] = graph.insertConstant(value)
        return constants[key]

    done = []
    for node in nodes:
        if node.kind() == "prim::CallMethod" and _is_autocast_init(node):
            requested = node.inputsAt(1).toIValue()
            used = runtime.redirect(requested) if isinstance(requested, str) else None
            if used is not None:
                node.replaceInput(1, constant(used.split(":", 1)[0]))
                if requested.startswith("cuda") and _is_none(node, 2):
                    # CUDA's dtype, not the device used's default (amp.py, eager).
                    node.replaceInput(2, constant(_cuda_autocast_dtype()))
                done.append((requested, used))
            continue
        if node.kind() == "aten::cuda" and node.inputsSize() == 1:
            used = runtime.redirect("cuda")
            if used is None:
                continue
            with graph.insert_point_guard(node):
                moved = graph.insert("aten::to", [node.input(), constant(devices.as_written(used))])
            node.output().replaceAllUsesWith(moved)
            node.destroy()
            done.append(("cuda", used))
            continue
        device = _device_of(node)
        if device is None:
            continue
        used = runtime.redirect(device)
        if used is None:
            continue
        value = node.output()
        found = devices.redirected_object(device)
        if found is not None:  # the object itself is the device used, in every use
            value.replaceAllUsesWith(constant(found[0]))
        else:
            for use in list(value.uses()):
                if _places(use.user.kind()):
                    use.user.replaceInput(use.offset, constant(devices.as_written(used)))
        done.append((device, used))
    return done


def _rewrite_all(what, graphs) -> None:
    """Rewrites each graph ``graphs()`` gives and records the rewrites at the program's frame;
    logs a failure at ERROR instead of raising (``what`` names the code in the message)."""
    f = sys._getframe(1)
    try:
        done = []
        for graph in graphs():
            done += rewrite_graph(graph)
    except Exception as e:  # the code then runs as TorchScript compiled it
        logger.error("TorchScript code of %s left as compiled: %s: %s", what, type(e).__name__, e)
        return
    for requested, used in done:
        record.hit_at(f, API, requested, used)


def rewrite_function(fn) -> None:
    """Rewrites a compiled function's graph (a ScriptFunction or a ScriptMethod)."""
    _rewrite_all(getattr(fn, "qualified_name", "?"), lambda: [fn.graph])


def rewrite_module(module) -> None:
    """Rewrites every method of a scripted module (``torch._C.ScriptModule``, or a
    RecursiveScriptModule and its submodules)."""

    def graphs():
        owners = [m._c for m in module.modules()] if hasattr(module, "modules") else [module]
        return [owner._get_method(name).graph for owner in owners
                for name in owner._method_names()]

    _rewrite_all("a scripted module", graphs)


def _rewrite_class(torch, qualified_name) -> None:
    def graphs():
        cu = torch.jit._state._python_cu
        cls = cu.get_class(qualified_name)
        methods = cls.method_names() if cls is not None else []
        return [fn.graph for fn in (cu.find_function(f"{qualified_name}.{name}")
                                    for name in methods) if fn is not None]

    _rewrite_all(qualified_name, graphs)


def install_hooks(torch) -> None:
    """Sets TorchScript's emit hooks to rewrite every function and module it compiles, each
    calling the hook set before (if any) after its own work; rewrites the functions, methods
    included, compiled before (a graph that has run keeps the plan TorchScript made of it)."""
    global _previous_hooks
    if _previous_hooks is not None:
        return
    module_hook, function_hook = torch._C._jit_get_emit_hooks()
    _previous_hooks = (module_hook, function_hook)

    def on_module(module):
        rewrite_module(module)
        if module_hook is not None:
            module_hook(module)

    def on_function(fn):
        rewrite_function(fn)
        if function_hook is not None:
            function_hook(fn)

    torch._C._jit_set_emit_hooks(on_module, on_function)
    global _exit_registered
    if not _exit_registered:
        # torch keeps the hooks in C++ statics, destroyed after the interpreter: a Python
        # function still held there then crashes the process at exit (SIGSEGV).
        atexit.register(remove_hooks, torch)
        _exit_registered = True
    _rewrite_all("the functions compiled before activation",
                 lambda: [fn.graph for fn in torch.jit._state._python_cu.get_functions()])


def remove_hooks(torch) -> None:
    """Sets back the emit hooks ``install_hooks`` found."""
    global _previous_hooks
    if _previous_hooks is not None:
        torch._C._jit_set_emit_hooks(*_previous_hooks)
        _previous_hooks = None


def _class_registration(original):
    @wraps(original)
    def register(obj, rcb, qualified_name):
        result = original(obj, rcb, qualified_name)
        _rewrite_class(sys.modules["torch"], qualified_name)
        return result

    return register


def plan(torch):
    """Patches of the scripted-class registration, which carry ``torch.jit.script`` (the emit
    hooks, which do most of it, are not attributes: install_hooks/remove_hooks)."""
    return [Patch(module, "_compile_and_register_class", _class_registration, (API,))
            for module in (torch.jit._recursive, torch.jit._script)
            if hasattr(module, "_compile_and_register_class")]
