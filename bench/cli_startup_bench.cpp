// Benchmark (not a test): the runner's commands that do not need LibTorch must not pay for loading
// it. Measures, in one run, the wall time of
//   runner --version, runner runs --db <database without runs>, runner report --db <the same>
// (expected to exit 2 fast: no run to report) against `devshim-probe --help`, which loads LibTorch
// and does nothing else: the price a command would pay if the runner linked LibTorch.
//
//   cli_startup_bench RUNNER DEVSHIM_PROBE
//
// Prints the median of kRepeats launches of each and the ratio LibTorch load / runner command.
// Exit status 0 when every launch ran, 1 when one could not, 2 on bad usage.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_support.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace {

using namespace devshim::bench;  // NOLINT(google-build-using-namespace)
using Clock = std::chrono::steady_clock;

constexpr int kRepeats = 15;

// Runs argv (argv[0] a path) with its output discarded; returns the exit status, -1 if killed.
int run_quiet(const std::vector<std::string>& argv) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return spawn_and_wait({argv, fs::current_path(), env, "/dev/null"}).exit_code;
}

// Median wall time in milliseconds; nullopt-like -1 when a launch did not exit as expected.
double median_ms(const std::vector<std::string>& argv, int expected_exit) {
  std::vector<double> ms;
  for (int i = 0; i < kRepeats; ++i) {
    auto t0 = Clock::now();
    int rc = run_quiet(argv);
    auto t1 = Clock::now();
    if (rc != expected_exit) return -1;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cli_startup_bench RUNNER DEVSHIM_PROBE\n");
    return 2;
  }
  const std::string runner = fs::absolute(argv[1]).string();
  const std::string probe = fs::absolute(argv[2]).string();
  char tmpl[] = "/tmp/devshim-cli-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string db = std::string(tmpl) + "/results.db";

  struct Case {
    const char* name;
    std::vector<std::string> argv;
    int exit;
  };
  // An empty database with the current schema (a hand-set gap entry creates it).
  if (run_quiet({runner, "gaps", "set", "bench.api", "--note", "cli_startup_bench", "--db", db}) !=
      0) {
    std::fprintf(stderr, "cli_startup_bench: could not create %s\n", db.c_str());
    return 1;
  }
  const std::vector<Case> cases = {
      {"runner --version", {runner, "--version"}, 0},
      {"runner runs", {runner, "runs", "--db", db}, 0},
      {"runner report (no run)", {runner, "report", "--db", db, "-o", tmpl}, 2},
  };
  const double libtorch = median_ms({probe, "--help"}, 0);
  if (libtorch < 0) {
    std::fprintf(stderr, "cli_startup_bench: %s --help failed\n", probe.c_str());
    return 1;
  }
  fmt::print("LibTorch load (devshim-probe --help): {:8.1f} ms median of {}\n", libtorch, kRepeats);
  int rc = 0;
  for (const auto& c : cases) {
    const double t = median_ms(c.argv, c.exit);
    if (t < 0) {
      fmt::print("{:<28} did not exit {}\n", c.name, c.exit);
      rc = 1;
      continue;
    }
    fmt::print("{:<28} {:8.1f} ms   LibTorch load / command = {:.0f}x\n", c.name, t, libtorch / t);
  }
  fs::remove_all(tmpl);
  return rc;
}
