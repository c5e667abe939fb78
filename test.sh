#!/usr/bin/env bash
# Sets up, builds and runs every test (C++ and Python, the wheel's installation too) through ctest
# in build/, then the C++ tests again in build-asan/, built with AddressSanitizer +
# UndefinedBehaviorSanitizer (docs/architecture.md#sanitizer-build). Benchmarks, the whole-torch import sweep, the shim's
# check on another torch and the wheel's with torch on the other CPythons (labels benchmark, sweep,
# other-torch, wheel-matrix) are left out.
#   ./test.sh [extra ctest arguments]      e.g. ./test.sh -L e2e   (given to both ctest runs)
# Environment:
#   DEVSHIM_TEST_BUILDS   the builds to test, in this order: "normal asan" (default), "normal", or
#                         "asan" (.ci/run: the Python and lint tests then run in build-asan too)
#   DEVSHIM_BUILD_DIR, DEVSHIM_ASAN_BUILD_DIR   their folders (build, build-asan)
#   DEVSHIM_TIDY_BASE     what counts as new code for clang-tidy (cmake/clang_tidy_check.py)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

normal=0
asan=0
for build in ${DEVSHIM_TEST_BUILDS:-normal asan}; do
  case "$build" in
    normal) normal=1 ;;
    asan) asan=1 ;;
    *) echo "test.sh: DEVSHIM_TEST_BUILDS: no build '$build' (normal, asan)" >&2; exit 2 ;;
  esac
done

# ctest honours one --label-exclude: the caller's, when given, replaces ours.
caller_excludes=0
for arg in "$@"; do
  case "$arg" in -LE | --label-exclude | -LE=* | --label-exclude=*) caller_excludes=1 ;; esac
done
run_ctest() {  # build folder, labels to exclude, caller's arguments
  local dir="$1" exclude=(--label-exclude "$2")
  shift 2
  [ "$caller_excludes" = 1 ] && exclude=()
  (cd "$dir" && ctest --output-on-failure "${exclude[@]}" \
    --parallel "$(nproc 2>/dev/null || sysctl -n hw.ncpu)" "$@")
}

if [ "$normal" = 1 ]; then
  "$root/setup.sh"
  run_ctest "${DEVSHIM_BUILD_DIR:-$root/build}" 'benchmark|sweep|other-torch|wheel-matrix' "$@"
fi
if [ "$asan" = 1 ]; then
  asan_dir="${DEVSHIM_ASAN_BUILD_DIR:-$root/build-asan}"
  DEVSHIM_SANITIZE=1 DEVSHIM_BUILD_DIR="$asan_dir" "$root/setup.sh"
  # After build/'s run, only what runs instrumented code: not pytest of the Python shim, not lint,
  # not the wheel's test (whose wheel is a Release build of its own), not the macOS cross-check (it
  # compiles the same sources with Zig, whatever the build).
  exclude='benchmark|sweep|other-torch|wheel-matrix'
  [ "$normal" = 1 ] && exclude='benchmark|sweep|other-torch|wheel-matrix|python|lint|install|portability'
  run_ctest "$asan_dir" "$exclude" "$@"
fi
