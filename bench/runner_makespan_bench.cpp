// Benchmark (not a test): how close `runner -j 2` gets to the ideal makespan, and what the runner
// adds per test file compared with launching the same files directly.
//
//   runner_makespan_bench RUNNER PYTHON [--keep]
//
// RUNNER is the `runner` binary, PYTHON the interpreter the generated suites use (a path, or a
// name looked up in PATH). --keep leaves the temporary folder in place and prints its path.
//
// Phases, all in one run and on the same machine state:
//   1. A generated unittest suite of kMakespanFiles files with known, uneven sleeps. Each file is
//      first launched directly, one after another (`PYTHON -m unittest -v tests/test_NN.py`,
//      cwd = suite folder), which measures its real duration including interpreter start-up.
//   2. `RUNNER SUITE -j 2 --no-shim` over the same suite: its wall-clock time is the makespan,
//      compared with the lower bound max(sum / 2, longest) of the durations measured in phase 1.
//   3. A second suite of kOverheadFiles files that sleep 0 s: `RUNNER -j 1` against launching the
//      same files directly one after another, best of kOverheadRepeats each.
//
// Prints the ratios; no threshold fails it. Exit status: 0 when every measurement ran, 1 when the
// runner or a direct launch did not exit 0 (every generated file passes, so the numbers would be
// meaningless; the folder is then kept for inspection), 2 on bad usage.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"

namespace {

using namespace devshim::bench;  // NOLINT(google-build-using-namespace)
using Clock = std::chrono::steady_clock;

constexpr int kMakespanFiles = 40;
constexpr int kMakespanJobs = 2;
constexpr int kOverheadFiles = 20;
constexpr int kOverheadRepeats = 3;

// ---------------------------------------------------------------------------------------------
// Generated suites

// The sleep of makespan file i in [0, kMakespanFiles): a deterministic, uneven spread between
// 0.05 s and 1.5 s. Cubing a permuted ramp makes most files short and a few long, and 17 being
// coprime with 40 scatters the long ones through the order (two of them near the end).
double makespan_sleep_s(int i) {
  double f = ((i * 17) % kMakespanFiles) / static_cast<double>(kMakespanFiles - 1);
  return 0.05 + 1.45 * f * f * f;
}

// ---------------------------------------------------------------------------------------------
// Measurements

// Runs the whole `suite` through the runner with `jobs` at once and --no-shim; returns its
// wall-clock time. `tag` names this invocation's output folder and database. Throws BenchError
// unless the runner exits 0 (every file of a generated suite passes).
double run_runner(const Tools& t, const GeneratedSuite& suite, int jobs, const std::string& tag) {
  const fs::path out = t.work / ("out-" + tag);
  Command c{{t.runner, suite.dir.string(), "-j", std::to_string(jobs), "--db",
             (t.work / (tag + ".db")).string(), "--out", out.string(), "--no-shim"},
            t.work,
            t.env,
            t.work / ("runner-" + tag + ".log")};
  Outcome o = spawn_and_wait(c);
  require_success(o, fmt::format("runner ({})", tag), c.output);
  return o.seconds;
}

// Makespan of list scheduling on `machines`: each job, in the order given, goes to the machine
// that frees up first. This is what a runner starting files in discovery order can achieve.
double list_schedule_s(const std::vector<double>& jobs, int machines) {
  std::vector<double> busy_until(machines, 0.0);
  for (double d : jobs) *std::min_element(busy_until.begin(), busy_until.end()) += d;
  return *std::max_element(busy_until.begin(), busy_until.end());
}

// Phase 1 and 2: the makespan of `runner -j 2` against max(sum / 2, longest).
void bench_makespan(const Tools& t) {
  std::vector<double> sleeps;
  for (int i = 0; i < kMakespanFiles; ++i) sleeps.push_back(makespan_sleep_s(i));
  GeneratedSuite suite = write_sleep_suite(t.work / "makespan", "bench-makespan", t.python, sleeps);

  std::vector<double> direct = run_directly(t, suite);
  const double sum = std::accumulate(direct.begin(), direct.end(), 0.0);
  const double longest = *std::max_element(direct.begin(), direct.end());
  const double bound = std::max(sum / kMakespanJobs, longest);
  const double in_order = list_schedule_s(direct, kMakespanJobs);
  const double slept = std::accumulate(sleeps.begin(), sleeps.end(), 0.0);

  fmt::print("suite: {} files, sleeps {:.2f}..{:.2f} s, {:.2f} s of sleep in all\n", kMakespanFiles,
             *std::min_element(sleeps.begin(), sleeps.end()),
             *std::max_element(sleeps.begin(), sleeps.end()), slept);
  fmt::print("direct, one after another: {:.2f} s (python start-up and unittest: {:.1f} ms/file)\n",
             sum, 1000.0 * (sum - slept) / kMakespanFiles);
  fmt::print(
      "lower bound max(sum/{}, longest) = max({:.2f}, {:.2f}) = {:.2f} s; "
      "list schedule in discovery order {:.2f} s\n",
      kMakespanJobs, sum / kMakespanJobs, longest, bound, in_order);
  std::fflush(stdout);

  const double makespan = run_runner(t, suite, kMakespanJobs, "makespan");
  fmt::print(
      "makespan (runner -j {}): {:.2f} s, lower bound {:.2f} s, ratio {:.3f} "
      "(vs list schedule {:.2f} s: ratio {:.3f})\n",
      kMakespanJobs, makespan, bound, makespan / bound, in_order, makespan / in_order);
}

// Phase 3: per-file overhead of `runner -j 1` against direct launches, best of a few repeats.
void bench_overhead(const Tools& t) {
  GeneratedSuite suite = write_sleep_suite(t.work / "overhead", "bench-overhead", t.python,
                                           std::vector<double>(kOverheadFiles, 0.0));
  double direct = 1e300, runner = 1e300;
  for (int r = 0; r < kOverheadRepeats; ++r) {
    std::vector<double> each = run_directly(t, suite);
    direct = std::min(direct, std::accumulate(each.begin(), each.end(), 0.0));
    runner = std::min(runner, run_runner(t, suite, 1, fmt::format("overhead-{}", r)));
  }
  fmt::print(
      "per-file overhead: {:.1f} ms (runner -j 1 {} files {:.2f} s vs direct {:.2f} s, "
      "ratio {:.3f}; best of {})\n",
      1000.0 * (runner - direct) / kOverheadFiles, kOverheadFiles, runner, direct, runner / direct,
      kOverheadRepeats);
}

int usage() {
  std::fprintf(stderr, "usage: runner_makespan_bench RUNNER PYTHON [--keep]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && std::string(argv[3]) != "--keep")) return usage();
  const bool keep = argc == 4;
  Tools t;
  t.runner = fs::absolute(argv[1]).string();
  t.python = find_executable(argv[2]);
  if (::access(t.runner.c_str(), X_OK) != 0 || t.python.empty() ||
      ::access(t.python.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "runner_makespan_bench: runner \"%s\" or python \"%s\" not executable\n",
                 argv[1], argv[2]);
    return usage();
  }
  t.env = baseline_environment();
  int status = 0;
  try {
    t.work = make_temp_dir("devshim-bench");
    fmt::print("runner: {}\npython: {}\nwork folder: {}\ncores: {}\n", t.runner, t.python,
               t.work.string(), std::thread::hardware_concurrency());
    bench_makespan(t);
    bench_overhead(t);
  } catch (const std::exception& e) {  // BenchError, or a std::filesystem error
    std::fflush(stdout);
    std::fprintf(stderr, "runner_makespan_bench: %s\n", e.what());
    status = 1;
  }
  if (keep || status != 0) {
    if (!t.work.empty()) fmt::print("kept {}\n", t.work.string());
  } else {
    std::error_code ec;
    fs::remove_all(t.work, ec);
  }
  return status;
}
