#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time and prints, per target, what libFuzzer's final
# stats say (executions, exec/s, corpus size) and how many crashes it saved.
#   fuzz/run_fuzzers.sh [BUILD_FUZZ_DIR [SECONDS [TARGET...]]]
#   defaults: build-fuzz/fuzz, 60 s, every target
# Seeds are read from fuzz/corpus/<target>/ (never written); inputs found to grow coverage go to
# a scratch corpus under $FUZZ_WORK (default: a temporary folder); crashes, leaks and timeouts are
# saved to fuzz/regressions/<target>/ (commit them: the regression test replays them).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build-fuzz/fuzz}"
seconds="${2:-60}"
shift $(($# > 2 ? 2 : $#))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(unittest pytest_text pytest_junit gtest_xml gtest_text traceback import_log suite report)
fi
work="${FUZZ_WORK:-$(mktemp -d -t devshim-fuzz.XXXXXX)}"
status=0
printf '%-14s %12s %10s %8s %8s\n' target executions exec/s corpus crashes
for t in "${targets[@]}"; do
  bin="$build/${t}_fuzz"
  if [ ! -x "$bin" ]; then
    echo "$t: $bin not built (cmake --build build-fuzz --target fuzzers)" >&2
    status=1
    continue
  fi
  mkdir -p "$work/$t" "$here/regressions/$t"
  before=$(find "$here/regressions/$t" -type f | wc -l)
  log="$work/$t.log"
  # -fork would survive crashes, but its stats are per child; one process, stopping at the first
  # crash, keeps the figures exact. -timeout: one input taking longer than 10 s is a hang.
  "$bin" "$work/$t" "$here/corpus/$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$here/regressions/$t/" >"$log" 2>&1
  rc=$?
  after=$(find "$here/regressions/$t" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(sed -n 's/.*DONE .*corp: \([0-9]*\).*/\1/p' "$log" | tail -1)  # seeds included
  printf '%-14s %12s %10s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$((after - before))"
  if [ "$rc" -ne 0 ]; then
    echo "  $t stopped with status $rc: see $log" >&2
    grep -m3 -E 'ERROR|check failed|runtime error' "$log" | sed 's/^/  /' >&2
    status=1
  fi
  rmdir "$here/regressions/$t" 2>/dev/null || true
done
echo "work folder (logs, grown corpora): $work"
exit $status
