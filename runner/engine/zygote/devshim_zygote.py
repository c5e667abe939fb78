"""The warm parent of test processes (issue 18): imports what every test file of a run imports
once, then forks one child per test file, each of which is what `python -m MODULE ARGS` started
cold would be (runner/engine/zygote.h is the runner's side).

    python devshim_zygote.py --preload ?torch,?torch._dynamo,pytest   (stdin: requests; stdout:
                                                                      replies)

It starts with exactly the environment a cold test process gets (the shim's activation, when on,
runs in its sitecustomize as it would cold), imports the preload list ("?name": only when it is
installed), and answers one JSON line
on stdout: {"ready": true, "pid", "preloaded": [...]}, or {"ready": false, "error"} and exits 3.
Then, for each JSON line on stdin {"argv": [...the cold command after the interpreter...], "cwd",
"env": {...the whole environment...}, "log"} it answers {"pid": N} or
{"error": "..."}. EOF on stdin ends it: it runs its atexit handlers and finalizers and exits 0
(the runner waits for that a moment, then kills it).

A child is forked twice (zygote -> intermediate -> child) and the intermediate exits at once, so
the child is re-parented to the nearest child subreaper: the runner (ProcessReaper), which then
waits for it as for a child it started itself. The child: its own process group; SIGKILL when
the runner dies (set once re-parented); stdin /dev/null, stdout and stderr on the log (truncated);
the cwd, environment, sys.argv and sys.path[0] of the cold command; default signal
dispositions (Python's own for SIGINT, SIGPIPE, SIGXFSZ) and an empty signal mask; faulthandler
enabled again on the new stderr when it was; numpy's global generator re-seeded when numpy was
preloaded (Python's random re-seeds itself after fork); the shim, when applied, reads its
per-process settings again (devshim.patches.refresh_from_environ: the redirection record's path);
the weakref finalizers registered in the zygote are not run at the child's exit (they clean up
what the zygote made: a preload's temporary directory must outlive each file; the zygote runs
them when it leaves, at the end of the run).
It then runs the module as __main__ and
leaves like an interpreter does: SystemExit's code, a traceback and 1 for an uncaught exception,
atexit handlers run. What stays shared with the zygote: the hash seed (PYTHONHASHSEED), the
modules imported, and anything they computed at import time. The zygote's objects are frozen
(gc.freeze) before each fork: the child's collector never visits them, so a reference cycle
among them that the child turns into garbage is not collected (gc.get_objects() does not list
them either).

Forking is refused while the zygote has another thread (a preload that starts a thread pool at
import that quiesce() cannot stop): the request gets {"error": "..."}, and the runner starts that
file cold.
"""

import atexit
import ctypes
import faulthandler
import gc
import importlib
import json
import os
import runpy
import signal
import sys
import threading
import time
import weakref

PR_SET_PDEATHSIG = 1
REPARENT_WAIT_S = 5.0
RUNNER = os.getppid()  # the zygote's parent, to which each child is re-parented


def threads_now():
    """Threads of this process, as the kernel counts them (a C library's threads included)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def quiesce():
    """Stops the thread pools that libraries restart by themselves on their next use, so that the
    fork happens from one thread: OpenBLAS's (numpy's, which torch imports) through
    blas_thread_shutdown_, what its own pthread_atfork handler calls before a fork."""
    try:
        with open("/proc/self/maps") as maps:
            libraries = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return
    for path in sorted(libraries):
        try:
            shutdown = getattr(ctypes.CDLL(path), "blas_thread_shutdown_", None)
        except OSError:
            continue
        if shutdown is not None:
            shutdown()


def prepare_framework(imported):
    """Imports what the framework itself imports before the first test in every process, so that
    each child finds it done: pytest's built-in plugins, the modules a session imports lazily (pdb)
    and the plugins its entry points name
    (unless PYTEST_DISABLE_PLUGIN_AUTOLOAD is set, as pytest itself does). A module that fails
    here is left alone: the child imports it as a cold process would, and fails the same way."""
    if "pytest" not in imported:
        return
    try:
        from _pytest.config import default_plugins
    except ImportError:
        return
    # pdb: the debugging plugin imports it in every session's pytest_configure.
    modules = [f"_pytest.{name}" for name in default_plugins] + ["_pytest._argcomplete", "pdb"]
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        from importlib.metadata import entry_points

        modules += [e.module for e in entry_points(group="pytest11")]
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001, S112 - see the docstring
            continue


def plugin_args(args):
    """The `-p` values of a pytest command line, read as pytest's consider_preparse reads them."""
    values = []
    it = iter(args)
    for arg in it:
        if arg == "-p":
            values.append(next(it, ""))
        elif arg.startswith("-p"):
            values.append(arg[2:])
    return tuple(values)


class PytestTemplate:
    """pytest's first step, made once in the zygote: `pytest.main` starts with get_config(args),
    a plugin manager with pytest's built-in plugins registered (except those `-p no:NAME`
    blocks), which costs each child about 7 ms and depends only on those `-p` arguments, the
    modules, PYTEST_DEBUG and the working directory. The zygote builds one per distinct `-p` list
    the first time a file asks; the child's own get_config call returns it (a fresh copy: the
    zygote never uses it) when the call is the one it stands for, with the child's arguments as
    its invocation parameters, and falls through to pytest's own get_config otherwise. Not built
    when building it warns, fails or traces (PYTEST_DEBUG): the child then does it all itself."""

    def __init__(self):
        self.configs = {}  # `-p` values -> the config built for them, or None

    @staticmethod
    def prog():
        """The program name pytest gives the parser when it runs as `python -m pytest`."""
        import _pytest.config

        name = getattr(_pytest.config, "_get_prog_name", None)
        return name(["__main__.py"]) if name else None

    def for_request(self, request):
        argv = request["argv"]
        if argv[1] != "pytest" or "_pytest.config" not in sys.modules:
            return None
        if os.environ.get("PYTEST_DEBUG") or request["env"].get("PYTEST_DEBUG"):
            return None
        if os.path.realpath(request["cwd"]) != os.path.realpath(os.getcwd()):
            return None
        key = plugin_args(argv[2:])
        if key not in self.configs:
            self.configs[key] = self.build(argv[2:])
        return self.configs[key]

    def build(self, args):
        import warnings

        import _pytest.config

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                config = _pytest.config.get_config(list(args), None, prog=self.prog())
        except Exception:  # noqa: BLE001 - the child meets the same error itself
            return None
        return None if caught else config

    @staticmethod
    def use(config):
        """In the child: pytest's next get_config call for the same `-p` list returns config."""
        import pathlib

        import _pytest.config as pytest_config

        original = pytest_config.get_config
        wanted = plugin_args(config.invocation_params.args)

        def get_config(args=None, plugins=None, *, prog=None):
            pytest_config.get_config = original
            same = plugins is None and prog == PytestTemplate.prog()
            if same and plugin_args(args or ()) == wanted:
                config.invocation_params = pytest_config.Config.InvocationParams(
                    args=args or (), plugins=None, dir=pathlib.Path.cwd()
                )
                return config
            return original(args, plugins, prog=prog)

        pytest_config.get_config = get_config


PYTEST_TEMPLATES = PytestTemplate()


def freeze_heap():
    """Moves every object the zygote holds out of the collector's reach (gc.freeze), so that a
    child's garbage collections visit only what the child allocated. Without it each collection
    walks torch's whole heap, and in a forked child that also copies every page it touches:
    pytest's collections at exit alone cost a child 0.3 s."""
    gc.freeze()


def disown_finalizers():
    """In a child: the weakref finalizers registered so far are the zygote's (torch's operator
    libraries, a preload's temporary directory): not run at the child's exit. What they clean up
    the zygote still uses for the next file; a child that removed a preload's directory would take
    it from every later file. (torch's 170-odd library finalizers also cost a child 30 ms at
    exit, undoing registrations in memory the child's exit frees anyway.) Finalizers the child
    registers itself run as usual."""
    registry = getattr(weakref.finalize, "_registry", {})
    for finalizer in list(registry):
        finalizer.atexit = False


def reply(out, obj):
    os.write(out, (json.dumps(obj) + "\n").encode())


def reset_signals():
    for signo in range(1, signal.NSIG):
        if signo in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            handler = {
                signal.SIGINT: signal.default_int_handler,
                signal.SIGPIPE: signal.SIG_IGN,
                signal.SIGXFSZ: signal.SIG_IGN,
            }.get(signo, signal.SIG_DFL)
            signal.signal(signo, handler)
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def become_child(request, intermediate, pytest_config):
    """In the forked child: the process a cold start would have been. Does not return."""
    os.setpgid(0, 0)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the zygote's reader may hold read-ahead requests
    fault = faulthandler.is_enabled()
    faulthandler.disable()  # enable() on an enabled handler keeps its old signal handlers
    reset_signals()
    if fault:
        faulthandler.enable(file=sys.stderr)

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    disown_finalizers()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "devshim.patches" in sys.modules:  # the shim, applied in the zygote: the file's record
        sys.modules["devshim.patches"].refresh_from_environ()

    # Re-parented to the runner once the intermediate has exited (which takes it a few ms, while
    # the above is done); only then can the death signal be tied to the runner (PDEATHSIG fires
    # when the parent dies).
    deadline = time.monotonic() + REPARENT_WAIT_S
    while os.getppid() == intermediate and time.monotonic() < deadline:
        time.sleep(0.0005)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != RUNNER:  # the runner died before the death signal was set
        os._exit(137)

    argv = request["argv"]
    module, args = argv[1], argv[2:]  # ["-m", MODULE, ARGS...]: checked by the zygote
    # `python -m` puts the working directory first on sys.path.
    sys.path[0] = os.getcwd()
    sys.argv = [module] + args
    if pytest_config is not None:
        PytestTemplate.use(pytest_config)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = exit_code(e.code)
    except KeyboardInterrupt:
        # As the interpreter does: the default SIGINT disposition, and die of it.
        finish(None)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:  # noqa: BLE001 - uncaught: traceback and 1, as the interpreter
        sys.excepthook(*sys.exc_info())
        code = 1
    finish(code)


def exit_code(code):
    """SystemExit's code as the interpreter turns it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def finish(code):
    """What the interpreter does at exit: wait for non-daemon threads, run atexit handlers,
    flush the standard streams; then leave with code (None: only the first three)."""
    try:
        threading._shutdown()
    except Exception:  # noqa: BLE001, S110 - as at interpreter exit, a failing thread is not fatal
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code is not None:
        os._exit(code)


def fork_child(request, out):
    argv = request.get("argv") or []
    if len(argv) < 2 or argv[0] != "-m":
        return {"error": "only `python -m MODULE ...` commands start warm"}
    if threads_now() != 1:
        quiesce()
    if threads_now() != 1:
        return {"error": f"the zygote holds {threads_now()} threads: no fork"}
    pytest_config = PYTEST_TEMPLATES.for_request(request)
    sys.stdout.flush()
    sys.stderr.flush()
    freeze_heap()  # what the zygote allocated since the last fork: little
    r, w = os.pipe()
    intermediate = os.fork()
    if intermediate == 0:  # intermediate: fork the child, say its pid, leave
        os.close(r)
        try:
            me = os.getpid()  # not os.getppid() in the child: it may have re-parented already
            child = os.fork()
            if child == 0:
                os.close(w)
                try:
                    become_child(request, me, pytest_config)
                except BaseException:  # noqa: BLE001 - setting the child up failed: say why
                    import traceback

                    traceback.print_exc()
                finally:
                    os._exit(1)
            os.setpgid(child, child)
            os.write(w, str(child).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 64):
        data += chunk
    os.close(r)
    os.waitpid(intermediate, 0)
    if not data:
        return {"error": "the fork failed"}
    return {"pid": int(data)}


def main():
    preload = []
    if len(sys.argv) == 3 and sys.argv[1] == "--preload":
        preload = [m for m in sys.argv[2].split(",") if m]
    # Replies go to the runner on a descriptor of their own; fd 1 becomes stderr (the zygote's
    # log) so that nothing a preload prints can be taken for a reply.
    out = os.dup(1)
    os.dup2(2, 1)
    imported = []
    for module in preload:
        # "?torch": imported when it can be; a child that needs it imports it as a cold process
        # would, and fails the same way.
        optional = module.startswith("?")
        name = module.lstrip("?")
        try:
            __import__(name)
            imported.append(name)
        except ImportError:
            if optional:
                continue
            reply(out, {"ready": False, "error": f"preload {name}: {sys.exc_info()[1]}"})
            sys.exit(3)
        except Exception as e:  # noqa: BLE001 - see above; a required one means: start cold
            if optional:
                print(f"devshim_zygote: optional preload {name}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            reply(out, {"ready": False, "error": f"preload {name}: {type(e).__name__}: {e}"})
            sys.exit(3)
        except BaseException as e:  # noqa: BLE001 - any failure of a preload means: start cold
            reply(out, {"ready": False, "error": f"preload {name}: {type(e).__name__}: {e}"})
            sys.exit(3)
    preload = imported
    prepare_framework(imported)
    gc.collect()  # the preloads' garbage, before the heap is frozen for good
    freeze_heap()
    quiesce()
    reply(out, {"ready": True, "pid": os.getpid(), "preloaded": preload, "threads": threads_now()})
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = fork_child(request, out)
        except (ValueError, OSError, KeyError, TypeError) as e:
            answer = {"error": f"{type(e).__name__}: {e}"}
        reply(out, answer)
    # The run is over: leave like an interpreter, so that what the preloads made is cleaned up
    # once (their atexit handlers and weakref finalizers), without tearing down every module.
    finish(0)


if __name__ == "__main__":
    main()
