#!/usr/bin/env bash
# Sets up, builds and runs every test (C++ and Python) through ctest.
#   ./test.sh [extra ctest arguments]      e.g. ./test.sh -L e2e
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/setup.sh"
build_dir="${DEVSHIM_BUILD_DIR:-$root/build}"
cd "$build_dir"
ctest --output-on-failure --label-exclude benchmark --parallel "$(nproc)" "$@"
