#!/usr/bin/env bash
# The main job: set up, build, run the bundled suite (suites/cuda-idioms) without and with the
# shim (--differential), and show where the results are.
#   ./run.sh [TARGET ...] [runner options]     e.g. ./run.sh test_tensors.py -j 1
# Results accumulate in .devshim/results.db; each run's logs go to .devshim/runs/<suite>/<stamp>/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/setup.sh" --product
build_dir="${DEVSHIM_BUILD_DIR:-$root/build}"
venv="${DEVSHIM_VENV:-$root/.venv}"
export DEVSHIM_DB="${DEVSHIM_DB:-$root/.devshim/results.db}"
export DEVSHIM_OUT="${DEVSHIM_OUT:-$root/.devshim/runs}"
status=0
"$build_dir/runner/runner" "$root/suites/cuda-idioms" --differential --python "$venv/bin/python" "$@" ||
  status=$?
echo
echo "Recent runs (runner runs --db $DEVSHIM_DB):"
"$build_dir/runner/runner" runs --db "$DEVSHIM_DB" -n 5
echo
# Commands started in the checkout find .devshim/results.db by themselves (docs/cli.md).
echo "Next: put the runner on PATH and look at the run (from this checkout, no --db needed):"
echo "  export PATH=\"$build_dir/runner:\$PATH\""
echo "  runner show latest --status failed"
exit "$status"
