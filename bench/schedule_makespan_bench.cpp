// Benchmark (not a test): duration-aware scheduling. How close `runner -j 2` gets to the ideal
// makespan on its first run of a suite (no recorded durations: discovery order) and on its second
// (longest first from the durations the first run recorded), and how evenly `--shard i/2` splits
// the same suite with that history.
//
//   schedule_makespan_bench RUNNER PYTHON [--keep]
//
// RUNNER is the `runner` binary, PYTHON the interpreter the generated suite uses (a path, or a
// name looked up in PATH). --keep leaves the temporary folder in place and prints its path.
//
// Phases, all in one run and on the same machine state:
//   1. A generated unittest suite of kFiles files with known, uneven sleeps, the long ones last in
//      discovery order (the worst case for a runner that does not reorder). Each file is launched
//      directly, one after another, which measures its real duration; they give the lower bound
//      max(sum / 2, longest), and the list schedules in discovery order and longest first.
//   2. `RUNNER SUITE -j 2 --no-shim` with a fresh database: the first run, no history.
//   3. The same command again with that database: the second run, longest first.
//   4. With a copy of that database each, `--shard 1/2` and `--shard 2/2` at -j 1, one after the
//      other (two machines): the sharded makespan is the longer of the two.
//
// Prints each makespan against the lower bound, and against the bound of the durations that run
// recorded for its files (which includes what running two at once costs on this machine);
// target (issue 8): the second run within 1.05 of the lower bound. No threshold fails it. Exit
// status: 0 when every measurement ran, 1 when the runner or a direct launch did not exit 0 (the
// folder is then kept), 2 on bad usage.
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
#include "runner/results/store.h"

namespace {

using namespace devshim::bench;  // NOLINT(google-build-using-namespace)
using Clock = std::chrono::steady_clock;

constexpr int kFiles = 30;
constexpr int kJobs = 2;

// ---------------------------------------------------------------------------------------------
// Generated suites

// The sleep of file i: most files short (0.25 to 1.5 s, scattered), two long ones last in
// discovery order (7.5 s and 15 s), so that starting files in discovery order leaves one worker
// running the 15 s file alone at the end. Long enough (about 50 s in all) that the runner's own
// start-up and closing (probes, database, reports) weigh a few percent.
double sleep_s(int i) {
  if (i == kFiles - 1) return 15.0;
  if (i == kFiles - 2) return 7.5;
  return 0.25 + 1.25 * ((i * 11) % (kFiles - 2)) / static_cast<double>(kFiles - 3);
}

// `RUNNER SUITE --no-shim --db DB --out <tag> extra...`: its wall-clock time. Throws BenchError
// unless it exits 0 (every generated file passes).
double run_runner(const Tools& t, const GeneratedSuite& suite, const fs::path& db,
                  const std::string& tag, const std::vector<std::string>& extra) {
  Command c{{t.runner, suite.dir.string(), "--no-shim", "--db", db.string(), "--out",
             (t.work / ("out-" + tag)).string()},
            t.work,
            t.env,
            t.work / ("runner-" + tag + ".log")};
  c.argv.insert(c.argv.end(), extra.begin(), extra.end());
  Outcome o = spawn_and_wait(c);
  require_success(o, fmt::format("runner ({})", tag), c.output);
  return o.seconds;
}

// The lower bound max(sum / machines, longest) of the durations the newest run of db recorded
// for its files (process start to exit, as they ran: contention with each other, the probes
// and the rest of the machine included).
double recorded_bound_s(const fs::path& db, int machines) {
  devshim::Store store(db);
  auto runs = store.runs(1);
  if (runs.empty()) throw BenchError(fmt::format("{}: no run recorded", db.string()));
  double sum = 0, longest = 0;
  for (const auto& f : store.files(runs[0].id)) {
    sum += f.duration_s;
    longest = std::max(longest, f.duration_s);
  }
  return std::max(sum / machines, longest);
}

// Makespan of list scheduling on `machines`: each job, in the order given, goes to the machine
// that frees up first.
double list_schedule_s(const std::vector<double>& jobs, int machines) {
  std::vector<double> busy_until(machines, 0.0);
  for (double d : jobs) *std::min_element(busy_until.begin(), busy_until.end()) += d;
  return *std::max_element(busy_until.begin(), busy_until.end());
}

void bench(const Tools& t) {
  std::vector<double> sleeps;
  for (int i = 0; i < kFiles; ++i) sleeps.push_back(sleep_s(i));
  GeneratedSuite suite = write_sleep_suite(t.work / "suite", "bench-schedule", t.python, sleeps);

  std::vector<double> direct = run_directly(t, suite);
  const double sum = std::accumulate(direct.begin(), direct.end(), 0.0);
  const double longest = *std::max_element(direct.begin(), direct.end());
  const double bound = std::max(sum / kJobs, longest);
  std::vector<double> sorted = direct;
  std::sort(sorted.rbegin(), sorted.rend());
  fmt::print("suite: {} files, sleeps {:.2f}..{:.2f} s, the longest last in discovery order\n",
             kFiles, *std::min_element(sleeps.begin(), sleeps.end()),
             *std::max_element(sleeps.begin(), sleeps.end()));
  fmt::print("direct, one after another: {:.2f} s\n", sum);
  fmt::print(
      "lower bound max(sum/{}, longest) = max({:.2f}, {:.2f}) = {:.2f} s; list schedules: "
      "discovery order {:.2f} s, longest first {:.2f} s\n",
      kJobs, sum / kJobs, longest, bound, list_schedule_s(direct, kJobs),
      list_schedule_s(sorted, kJobs));
  std::fflush(stdout);

  const fs::path db = t.work / "history.db";
  const std::vector<std::string> jobs{"-j", std::to_string(kJobs)};
  auto report = [&](const char* what, double makespan, double own_bound) {
    fmt::print(
        "{}: makespan {:.2f} s, ratio {:.3f} (vs the bound of its own recorded file "
        "durations {:.2f} s: {:.3f})\n",
        what, makespan, makespan / bound, own_bound, makespan / own_bound);
    std::fflush(stdout);
  };
  const double first = run_runner(t, suite, db, "first", jobs);
  report("first run  (no history, discovery order)", first, recorded_bound_s(db, kJobs));
  // The history every shard plans from, as the first run left it.
  const fs::path shard_db = t.work / "shard-history.db";
  fs::copy_file(db, shard_db, fs::copy_options::overwrite_existing);
  const double second = run_runner(t, suite, db, "second", jobs);
  report("second run (history, longest first)    ", second, recorded_bound_s(db, kJobs));
  fmt::print("target (issue 8): second run ratio <= 1.05\n");

  double slowest = 0;
  std::string each;
  for (int i = 1; i <= kJobs; ++i) {
    const fs::path db_i = t.work / fmt::format("shard-{}.db", i);
    fs::copy_file(shard_db, db_i, fs::copy_options::overwrite_existing);
    const double s = run_runner(t, suite, db_i, fmt::format("shard-{}", i),
                                {"-j", "1", "--shard", fmt::format("{}/{}", i, kJobs)});
    each += fmt::format("{}{:.2f} s", each.empty() ? "" : ", ", s);
    slowest = std::max(slowest, s);
  }
  fmt::print("{} shards at -j 1 (history): {}; makespan {:.2f} s, ratio {:.3f}\n", kJobs, each,
             slowest, slowest / bound);
}

int usage() {
  std::fprintf(stderr, "usage: schedule_makespan_bench RUNNER PYTHON [--keep]\n");
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
    std::fprintf(stderr, "schedule_makespan_bench: runner \"%s\" or python \"%s\" not executable\n",
                 argv[1], argv[2]);
    return usage();
  }
  t.env = baseline_environment();
  int status = 0;
  try {
    t.work = make_temp_dir("devshim-schedule");
    fmt::print("runner: {}\npython: {}\nwork folder: {}\ncores: {}\n", t.runner, t.python,
               t.work.string(), std::thread::hardware_concurrency());
    bench(t);
  } catch (const std::exception& e) {  // BenchError, or a std::filesystem error
    std::fflush(stdout);
    std::fprintf(stderr, "schedule_makespan_bench: %s\n", e.what());
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
