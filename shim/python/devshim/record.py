"""The redirection record: what the shim rewrote, counted per (call site, API, requested -> used).

Hot path: a patch that rewrote something calls ``hit(api, requested, used)`` directly (not through
another function); ``hit`` takes the frame of that patch's caller with ``sys._getframe(2)`` and
looks up (id(code object), f_lasti, api, requested, used) in a dict — no stack walk. The id, not
the code object, because hashing a code object costs ~0.2 µs; every code object whose id is a key
is kept alive, so an id never comes to name another. The hottest wrappers inline a cheaper lookup
still, keyed by f_lasti alone and checked by identity (``SiteCache``).

Only the first hit of a key walks outwards past devshim's and torch's own frames (at most
``_WALK_LIMIT``) to the program's call site (``first_hit``), creates or finds its row and logs it at
INFO. A code object found to be torch's or devshim's is remembered, so later calls made from inside
torch (``nn.Linear(device="cuda")`` calling ``torch.empty``) walk out to the program's frame again
and are counted at the right call site.

Rows are keyed by (api, requested, used, file, line); ``function`` is the first one seen. Counts
are plain integer increments under the GIL: exact for single-threaded programs; a race between
threads can at worst lose an increment. A forked child starts with zero counts (its parent writes
its own).

Each row has a CUDA contact, fixed when it is made: *device work* (a request that names CUDA,
"cuda", "cuda:1" or pinned memory, carried to a placement: a factory, ``.to``/``.cuda``, a module,
``torch.load``, a generator, ``torch.device``, autocast), *asked* (a call made with ``asked=True``:
a masqueraded ``torch.cuda``/``torch.accelerator`` function, an autocast query: ``is_available``,
seeding, ``synchronize``, streams, memory queries) or *none* (a request that names no CUDA: no
device given, or "cpu" sent to MPS: code that runs the same way without the shim). A device
request torch passes on for the program (``nn.Linear(device="cuda")`` calling ``torch.empty``)
is the program's, counted at the program's call site; an asked call whose caller, past devshim's
own frames, is torch's (an optimizer's ``torch.accelerator.current_stream()``, which devshim
forwards to ``torch.cuda``; autocast's queries inside ``nn.functional``) is torch's own and is not
recorded at all (``hit_at``).

Tests that took a CUDA path: ``test_started(name)`` and ``test_finished()`` bracket one test
(devshim/test_hooks.py calls them: pytest's setup and call phases, unittest's ``TestCase.run``);
a test during which a device-work row's count grew is named in the record's ``cuda_path_tests``,
one during which only asked rows grew in ``cuda_asked_tests``. The hot path pays nothing for it:
the counts are summed at each end of a test (O(rows)).

``write(path)`` (registered with atexit when TORCHDEVICE_RECORD is set) merges this process's
rows into the file under an exclusive flock on ``path + ".lock"``: read what is there, sum counts
per row key keeping the first call site, join the named tests, write a temporary file beside it,
os.replace. A file that is not a record of this format is replaced (and a WARNING logged); no
failure of ``write`` ever propagates.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading

from devshim.log import logger

__all__ = ["FORMAT", "INSIDE", "SiteCache", "hit", "hit_at", "first_hit", "site_cache", "rows",
           "document", "merge", "write", "reset", "set_internal_dirs", "test_started",
           "test_finished", "current_test", "cuda_path_tests", "cuda_asked_tests", "NO_CONTACT",
           "ASKED", "DEVICE_WORK", "contact_of"]

FORMAT = "devshim-redirections/1"
_WALK_LIMIT = 64

_getframe = sys._getframe
_sites: dict[tuple, list] = {}  # (id(code), lasti, api, requested, used) -> row
_rows: dict[tuple, list] = {}  # (api, requested, used, file, line) -> row
_internal_ids = set()  # id() of code objects of torch and devshim seen on a first hit
_site_caches: list = [_sites]  # _sites and every SiteCache
_kept_codes = []  # every code object whose id() is a key above: kept alive, so ids stay unique
_internal_dirs = (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
_own_dirs = _internal_dirs  # devshim's folder and the decorator helpers: never anybody's caller
_torch_dirs: tuple = ()  # torch's folder: an asked call from there is torch's own
_lock = threading.Lock()
_first_hit_listeners = []  # called with the api on the first hit of every new row
compiling = bool  # torch.compiler.is_compiling once torch is patched (compiling() is False)
_cuda_path_tests: set[str] = set()  # tests during which a device-work row's count grew
_cuda_asked_tests: set[str] = set()  # tests during which only asked rows' counts grew
_test = None  # (name, (device work, asked) count sums when it started) while a test runs
# A row: [count, api, requested, used, file, line, function, contact]

# A row's CUDA contact (the module docstring).
NO_CONTACT, ASKED, DEVICE_WORK = 0, 1, 2


def set_internal_dirs(*dirs: str, files=()) -> None:
    """Folders (and single files) whose frames are never a call site.

    devshim's own folder is always one; so are the decorator helpers that sit between a program
    and a deprecated torch API (typing_extensions, functools, contextlib). ``dirs`` are torch's:
    an asked call whose first caller outside devshim lies there is not recorded (``hit_at``).
    """
    global _internal_dirs, _own_dirs, _torch_dirs
    own = os.path.dirname(os.path.abspath(__file__)) + os.sep
    helpers = []
    for name in ("typing_extensions", "functools", "contextlib"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            helpers.append(os.path.abspath(path))
    _own_dirs = (own,) + tuple(helpers) + tuple(os.path.abspath(f) for f in files)
    _torch_dirs = tuple(os.path.abspath(d) + os.sep for d in dirs)
    _internal_dirs = _own_dirs + _torch_dirs
    _internal_ids.clear()
    for cache in _site_caches:
        cache.clear()


def _is_internal(code) -> bool:
    return code.co_filename.startswith(_internal_dirs)


def _mark_internal(code) -> None:
    if id(code) not in _internal_ids:
        _kept_codes.append(code)
        _internal_ids.add(id(code))


def _outside(frame):
    """The first frame outwards of ``frame`` that is neither torch's nor devshim's (or None)."""
    f, steps = frame, 0
    while f is not None and steps < _WALK_LIMIT:
        code = f.f_code
        if id(code) not in _internal_ids:
            if not _is_internal(code):
                return f
            _mark_internal(code)
        f, steps = f.f_back, steps + 1
    return None


def hit(api: str, requested, used: str, depth: int = 2, asked: bool = False) -> None:
    """Counts one call of ``api`` whose ``requested`` device was rewritten to ``used``.

    Must be called directly by the function the program called: the call site is looked for from
    ``depth`` frames up (2: the caller of hit's caller). ``requested`` is the request as given
    (None: no device given) and must be hashable. ``asked``: the call asks or sets something of
    the masqueraded CUDA (a query, seeding, a stream) and places nothing (the module docstring).
    Counts nothing while Dynamo traces the caller (torch.compile, torch.export): a traced frame is
    not a call site, and frame introspection would break the graph.
    """
    if compiling():
        return
    try:
        f = _getframe(depth)
    except ValueError:  # called from C with no Python caller
        f = None
    hit_at(f, api, requested, used, asked)


def _called_by_torch(f) -> bool:
    """Whether the first frame at or outside ``f`` that is not devshim's own is torch's."""
    while f is not None and f.f_code.co_filename.startswith(_own_dirs):
        f = f.f_back
    return f is not None and f.f_code.co_filename.startswith(_torch_dirs)


def hit_at(f, api: str, requested, used: str, asked: bool = False) -> None:
    """``hit`` for a call whose caller's frame is ``f`` (None: no Python caller). An asked call
    that torch made (``_called_by_torch``) is not counted: torch's own bookkeeping."""
    if asked and _called_by_torch(f):
        return
    if f is not None:
        code_id = id(f.f_code)
        if code_id in _internal_ids:
            f = _outside(f)
            code_id = id(f.f_code) if f is not None else 0
        key = (code_id, f.f_lasti if f is not None else -1, api, requested, used)
    else:
        key = (0, -1, api, requested, used)
    row = _sites.get(key)
    if row is None:
        row, cacheable = first_hit(f, api, requested, used, asked)
        if cacheable:
            _sites[key] = row
    row[0] += 1


INSIDE = ["inside torch"]  # a SiteCache value for a caller inside torch: walk out (hit_at)


class SiteCache:
    """The call-site cache of one hot wrapper (factories, ``Tensor.to``), which inline ``hit``.

    Hot path, in the wrapper: ``e = fast.get(f.f_lasti)`` for the caller's frame ``f``; when ``e``
    is ``(f.f_code, device, used, row)`` for this very code object (``is``), device (``==``) and
    used device (``is``), ``row[0] += 1`` — an int-keyed lookup and three comparisons, no tuple
    to build and hash. Otherwise ``count(f, device, used)``: the full key (id(code), f_lasti,
    requested, used) in ``slow``, a first hit when new, and ``fast`` refreshed for this site (two
    call sites at the same f_lasti of different code objects then alternate in ``fast``: still
    counted right, only slower). A caller inside torch is never put in ``fast``; its calls walk
    out to the program's frame each time (``hit_at``).
    """

    __slots__ = ("api", "fast", "slow")

    def __init__(self, api: str):
        self.api = api
        self.fast: dict = {}
        self.slow: dict = {}

    def count(self, f, device, used) -> None:
        """Counts one call from frame ``f`` (None: no Python caller): the path off ``fast``."""
        key = None if f is None else (id(f.f_code), f.f_lasti, device, used)
        row = self.slow.get(key)
        if row is None:
            row, cacheable = first_hit(f, self.api, device, used)
            if not cacheable:
                self.slow[key] = INSIDE
                row[0] += 1
                return
            self.slow[key] = row
        elif row is INSIDE:
            hit_at(f, self.api, device, used)
            return
        if f is not None:
            self.fast[f.f_lasti] = (f.f_code, device, used, row)
        row[0] += 1

    def clear(self) -> None:
        self.fast.clear()
        self.slow.clear()


def site_cache(api: str) -> SiteCache:
    """A new SiteCache for a hot wrapper of ``api``, emptied with every other by ``reset``."""
    cache = SiteCache(api)
    _site_caches.append(cache)
    return cache


def drop_site_caches() -> None:
    """Forgets the hot wrappers' caches (their wrappers are gone: devshim was deactivated)."""
    with _lock:
        del _site_caches[1:]


def _text(requested) -> str:
    from devshim.runtime import requested_text

    return requested_text(requested) if not isinstance(requested, str) else requested


def contact_of(requested_text: str, asked: bool) -> int:
    """A row's CUDA contact from its request as text and whether the call only asked."""
    if asked:
        return ASKED
    if requested_text.startswith("cuda") or requested_text == "pinned":
        return DEVICE_WORK
    return NO_CONTACT


def first_hit(frame, api, requested, used, asked=False):
    """(row, cacheable): the row of the call site at or outside ``frame``, made if new.

    ``cacheable`` is False when ``frame`` itself is torch's or devshim's (its code is then in
    ``_internal_ids``), so that the caller does not key later calls by that frame.
    """
    with _lock:
        site, cacheable = frame, True
        if site is not None and _is_internal(site.f_code):
            _mark_internal(site.f_code)
            site, cacheable = _outside(site), False
        if site is None:
            file, line, function = "", 0, ""
        else:
            _kept_codes.append(site.f_code)
            file = site.f_code.co_filename
            if not file.startswith("<"):
                file = os.path.abspath(file)
            line, function = site.f_lineno or 0, site.f_code.co_name
        req_text = _text(requested)
        row_key = (api, req_text, used, file, line)
        row = _rows.get(row_key)
        new = row is None
        if new:
            row = [0, api, req_text, used, file, line, function, contact_of(req_text, asked)]
            _rows[row_key] = row
    if new:  # outside the lock: a logging handler may itself call torch
        logger.info("%s: %s -> %s at %s:%d (%s)", api, req_text, used, file or "?", line,
                    function or "?")
        for listener in _first_hit_listeners:
            listener(api)
    return row, cacheable


def _totals() -> tuple[int, int]:
    """The counts of the device-work rows and of the asked rows, summed."""
    work = asked = 0
    for row in list(_rows.values()):
        if row[7] == DEVICE_WORK:
            work += row[0]
        elif row[7] == ASKED:
            asked += row[0]
    return work, asked


def test_started(name: str) -> None:
    """A test named ``name`` (its target inside its file: "Class::test[params]") begins."""
    global _test
    _test = (name, _totals())


def test_finished() -> None:
    """The test begun last ends: named in ``cuda_path_tests`` when a device-work row's count grew
    meanwhile, else in ``cuda_asked_tests`` when an asked row's did."""
    global _test
    if _test is not None:
        name, (work, asked) = _test
        _test = None
        now_work, now_asked = _totals()
        if now_work != work:
            _cuda_path_tests.add(name)
        elif now_asked != asked:
            _cuda_asked_tests.add(name)


def current_test() -> str | None:
    """The test between test_started and test_finished, or None."""
    return None if _test is None else _test[0]


def cuda_path_tests() -> list[str]:
    """The tests of this process that took a CUDA path with device work, sorted."""
    return sorted(_cuda_path_tests)


def cuda_asked_tests() -> list[str]:
    """The tests of this process whose only CUDA contact was asking, sorted (a test that did
    device work in another of its runs in this process is not one)."""
    return sorted(_cuda_asked_tests - _cuda_path_tests)


def rows() -> list[dict]:
    """This process's rows with a positive count, as record entries, sorted."""
    out = []
    for count, api, req, used, file, line, function, _ in list(_rows.values()):
        if count > 0:
            out.append({"api": api, "requested": req, "used": used, "count": count,
                        "call_site": {"file": file, "line": line, "function": function}})
    out.sort(key=_entry_key)
    return out


def reset() -> None:
    """Forgets every row, call site and named test (for tests)."""
    global _test
    with _lock:
        for cache in _site_caches:
            cache.clear()
        _rows.clear()
        _cuda_path_tests.clear()
        _cuda_asked_tests.clear()
        _test = None


def _after_fork() -> None:
    # The child keeps the rows (and call sites), not the parent's counts or tests: the parent
    # writes those.
    global _test
    for row in _rows.values():
        row[0] = 0
    _cuda_path_tests.clear()
    _cuda_asked_tests.clear()
    _test = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def document(entries: list[dict], policy: str, hardware, pid: int | None = None,
             tests: list[str] | None = None, asked_tests: list[str] | None = None) -> dict:
    """A whole record: the format of docs/shim.md, "The redirection record". ``tests``: those that
    did device work (``cuda_path_tests``); ``asked_tests``: those that only asked, less any of
    ``tests``."""
    work = set(tests or [])
    return {
        "format": FORMAT,
        "shim": "python",
        "pid": os.getpid() if pid is None else pid,
        "policy": policy,
        "hardware": {"accelerator": hardware.accelerator, "mps": hardware.mps,
                     "cuda_device_count": hardware.cuda_device_count},
        "redirections": entries,
        "cuda_path_tests": sorted(work),
        "cuda_asked_tests": sorted(set(asked_tests or []) - work),
    }


def _entry_key(e: dict) -> tuple:
    site = e.get("call_site") or {}
    return (e["api"], e["requested"], e["used"], site.get("file", ""), site.get("line", 0))


def merge(existing: list[dict], new: list[dict]) -> list[dict]:
    """Entries of both, counts summed per (api, requested, used, file, line); the first kept."""
    merged: dict[tuple, dict] = {}
    for e in list(existing) + list(new):
        key = _entry_key(e)
        if key in merged:
            merged[key]["count"] += e["count"]
        else:
            merged[key] = dict(e, call_site=dict(e.get("call_site") or {}))
    return sorted(merged.values(), key=_entry_key)


def _valid_tests(doc, key="cuda_path_tests") -> list[str] | None:
    """The tests a parsed record names under ``key`` (none: []), or None when they are not a list
    of str."""
    tests = doc.get(key, [])
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        return None
    return tests


def _valid_entries(doc) -> list[dict] | None:
    """The entries of a parsed record, or None when it is not a record this code can merge."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    entries = doc.get("redirections")
    if (not isinstance(entries, list) or _valid_tests(doc) is None
            or _valid_tests(doc, "cuda_asked_tests") is None):
        return None
    for e in entries:
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) and e.get(k)
                                            for k in ("api", "requested", "used"))
                and isinstance(e.get("count"), int) and e["count"] > 0):
            return None
    return entries


def write(path: str, policy: str, hardware) -> bool:
    """Merges this process's rows into the record at ``path``. True when written; never raises."""
    try:
        import fcntl

        directory = os.path.dirname(os.path.abspath(path)) or "."
        os.makedirs(directory, exist_ok=True)
        with open(path + ".lock", "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            existing: list[dict] = []
            tests = set(_cuda_path_tests)
            asked = set(_cuda_asked_tests)
            if os.path.exists(path):
                try:
                    with open(path, encoding="utf-8") as f:
                        old = json.load(f)
                    found = _valid_entries(old)
                except (OSError, ValueError):
                    found = None
                if found is None:
                    logger.warning("%s is not a %s record; replacing it", path, FORMAT)
                else:
                    existing = found
                    tests.update(_valid_tests(old))
                    asked.update(_valid_tests(old, "cuda_asked_tests"))
            doc = document(merge(existing, rows()), policy, hardware, tests=sorted(tests),
                           asked_tests=sorted(asked))
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".",
                                       suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(doc, out, indent=1)
                    out.write("\n")
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        return True
    except Exception as e:  # at exit: report, never crash the program
        try:
            logger.error("could not write the redirection record %s: %s", path, e)
        except Exception:
            pass
        return False
