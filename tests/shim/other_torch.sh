#!/usr/bin/env bash
# The Python shim checked on another torch than the project's own (torch 2.13.0, CPU build): its
# pytest suite, conformance, and the import sweep of torch and torchvision, all run with that
# torch. ctest runs it as `shim_other_torch` (label other-torch, left out of test.sh like the
# benchmarks: `cd build && ctest -L other-torch`); docs/evidence.md, "On another torch build", has its figures.
#
# The default is the one torch with a torchvision that imports on this machine kind: PyPI's
# torchvision fails beside the 2.13.0 CPU build ("operator torchvision::nms does not exist"), so a
# suite that needs torchvision runs on torch 2.14.1, a CUDA build, on a machine with no GPU.
#   tests/shim/other_torch.sh [VENV]      VENV: its virtual environment (default build/venv-other-torch)
# Environment:
#   DEVSHIM_OTHER_TORCH   what pip installs there (default "torch==2.14.1 torchvision==0.29.1"); it
#                         must name torch and torchvision (the sweep imports both)
#   DEVSHIM_PYTHON        interpreter that creates the venv (default: python3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${1:-$root/build/venv-other-torch}"
want="${DEVSHIM_OTHER_TORCH:-torch==2.14.1 torchvision==0.29.1} pytest safetensors bitsandbytes==0.50.2"
stamp="$venv/.devshim-other-torch"

if ! [ -x "$venv/bin/python" ] || ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "other_torch: installing $want into $venv" >&2
  rm -rf "$venv"
  "${DEVSHIM_PYTHON:-python3}" -m venv "$venv"
  # shellcheck disable=SC2086  # $want is a list of requirements
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $want
  printf '%s' "$want" >"$stamp"
fi
"$venv/bin/python" -c 'import torch, torchvision; print("other_torch: torch", torch.__version__,
      "torchvision", torchvision.__version__, "CUDA built:", torch.backends.cuda.is_built(),
      "CUDA available:", torch.cuda.is_available())'

export DEVSHIM_SHIM_DIR="$root/shim/python" PYTHONPATH="$root/shim/python"
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/shim" || status=1
"$venv/bin/python" -m devshim conformance || status=1
"$venv/bin/python" -m devshim sweep torch torchvision || status=1
exit "$status"
