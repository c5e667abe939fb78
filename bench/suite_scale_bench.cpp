// Benchmark (not a test): a suite of 100,000 test files. Measures, in one run,
//   baseline   `find TESTS -name 'test_*.py' -type f` over the same tree: a bare directory walk;
//   discovery  `runner SUITE --list`: targets resolved, pattern matched, sorted, printed;
//   planning   `runner SUITE`, from its start to the line announcing the run, by which point it has
//              discovered, scheduled, planned every process and recorded the run with one row per
//              file in a fresh database. The run is then interrupted (SIGINT) before it matters.
// and prints each time, the runner's peak memory, and the ratios discovery / baseline and
// planning / baseline.
//
//   suite_scale_bench RUNNER [FILES]      (FILES: 100000 by default)
//
// Exit status 0 when every step ran, 1 when one did not, 2 on bad usage.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace {

using namespace devshim::bench;  // NOLINT(google-build-using-namespace)
using Clock = std::chrono::steady_clock;

constexpr int kFilesPerFolder = 100;

std::vector<std::string> inherited_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

// FILES test files in folders of kFilesPerFolder, plus a few files the pattern must skip.
fs::path make_suite(int files) {
  fs::path dir = make_temp_dir("devshim-scale");
  write_file(dir / "suite.json",
             R"({"name": "scale", "project_root": ".", "tests_dir": "tests",
                 "framework": "unittest", "python": "/bin/true", "timeout_s": 60})");
  const std::string body = "import unittest\n";
  for (int i = 0; i < files; ++i) {
    const fs::path folder = dir / "tests" / fmt::format("pkg{:04}", i / kFilesPerFolder);
    if (i % kFilesPerFolder == 0) {
      fs::create_directories(folder);
      write_file(folder / "helpers.py", body);  // not a test file
    }
    std::ofstream(folder / fmt::format("test_{:03}.py", i % kFilesPerFolder)) << body;
  }
  return dir;
}

// VmHWM of a live process: its peak resident memory so far, in KiB (0 if unknown).
long peak_kib(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// Seconds from start until `needle` appears in `file` (polled every 2 ms); throws after 600 s.
double seconds_until(const Started& p, const fs::path& file, const std::string& needle) {
  for (;;) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find(needle) != std::string::npos) {
      return std::chrono::duration<double>(Clock::now() - p.start).count();
    }
    if (Clock::now() - p.start > std::chrono::seconds(600)) {
      throw BenchError(
          fmt::format("no \"{}\" in {} after 600 s:\n{}", needle, file.string(), tail_of(file)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int run(const std::string& runner, int files) {
  fmt::print("suite_scale_bench: generating {} test files...\n", files);
  std::fflush(stdout);
  const fs::path suite = make_suite(files);
  const fs::path tests = suite / "tests";
  const std::vector<std::string> env = inherited_env();

  const std::string find = find_executable("find");
  if (find.empty()) throw BenchError("find(1) not found in PATH");
  // Warm the page cache of the tree for every measurement alike.
  spawn_and_wait({{find, tests.string(), "-type", "f"}, suite, env, "/dev/null"});
  const Outcome walk = spawn_and_wait(
      {{find, tests.string(), "-name", "test_*.py", "-type", "f"}, suite, env, suite / "find.out"});
  require_success(walk, "find", suite / "find.out");

  const Outcome list =
      spawn_and_wait({{runner, suite.string(), "--list"}, suite, env, suite / "list.out"});
  require_success(list, "runner --list", suite / "list.out");
  std::size_t listed = 0;
  {
    std::ifstream in(suite / "list.out");
    for (std::string line; std::getline(in, line);) ++listed;
  }
  if (listed != static_cast<std::size_t>(files)) {
    throw BenchError(fmt::format("runner --list printed {} files, not {}", listed, files));
  }

  const Started planning = spawn({{runner, suite.string(), "--db", (suite / "results.db").string(),
                                   "--out", (suite / "out").string(), "-j", "1"},
                                  suite,
                                  env,
                                  suite / "run.out"});
  const double planned_s =
      seconds_until(planning, suite / "run.out", fmt::format("{} files of scale", files));
  const long planned_kib = peak_kib(planning.pid);
  ::kill(planning.pid, SIGINT);
  const Outcome interrupted = wait_for(planning);
  if (interrupted.exit_code != 130) {
    throw BenchError(fmt::format("the interrupted run exited {} (signal {}), not 130:\n{}",
                                 interrupted.exit_code, interrupted.signal,
                                 tail_of(suite / "run.out")));
  }

  fmt::print("suite_scale_bench: {} test files in {} folders\n", files,
             (files + kFilesPerFolder - 1) / kFilesPerFolder);
  fmt::print("  baseline   find -name 'test_*.py'     {:8.3f} s\n", walk.seconds);
  fmt::print(
      "  discovery  runner --list              {:8.3f} s  ({:.1f}x the baseline, peak {} MiB)\n",
      list.seconds, list.seconds / walk.seconds, list.max_rss_kib / 1024);
  fmt::print(
      "  planning   runner, start to first file {:8.3f} s  ({:.1f}x the baseline, peak {} MiB)\n",
      planned_s, planned_s / walk.seconds, planned_kib / 1024);
  fmt::print(
      "  (planning: discovery, scheduling, {} process plans, the run and {} file rows "
      "recorded)\n",
      files, files);
  std::error_code ec;
  fs::remove_all(suite, ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: suite_scale_bench RUNNER [FILES]\n");
    return 2;
  }
  const int files = argc == 3 ? std::atoi(argv[2]) : 100'000;
  if (files <= 0) {
    std::fprintf(stderr, "suite_scale_bench: FILES must be a positive number\n");
    return 2;
  }
  try {
    return run(fs::absolute(argv[1]).string(), files);
  } catch (const BenchError& e) {
    std::fprintf(stderr, "suite_scale_bench: %s\n", e.what());
    return 1;
  }
}
