"""The import sweep (devshim/sweep.py, ``python -m devshim sweep``): every module imported with
and without the shim in child processes; the modules that fail only with it.

The tool is checked on a purpose-made package whose modules fail only with the shim, crash (a
module, a package), hang, print, fail only after another module or only alone; then the torch
modules that failed to import under the shim before issue 31 are swept for real (the whole of
torch is ctest's torch_import_sweep), and so is bitsandbytes, a library that imports a CUDA
backend once CUDA is available."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SHIM_DIR, child_env

torch = pytest.importorskip("torch")

# Every torch module that failed to import only with the shim before issue 31 (a sweep of torch
# 2.13 with the shim of e747358: TorchScript's TypeError, infer_schema's ValueError).
FAILED_BEFORE = (
    "torch._decomp.decompositions_for_jvp",
    "torch._functorch._activation_offloading.activation_offloading",
    "torch._functorch._activation_offloading.offload_ops",
    "torch.distributed.algorithms._optimizer_overlap",
    "torch.distributed.algorithms._optimizer_overlap.optimizer_overlap",
    "torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook",
    "torch.distributed.optim",
    "torch.distributed.optim.functional_adadelta",
    "torch.distributed.optim.functional_adagrad",
    "torch.distributed.optim.functional_adam",
    "torch.distributed.optim.functional_adamax",
    "torch.distributed.optim.functional_adamw",
    "torch.distributed.optim.functional_rmsprop",
    "torch.distributed.optim.functional_rprop",
    "torch.distributed.optim.functional_sgd",
    "torch.distributed.optim.named_optimizer",
    "torch.distributed.optim.optimizer",
    "torch.distributed.optim.post_localSGD_optimizer",
    "torch.distributed.optim.utils",
    "torch.distributed.optim.zero_redundancy_optimizer",
)


def sweep(*args, cwd=None, extra_path=None):
    done = subprocess.run([sys.executable, "-m", "devshim", "sweep", "--json", *args],
                          env=child_env(extra_path), cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


MODULES = {
    "__init__.py": "",
    "__main__.py": "raise SystemExit('a __main__ module is never imported')",
    "fine.py": "VALUE = 1",
    "noisy.py": "print('{\"module\": \"noisy\", \"error\": \"fake\"}'); import sys;"
                " print('noise', file=sys.stderr)",
    "broken.py": "raise ImportError('broken both ways')",
    "shim_only.py": """
        import os
        if os.environ.get("ACTIVATE_TORCH_DEVICE") == "1":
            raise TypeError("only with the shim")
    """,
    "crashes.py": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "hangs.py": "import time; time.sleep(600)",
    "zz_after_fine.py": """
        import os, sys
        if "sweepkit.fine" in sys.modules and os.environ.get("ACTIVATE_TORCH_DEVICE") == "1":
            raise RuntimeError("only after sweepkit.fine, with the shim")
    """,
    "zz_alone_only.py": """
        import os, sys
        if "sweepkit.fine" not in sys.modules and os.environ.get("ACTIVATE_TORCH_DEVICE") == "1":
            raise RuntimeError("alone, with the shim")
    """,
    "sub/__init__.py": "",
    "sub/leaf.py": "from sweepkit import fine",
    "dies/__init__.py": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "dies/leaf.py": "",
    "notapackage/leaf.py": "",
}


@pytest.fixture
def sweepkit(tmp_path):
    for name, text in MODULES.items():
        path = tmp_path / "sweepkit" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_modules_are_listed_from_files_without_importing(sweepkit):
    listed = subprocess.run(
        [sys.executable, "-c", "import sys; from devshim import sweep; "
                               "print('\\n'.join(sweep.modules_of('sweepkit'))); "
                               "print('IMPORTED' if 'sweepkit' in sys.modules else 'NOT')"],
        env={**os.environ, "PYTHONPATH": f"{SHIM_DIR}{os.pathsep}{sweepkit}"},
        capture_output=True, text=True, check=True).stdout.split()
    assert listed[-1] == "NOT"
    assert listed[:-1] == sorted("sweepkit sweepkit.broken sweepkit.crashes sweepkit.dies "
                                 "sweepkit.dies.leaf sweepkit.fine sweepkit.hangs sweepkit.noisy "
                                 "sweepkit.shim_only sweepkit.sub sweepkit.sub.leaf "
                                 "sweepkit.zz_after_fine sweepkit.zz_alone_only".split())


FAIL_BOTH_WAYS = ["sweepkit.broken", "sweepkit.crashes", "sweepkit.dies", "sweepkit.dies.leaf",
                  "sweepkit.hangs"]


def test_the_sweep_finds_what_fails_only_with_the_shim(sweepkit):
    # Each module alone: zz_alone_only fails (no module of the kit imported before it), and
    # zz_after_fine does not (nothing imported sweepkit.fine before it).
    rc, report = sweep("sweepkit", "--timeout", "5", "--chunk", "20", extra_path=str(sweepkit))
    assert rc == 1
    assert report["counts"] == {"modules": 13, "fail_without_shim": 5, "fail_with_shim": 7,
                                "fail_only_with_shim": 2, "order_dependent": 0}
    assert [(o["module"], o["shimmed"]) for o in report["only_with_shim"]] == [
        ("sweepkit.shim_only", "TypeError: only with the shim"),
        ("sweepkit.zz_alone_only", "RuntimeError: alone, with the shim")]
    assert report["fail_without_shim"] == FAIL_BOTH_WAYS


def test_a_package_that_crashes_fails_every_module_below_it(sweepkit):
    rc, report = sweep("--module", "sweepkit.dies.leaf", "--module", "sweepkit.fine",
                       extra_path=str(sweepkit))
    assert rc == 0 and report["fail_without_shim"] == ["sweepkit.dies.leaf"]
    assert report["counts"]["fail_with_shim"] == 1


def test_together_imports_a_chunk_in_order_and_misses_a_module_failing_alone(sweepkit):
    # The faster way: zz_after_fine fails after sweepkit.fine in its chunk (then not alone:
    # order-dependent), and zz_alone_only passes after it, so it goes unseen.
    rc, report = sweep("sweepkit", "--together", "--timeout", "5", "--chunk", "20",
                       extra_path=str(sweepkit))
    assert rc == 1
    assert report["counts"] == {"modules": 13, "fail_without_shim": 5, "fail_with_shim": 7,
                                "fail_only_with_shim": 1, "order_dependent": 1}
    assert [o["module"] for o in report["only_with_shim"]] == ["sweepkit.shim_only"]
    assert [o["module"] for o in report["order_dependent"]] == ["sweepkit.zz_after_fine"]
    assert report["fail_without_shim"] == FAIL_BOTH_WAYS


def test_a_crash_or_a_hang_costs_only_that_module(sweepkit):
    rc, report = sweep("--module", "sweepkit.crashes", "--module", "sweepkit.hangs",
                       "--module", "sweepkit.noisy", "--module", "sweepkit.sub.leaf",
                       "--timeout", "3", extra_path=str(sweepkit))
    assert rc == 0 and report["counts"]["fail_without_shim"] == 2
    assert report["counts"]["fail_with_shim"] == 2  # noisy and sub.leaf imported both ways


def test_an_unknown_package_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "devshim", "sweep", "no_such_package_here"],
                          env={**os.environ, "PYTHONPATH": str(SHIM_DIR)}, capture_output=True,
                          text=True)
    assert done.returncode == 2 and "no_such_package_here" in done.stderr


def test_torch_modules_that_failed_only_with_the_shim_import_now():
    args = [a for name in FAILED_BEFORE for a in ("--module", name)]
    rc, report = sweep(*args, "--module", "torch.jit", "--module", "torch.export")
    assert report["only_with_shim"] == [] and rc == 0
    assert report["counts"]["fail_with_shim"] == 0, report


# torch's own test helpers that failed to import only with the shim (a sweep of torch.testing
# with expecttest installed, each module in a process of its own: 5 of 112), and the two that
# suites' device-type tests import first. common_cuda builds torch.device("cuda:0") at import and
# asserts that CUDA is not initialised, and that device object counted as using CUDA (torchdata's
# copy of torch's DataLoader tests failed to collect); common_methods_invocations and the modules
# importing it make jiterator functions at import, which raised; jit_utils asks for
# torch._C._cuda_getCompiledVersion once CUDA is available.
TORCH_TEST_HELPERS = (
    "torch.testing._internal.common_cuda",
    "torch.testing._internal.common_device_type",
    "torch.testing._internal.common_methods_invocations",
    "torch.testing._internal.common_modules",
    "torch.testing._internal.common_optimizers",
    "torch.testing._internal.jit_utils",
    "torch.testing._internal.opinfo.definitions.nested",
)


def test_torchs_own_test_helpers_import_with_the_shim():
    # Each alone (the sweep's way): after another module had initialised CUDA, common_cuda would
    # not check.
    args = [a for name in TORCH_TEST_HELPERS for a in ("--module", name)]
    rc, report = sweep(*args)
    assert report["only_with_shim"] == [] and rc == 0, report
    assert report["counts"]["fail_with_shim"] == 0, report


# bitsandbytes (requirements-dev.txt): the quantization library of the Hugging Face stack, which
# picks its CUDA backend at import once torch.cuda.is_available(). Before the masquerade carried
# torch._C._cuda_getCurrentRawStream, every module of it failed to import only with the shim.
QUANTIZE = """
import json, torch
import bitsandbytes.functional as F
torch.manual_seed(0)
x = torch.randn(64, 64, device="{device}")
q, state = F.quantize_4bit(x)
print(json.dumps({{"device": x.device.type, "out": F.dequantize_4bit(q, state).sum().item()}}))
"""


def quantize(device, shim):
    done = subprocess.run([sys.executable, "-c", QUANTIZE.format(device=device)],
                          env=child_env(activate=shim), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


# Looked up, not imported: its import registers operators in this process.
needs_bitsandbytes = pytest.mark.skipif(importlib.util.find_spec("bitsandbytes") is None,
                                        reason="bitsandbytes is not installed")


@needs_bitsandbytes
def test_bitsandbytes_imports_with_the_shim():
    rc, report = sweep("bitsandbytes")
    assert report["only_with_shim"] == [] and rc == 0, report["only_with_shim"]


@needs_bitsandbytes
def test_bitsandbytes_quantizes_a_cuda_tensor_as_it_does_on_the_cpu():
    if torch.cuda.is_available():
        pytest.skip("a real CUDA device: nothing to redirect")
    shimmed, plain = quantize("cuda", shim=True), quantize("cpu", shim=False)
    assert shimmed == plain and shimmed["device"] == "cpu"
