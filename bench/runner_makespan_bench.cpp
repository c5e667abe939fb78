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

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kMakespanFiles = 40;
constexpr int kMakespanJobs = 2;
constexpr int kOverheadFiles = 20;
constexpr int kOverheadRepeats = 3;

// Thrown when a measurement cannot be taken; main() prints it and exits 1.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Processes

// How to start one process: argv[0] must be a path (no PATH lookup happens here).
struct Command {
  std::vector<std::string> argv;
  fs::path cwd;
  std::vector<std::string> env;  // "KEY=VALUE" entries, exactly the child's environment
  fs::path output;               // stdout and stderr go here (truncated first); stdin = /dev/null
};

// How it ended and how long it took, fork to reaped exit.
struct Outcome {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the terminating signal, 0 when it exited
  double seconds = 0;
};

// The child side of spawn_and_wait(): never returns. Only async-signal-safe calls.
[[noreturn]] void exec_child(const Command& c, const std::vector<char*>& argv,
                             const std::vector<char*>& envp) {
  int in = ::open("/dev/null", O_RDONLY);
  int out = ::open(c.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0 ||
      ::chdir(c.cwd.c_str()) != 0) {
    ::_exit(127);
  }
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

// Starts `c`, waits for it, and returns how it ended. Throws BenchError if fork fails.
Outcome spawn_and_wait(const Command& c) {
  std::vector<char*> argv, envp;
  for (const auto& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : c.env) envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);

  const auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) throw BenchError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) exec_child(c, argv, envp);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw BenchError(fmt::format("waitpid: {}", std::strerror(errno)));
  }
  Outcome o;
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

// The last `max_chars` characters of a file, for error messages.
std::string tail_of(const fs::path& file, std::size_t max_chars = 2000) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_chars ? "..." + s.substr(s.size() - max_chars) : s;
}

// Throws BenchError naming `what` unless the process exited 0.
void require_success(const Outcome& o, const std::string& what, const fs::path& output) {
  if (o.exit_code == 0) return;
  std::string how = o.signal != 0 ? fmt::format("was killed by signal {}", o.signal)
                                  : fmt::format("exited with code {}", o.exit_code);
  if (o.exit_code == 127) how += " (127: could not start it)";
  throw BenchError(
      fmt::format("{} {}; its output ({}):\n{}", what, how, output.string(), tail_of(output)));
}

// The environment the runner gives a test file with --no-shim and a suite without pythonpath/env:
// the inherited one, PYTHONUNBUFFERED=1, without ACTIVATE_TORCH_DEVICE and PYTHONSTARTUP. Direct
// launches use it too so that both sides start the same interpreter the same way.
std::vector<std::string> baseline_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (key == "PYTHONUNBUFFERED" || key == "ACTIVATE_TORCH_DEVICE" || key == "PYTHONSTARTUP") {
      continue;
    }
    env.push_back(kv);
  }
  env.emplace_back("PYTHONUNBUFFERED=1");
  return env;
}

// `name` if it holds a '/', else the first executable `name` in PATH; "" if none.
std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::absolute(name).string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate).string();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Generated suites

// One generated suite: its folder and its test files' paths relative to it, in the sorted order
// the runner discovers (and starts) them.
struct GeneratedSuite {
  fs::path dir;
  std::vector<std::string> files;  // "tests/test_NN.py"
};

// The sleep of makespan file i in [0, kMakespanFiles): a deterministic, uneven spread between
// 0.05 s and 1.5 s. Cubing a permuted ramp makes most files short and a few long, and 17 being
// coprime with 40 scatters the long ones through the order (two of them near the end).
double makespan_sleep_s(int i) {
  double f = ((i * 17) % kMakespanFiles) / static_cast<double>(kMakespanFiles - 1);
  return 0.05 + 1.45 * f * f * f;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw BenchError(fmt::format("cannot write {}", path.string()));
}

// Writes DIR/suite.json and DIR/tests/test_NN.py, file i sleeping sleeps[i] seconds in one test.
GeneratedSuite write_suite(const fs::path& dir, const std::string& name, const std::string& python,
                           const std::vector<double>& sleeps) {
  fs::create_directories(dir / "tests");
  write_file(dir / "suite.json",
             fmt::format("{{\"name\": \"{}\", \"project_root\": \".\", \"tests_dir\": \"tests\", "
                         "\"framework\": \"unittest\", \"python\": \"{}\", \"timeout_s\": 120}}\n",
                         name, python));
  GeneratedSuite suite{dir, {}};
  for (std::size_t i = 0; i < sleeps.size(); ++i) {
    std::string rel = fmt::format("tests/test_{:02}.py", i);
    write_file(dir / rel, fmt::format("import time\nimport unittest\n\n\n"
                                      "class Sleep(unittest.TestCase):\n"
                                      "    def test_sleep(self):\n"
                                      "        time.sleep({:.3f})\n",
                                      sleeps[i]));
    suite.files.push_back(rel);
  }
  return suite;
}

// ---------------------------------------------------------------------------------------------
// Measurements

struct Tools {
  std::string runner;
  std::string python;
  std::vector<std::string> env;
  fs::path work;  // the temporary folder: suites, logs, databases
};

// Launches each file of `suite` directly, one after another, the way the runner would; returns
// each file's wall-clock duration. Throws BenchError if one does not pass.
std::vector<double> run_directly(const Tools& t, const GeneratedSuite& suite) {
  std::vector<double> seconds;
  const fs::path logs = t.work / "direct-logs";
  fs::create_directories(logs);
  for (const auto& rel : suite.files) {
    Command c{{t.python, "-m", "unittest", "-v", rel},
              suite.dir,
              t.env,
              logs / (fs::path(rel).filename().string() + ".log")};
    Outcome o = spawn_and_wait(c);
    require_success(o, fmt::format("direct launch of {}", rel), c.output);
    seconds.push_back(o.seconds);
  }
  return seconds;
}

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
  GeneratedSuite suite = write_suite(t.work / "makespan", "bench-makespan", t.python, sleeps);

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
  GeneratedSuite suite = write_suite(t.work / "overhead", "bench-overhead", t.python,
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

// A fresh folder under $TMPDIR (or /tmp). Throws BenchError if it cannot be made.
fs::path make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "devshim-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw BenchError(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
  }
  return pattern;
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
    t.work = make_temp_dir();
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
