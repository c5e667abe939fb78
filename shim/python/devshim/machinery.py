"""torch's own machinery sees a patched function as the function it replaces.

torch keeps tables keyed by a function's identity, each filled from torch's namespace at a moment
that depends on the program (import order, the first ``torch.compile``), so a table may hold the
original functions, devshim's wrappers, or both:

- TorchScript's builtin table (``torch.jit._builtins``, filled when torch is imported): ``id(fn)``
  -> ``"aten::zeros_like"``. A scripted function that calls a wrapper it does not find there is
  compiled from the wrapper's source, which ``inspect`` follows (``__wrapped__``) to a C builtin:
  ``TypeError: module, class, method, function, traceback, frame, or code object was expected``.
  ``sync_builtins`` gives every wrapper of a builtin the builtin's op; ``unsync_builtins`` takes
  those entries out again. Code inside TorchScript is then compiled as without devshim;
  TorchScript never calls Python, so the devices written in it are rewritten in the compiled
  graph (devshim/scripted.py).
- Dynamo's rule map (``torch._dynamo.trace_rules.get_torch_obj_rule_map``, built at the first
  compile from torch's namespace as it is then, keyed by object): how to trace each torch
  function (in the graph, inlined, skipped). ``dynamo_rules_patch`` makes the map hold both
  identities of every wrapper whenever it is built: a wrapper is traced like the function it
  wraps (kept in the graph as that function and run while tracing, so the device is redirected),
  and an original reached through its wrapper too (``set_default_device`` is inlined, not skipped
  as any other function of torch/__init__.py). The masquerade's replacements are taken out of
  the map: Dynamo's rules for torch.cuda's own functions assume CUDA (it calls them with fake
  tensors, expects CUDA tensors back); a replacement is traced as the Python function it is,
  and runs eagerly where it cannot be traced (a graph break). ``torch._dynamo.trace_rules`` is
  imported on the first compile, after the patches: the patch is installed then
  (``devshim.after_import``).
- Dynamo's tracker of a function that stands for another (``torch._dynamo.variables.functions.
  WrapperUserFunctionVariable``): Dynamo tracks a wrapper with a ``_torchdynamo_inline`` twin
  (devshim/tensors.py) as such a function, which knows no equality. A compiled function that
  looks a torch function up in a dict holding one as a key (``func in HANDLED_FUNCTIONS`` in a
  ``__torch_function__``, as tensordict's) would stop with "Dynamo cannot determine the equality
  comparison of an object". ``dynamo_wrapper_patches`` gives the tracker of devshim's wrappers the
  equality of a Python function (identity) and its object as its constant value, as Dynamo's
  tracker of any other function has.
- Dynamo's device interface for CUDA (``torch._dynamo.device_interface.CudaInterface``, made when
  Dynamo is imported, after the patches): it keeps ``torch.cuda.Event``, ``Stream``,
  ``current_stream``, ... to recognise CUDA's streams and events in a graph. Holding the
  masquerade's logical ones, it turned them into stream operators of the graph that crash
  (``streams::record_event`` with no index). ``device_interface_patches`` gives it back torch's
  own for those: the masquerade's streams and events are then traced as the Python objects they
  are. The interface's calls that run, not trace (``synchronize``, ``device_count``,
  ``memory_allocated``, ...), hold the masquerade's, whether Dynamo was imported before
  activation or after: Inductor's max-autotune synchronises "cuda" when the interface says it is
  available, which torch's own ``synchronize`` cannot do on a CPU build.
- Dynamo's current stream at run time (torch 2.15: ``torch._C._dynamo.utils.get_current_stream``,
  which a compiled function's prologue calls as ``torch._dynamo.utils.get_current_stream`` and its
  guards as ``torch._dynamo.guards``' ``get_current_stream``). While masquerading, Dynamo starts
  every trace with the stream ``torch.accelerator.current_stream()`` gives, the masquerade's
  logical stream of the device used, and the prologue asks for it again by that stream's device;
  the C function asks LibTorch's accelerator instead (CUDA on a CUDA build without a GPU, none on
  a CPU build) and refused the device used: every ``torch.compile`` under the shim raised
  ``ValueError: cpu doesn't match the current accelerator cuda``. ``dynamo_stream_patches`` puts
  back the Python function torch 2.13 and 2.14 have there, ``torch.accelerator.current_stream
  (device)``: the prologue and the guards get the stream tracing took.
- ``torch.overrides``' tables (``get_ignored_functions``, ``get_testing_overrides``,
  ``_get_overridable_functions``, ``_get_tensor_methods``, each cached on first use):
  ``overrides_patches`` makes each hold both identities of every patched function, whenever it is
  built: ``__torch_function__`` handlers receive the original builtins of the factories (a
  wrapper calls its original) but the wrappers of ``Tensor`` methods (torch looks a method up by
  name), and code asks the tables about either.
- Lazy modules' uninitialized parameters and buffers (``torch.nn.parameter.
  UninitializedTensorMixin._allowed_methods``, a list taken when torch is imported): the
  ``Tensor`` methods allowed before the first call, by identity. torch hands their
  ``__torch_function__`` the patched ``Tensor.to``/``cuda``, so ``LazyLinear(4).cuda()`` raised
  "Attempted to use an uninitialized parameter"; ``parameter_patches`` makes the list hold both
  identities.

A pair is (original, replacement) of one installed patch (devshim/patching.py ``installed()``).
"""

from __future__ import annotations

import functools

from devshim.patching import Patch, wraps

__all__ = ["sync_builtins", "unsync_builtins", "dynamo_rules_patch", "dynamo_wrapper_patches",
           "device_interface_patches", "dynamo_stream_patches",
           "overrides_patches", "parameter_patches"]

_registered: dict[int, object] = {}  # id(replacement) -> replacement, entries we added


def sync_builtins(torch, pairs) -> None:
    """TorchScript resolves each replacement to its original's builtin op."""
    table = torch.jit._builtins._get_builtin_table()
    for original, replacement in pairs:
        op = table.get(id(original))
        if op is not None and id(replacement) not in table:
            table[id(replacement)] = op
            _registered[id(replacement)] = replacement  # keeps the id from naming another


def unsync_builtins(torch) -> None:
    """Takes out every entry ``sync_builtins`` added."""
    table = torch.jit._builtins._get_builtin_table()
    for key in _registered:
        table.pop(key, None)
    _registered.clear()


def _with_both_identities(table, twins):
    """Adds to ``table`` (a set or a dict) the twin of every key that has one."""
    if isinstance(table, dict):
        for key in [k for k in table if k in twins and twins[k] not in table]:
            table[twins[key]] = table[key]
    elif isinstance(table, list):
        present = set(table)
        table.extend(t for t in [twins[k] for k in table if k in twins] if t not in present)
    else:
        table.update([twins[k] for k in table if k in twins])
    return table


def _augmenting(twins, pick):
    """A maker of wrappers for one of torch.overrides' cached table builders."""

    def make(original):
        done = set()  # ids of the cached tables already augmented (the cache keeps them alive)

        @wraps(original)
        def builder():
            result = original()
            for table in pick(result):
                if id(table) not in done:
                    _with_both_identities(table, twins)
                    done.add(id(table))
            return result

        for name in ("cache_clear", "cache_info", "cache_parameters"):
            if hasattr(original, name):
                setattr(builder, name, getattr(original, name))
        return builder

    return make


def overrides_patches(torch, pairs) -> list[Patch]:
    """Patches of torch.overrides' table builders: each table holds both identities of every
    pair. ``pairs`` is read when a table is built, so it may still grow after this call."""
    overrides = torch.overrides
    twins = _Twins(pairs)
    builders = (("get_ignored_functions", lambda r: (r,)),
                ("get_testing_overrides", lambda r: (r,)),
                ("_get_overridable_functions", lambda r: (r[1], *r[0].values())),
                ("_get_tensor_methods", lambda r: (r,)))
    return [Patch(overrides, name, _augmenting(twins, pick), ())
            for name, pick in builders if isinstance(getattr(overrides, name, None),
                                                     functools._lru_cache_wrapper)]


def parameter_patches(torch, pairs) -> list[Patch]:
    """A patch of the Tensor methods lazy modules' uninitialized parameters allow: the list then
    holds both identities of each patched one (and nothing else: what torch refuses before the
    first call it still refuses)."""
    mixin = getattr(getattr(torch.nn, "parameter", None), "UninitializedTensorMixin", None)
    if not isinstance(getattr(mixin, "_allowed_methods", None), list):
        return []
    twins = _Twins(pairs)
    return [Patch(mixin, "_allowed_methods",
                  lambda original: _with_both_identities(list(original), twins), ())]


def dynamo_rules_patch(trace_rules, wrapped, replaced) -> Patch:
    """The patch of Dynamo's rule-map builder: the map holds both identities of every
    ``wrapped`` pair and none of the ``replaced`` replacements.

    Dynamo reads a function's ``_torchdynamo_inline`` when it builds the map from names, so a
    wrapper with a twin for tracing (devshim/tensors.py) comes in as its twin: the twin's rule
    goes to the wrapper and the original instead (the graph then calls ``torch.zeros``, the
    wrapper, not devshim's twin)."""
    drop = _Twins([(new, new) for _, new in replaced])
    twins = [(getattr(new, "_torchdynamo_inline", None), original, new)
             for original, new in wrapped]

    def pick(rules):
        for key in [k for k in rules if k in drop]:
            del rules[key]
        for twin, original, new in twins:
            if twin is not None and twin in rules:
                rule = rules.pop(twin)
                rules.setdefault(new, rule)
                rules.setdefault(original, rule)
        return (rules,)

    return Patch(trace_rules, "get_torch_obj_rule_map", _augmenting(_Twins(wrapped), pick), ())


def dynamo_wrapper_patches(functions, wrapped) -> list[Patch]:
    """Patches of ``functions.WrapperUserFunctionVariable`` (Dynamo's variables/functions.py):
    tracking one of the ``wrapped`` pairs' wrappers, it is equal to what is that very object and
    its constant value is the wrapper; tracking anything else, it behaves as before. Only the
    methods the tracker has are patched."""
    tracker = getattr(functions, "WrapperUserFunctionVariable", None)
    if tracker is None:
        return []
    ours = _Twins(wrapped)

    def is_ours(variable):
        return getattr(variable, "attr_to_trace", None) == "_torchdynamo_inline" and \
            getattr(variable, "wrapper_obj", None) in ours

    def equality(original):
        @wraps(original)
        def is_python_equal(self, other):
            if not is_ours(self):
                return original(self, other)
            realize = getattr(other, "realize", None)  # a lazy tracker: what it stands for
            other = realize() if realize is not None else other
            if isinstance(other, tracker):  # its "real value" is the function it traces
                return other.wrapper_obj is self.wrapper_obj
            value = getattr(other, "get_real_python_backed_value", None)
            return value is not None and value() is self.wrapper_obj

        return is_python_equal

    def constant(original):
        @wraps(original)
        def as_python_constant(self):
            return self.wrapper_obj if is_ours(self) else original(self)

        return as_python_constant

    # A torch whose tracker lacks one of them (2.14 has no is_python_equal: Dynamo compares
    # trackers otherwise) keeps it lacking: there is nothing there to stand in for.
    return [Patch(tracker, name, make, ()) for name, make in
            (("is_python_equal", equality), ("as_python_constant", constant))
            if hasattr(tracker, name)]


# The attributes of Dynamo's device interface by which it recognises a stream or an event in the
# code it traces (torch._dynamo.variables.builder and .torch compare a call's target with them).
_TRACED_INTERFACE_NAMES = frozenset({
    "Event", "Stream", "current_stream", "default_stream", "stream", "set_stream",
    "_set_stream_by_id", "get_raw_stream"})


def device_interface_patches(device_interface, replaced) -> list[Patch]:
    """Patches of Dynamo's CUDA device interface, whichever of torch's functions or the
    ``replaced`` replacements it took when it was made (Dynamo imported before activation or
    after): each attribute by which it recognises streams and events in a graph
    (``_TRACED_INTERFACE_NAMES``) holds torch's original, as is or as a staticmethod; every other
    one holds the replacement, as ``torch.cuda`` does: torch calls them (``synchronize`` after an
    autotuning benchmark, ``device_count``)."""
    interface = getattr(device_interface, "CudaInterface", None)
    originals = {id(new): original for original, new in replaced}
    replacements = {id(original): new for original, new in replaced}
    patches = []
    for name, value in list(vars(interface).items()) if interface is not None else ():
        static = isinstance(value, staticmethod)
        held = id(value.__func__ if static else value)
        wanted = (originals if name in _TRACED_INTERFACE_NAMES else replacements).get(held)
        if wanted is not None:
            back = staticmethod(wanted) if static else wanted
            patches.append(Patch(interface, name, lambda current, back=back: back, ()))
    return patches


def dynamo_stream_patches(module, builtin) -> list[Patch]:
    """The patch of ``module.get_current_stream`` (``torch._dynamo.utils`` or
    ``torch._dynamo.guards``) when it holds ``builtin``, torch's C function
    (``torch._C._dynamo.utils.get_current_stream``, torch 2.15; None where torch has none): a
    Python function that answers ``torch.accelerator.current_stream(device)`` as torch 2.13 and
    2.14's does, so that the current stream a compiled function asks for at run time is the one
    torch.accelerator gave when it was traced (the masquerade's, while masquerading). A module
    that holds anything else (torch's Python function, this patch) is left alone."""
    if builtin is None or getattr(module, "get_current_stream", None) is not builtin:
        return []

    def make(original):
        def get_current_stream(device):
            import torch

            return torch.accelerator.current_stream(device)

        get_current_stream.__wrapped__ = original
        return get_current_stream

    return [Patch(module, "get_current_stream", make, (), calls_original=False)]


class _Twins:
    """original <-> replacement of the pairs, looked up either way (read when first used)."""

    def __init__(self, pairs):
        self._pairs = pairs
        self._map = None

    def _mapping(self):
        if self._map is None:
            self._map = {}
            for original, replacement in self._pairs:
                try:
                    self._map[original] = replacement
                    self._map[replacement] = original
                except TypeError:  # unhashable
                    pass
        return self._map

    def __contains__(self, key):
        try:
            return key in self._mapping()
        except TypeError:
            return False

    def __getitem__(self, key):
        return self._mapping()[key]
