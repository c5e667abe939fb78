#!/usr/bin/env bash
# Re-approves the report golden files after an intended change of the rendered output:
# runs the golden tests with DEVSHIM_APPROVE=1 (they write tests/reports/golden/*.approved.*),
# then shows what changed. Review the diff before committing it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${DEVSHIM_BUILD_DIR:-$root/build}"
cmake --build "$build" --target report_tests runner_replay_tests
DEVSHIM_APPROVE=1 "$build/tests/reports/report_tests" --gtest_filter='Golden*'
# The golden report of a real run of a purpose-made suite (its processes replayed).
DEVSHIM_APPROVE=1 "$build/tests/runner/runner_replay_tests" --gtest_filter='*Golden*'
git -C "$root" diff --stat -- tests/reports/golden
