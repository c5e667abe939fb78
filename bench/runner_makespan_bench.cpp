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
//      compared with the lower bound max(sum / 2, longest) of the durations measured in phase 1;
//      then, with that run's durations recorded, warm (the default) and `--cold` alternately,
//      each against the bound and warm against cold (issue 33: a suite that imports no torch
//      pays nothing for the warm start).
//   3. A second suite of kOverheadFiles files that sleep 0 s, and a suite of one such file:
//      `RUNNER -j 1` against launching the same files directly one after another, without the shim
//      and with it (`RUNNER` in shim mode against direct launches with the shim's environment),
//      best of kOverheadRepeats each.
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
constexpr int kOverheadFiles = 200;
constexpr int kOverheadRepeats = 3;
constexpr int kWarmColdRounds = 2;

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

// Runs the whole `suite` through the runner with `jobs` at once, --no-shim unless `shim`, and
// `extra` options; returns its outcome (wall-clock and CPU time). `tag` names this invocation's
// output folder, and its database unless `db` names one (runs that share a duration history).
// Throws BenchError unless the runner exits 0 (every file of a generated suite passes).
Outcome run_runner(const Tools& t, const GeneratedSuite& suite, int jobs, const std::string& tag,
                   bool shim = false, const std::vector<std::string>& extra = {},
                   const std::string& db = "") {
  const fs::path out = t.work / ("out-" + tag);
  Command c{{t.runner, suite.dir.string(), "-j", std::to_string(jobs), "--db",
             (t.work / ((db.empty() ? tag : db) + ".db")).string(), "--out", out.string()},
            t.work,
            t.env,
            t.work / ("runner-" + tag + ".log")};
  if (!shim) c.argv.emplace_back("--no-shim");
  c.argv.insert(c.argv.end(), extra.begin(), extra.end());
  Outcome o = spawn_and_wait(c);
  require_success(o, fmt::format("runner ({})", tag), c.output);
  return o;
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

  const double first =
      run_runner(t, suite, kMakespanJobs, "makespan", false, {}, "makespan").seconds;
  fmt::print(
      "makespan, first run (runner -j {}, no history): {:.2f} s, lower bound {:.2f} s, ratio "
      "{:.3f} (vs list schedule {:.2f} s: ratio {:.3f})\n",
      kMakespanJobs, first, bound, first / bound, in_order, first / in_order);
  std::fflush(stdout);
  // With the first run's durations recorded (longest first), warm (the default: these files
  // import no torch) and --cold, alternately, best of kWarmColdRounds each.
  double warm = 1e300;
  double cold = 1e300;
  for (int r = 0; r < kWarmColdRounds; ++r) {
    warm = std::min(
        warm, run_runner(t, suite, kMakespanJobs, fmt::format("warm-{}", r), false, {}, "makespan")
                  .seconds);
    cold = std::min(cold, run_runner(t, suite, kMakespanJobs, fmt::format("cold-{}", r), false,
                                     {"--cold"}, "makespan")
                              .seconds);
  }
  fmt::print(
      "makespan with history (runner -j {}, best of {}): warm {:.2f} s = {:.3f} x the bound "
      "(target <= 1.05), --cold {:.2f} s = {:.3f} x the bound; warm / cold {:.3f} (target <= "
      "1.03)\n",
      kMakespanJobs, kWarmColdRounds, warm, warm / bound, cold, cold / bound, warm / cold);
  std::fflush(stdout);
}

// Wall-clock seconds and the runner's own CPU seconds (its children excluded), at their best.
struct Cost {
  double wall = 1e300;
  double own_cpu = 1e300;
  void keep_best(double w, double own) {
    wall = std::min(wall, w);
    own_cpu = std::min(own_cpu, own);
  }
};

double total_seconds(const std::vector<Outcome>& each) {
  double sum = 0;
  for (const Outcome& o : each) sum += o.seconds;
  return sum;
}

// Phase 3: per-file overhead of `runner -j 1` against launching the same files directly one after
// another, without and with the shim (the direct launches then get the shim's environment, so the
// difference is the runner's orchestration, not the shim's own start-up). Two figures, best of
// kOverheadRepeats each: the runner's own CPU time per file (children excluded; the slope between
// the kOverheadFiles-file suite and a one-file suite, so that start-up and reports cancel out) and
// the wall-clock (runner - direct) / files, what the user waits for. The latter includes the
// probes, which import torch and load LibTorch: beside the files on a machine with a free core,
// in the way on a busy one; it varies by some ms per file with the machine's load.
void bench_overhead(const Tools& t, const fs::path& shim_dir) {
  const GeneratedSuite many = write_sleep_suite(t.work / "overhead", "bench-overhead", t.python,
                                                std::vector<double>(kOverheadFiles, 0.0));
  const GeneratedSuite one =
      write_sleep_suite(t.work / "single", "bench-single", t.python, std::vector<double>(1, 0.0));
  const std::vector<std::string> shim_env = shim_environment(t.env, shim_dir);
  // [shim][suite]: suite 0 = many, 1 = one.
  Cost direct[2][2], runner[2][2];
  for (int r = 0; r < kOverheadRepeats; ++r) {
    for (int shim = 0; shim < 2; ++shim) {
      for (int s = 0; s < 2; ++s) {
        const GeneratedSuite& suite = s == 0 ? many : one;
        direct[shim][s].keep_best(
            total_seconds(launch_directly(t, suite, shim ? shim_env : t.env, shim != 0)), 0);
        const Outcome o =
            run_runner(t, suite, 1, fmt::format("overhead-{}-{}-{}", shim, s, r), shim != 0);
        runner[shim][s].keep_best(o.seconds, o.own_cpu_seconds);
      }
    }
  }
  for (int shim = 0; shim < 2; ++shim) {
    const double wall = (runner[shim][0].wall - direct[shim][0].wall) / kOverheadFiles;
    const double own = (runner[shim][0].own_cpu - runner[shim][1].own_cpu) / (kOverheadFiles - 1);
    fmt::print(
        "per-file overhead, {:7}: runner's own CPU {:.2f} ms/file (target <= 3 ms; {:.2f} s for "
        "{} files, {:.2f} s for 1); wall {:+.1f} ms/file (runner -j 1 {:.2f} s vs direct {:.2f} s, "
        "ratio {:.3f})\n",
        shim ? "shim" : "no shim", 1000.0 * own, runner[shim][0].own_cpu, kOverheadFiles,
        runner[shim][1].own_cpu, 1000.0 * wall, runner[shim][0].wall, direct[shim][0].wall,
        runner[shim][0].wall / direct[shim][0].wall);
  }
  fmt::print(
      "one file alone: the runner takes {:+.2f} s (no shim) and {:+.2f} s (shim) more than "
      "launching it; with more files its probes run beside them\n",
      runner[0][1].wall - direct[0][1].wall, runner[1][1].wall - direct[1][1].wall);
  fmt::print(
      "shim start-up, direct launches: {:+.1f} ms/file (shim environment {:.1f} ms/file vs "
      "plain {:.1f} ms/file)\n",
      1000.0 * (direct[1][0].wall - direct[0][0].wall) / kOverheadFiles,
      1000.0 * direct[1][0].wall / kOverheadFiles, 1000.0 * direct[0][0].wall / kOverheadFiles);
}

// The shim the runner uses by default: $DEVSHIM_SHIM_DIR, else the source tree's.
fs::path shim_dir() {
  const char* dir = std::getenv("DEVSHIM_SHIM_DIR");
  return dir != nullptr && *dir != '\0' ? fs::path(dir) : fs::path(DEVSHIM_BENCH_SHIM_DIR);
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
    bench_overhead(t, shim_dir());
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
