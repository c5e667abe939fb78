"""A module the warm suite preloads: state a test file may change, which the next file must not
see; and what each process was started with, for the tests to compare warm and cold."""
import os
import sys
import tempfile

marks = []  # test_a appends to it; test_b expects it empty
imported_in = os.getpid()
# A resource the preload owns, removed by a weakref finalizer when its owner exits: warm, the
# zygote, once the run is over; never a child that leaves before the next file needs it.
workdir = tempfile.TemporaryDirectory(prefix="devshim-e2e-warm-")
print(f"preload workdir {workdir.name}", file=sys.stderr)  # for a test to check it is removed


def startup():
    """What a test process looks like from inside, as one line."""
    spec = sys.modules["__main__"].__spec__
    return " ".join([
        f"argv0={os.path.basename(sys.argv[0])}",
        f"path0={sys.path[0]}",
        f"cwd={os.getcwd()}",
        f"var={os.environ.get('E2E_WARM_VAR', '-')}",
        f"main={spec.name if spec else '-'}",
    ])
