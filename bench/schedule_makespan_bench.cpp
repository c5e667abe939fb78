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

#include "runner/store.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kFiles = 30;
constexpr int kJobs = 2;

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

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw BenchError(fmt::format("cannot write {}", path.string()));
}

// The sleep of file i: most files short (0.25 to 1.5 s, scattered), two long ones last in
// discovery order (7.5 s and 15 s), so that starting files in discovery order leaves one worker
// running the 15 s file alone at the end. Long enough (about 50 s in all) that the runner's own
// start-up and closing (probes, database, reports) weigh a few percent.
double sleep_s(int i) {
  if (i == kFiles - 1) return 15.0;
  if (i == kFiles - 2) return 7.5;
  return 0.25 + 1.25 * ((i * 11) % (kFiles - 2)) / static_cast<double>(kFiles - 3);
}

// Writes DIR/suite.json and DIR/tests/test_NN.py, file i sleeping sleeps[i] seconds in one test.
GeneratedSuite write_suite(const fs::path& dir, const std::string& python,
                           const std::vector<double>& sleeps) {
  fs::create_directories(dir / "tests");
  write_file(dir / "suite.json",
             fmt::format("{{\"name\": \"bench-schedule\", \"project_root\": \".\", "
                         "\"tests_dir\": \"tests\", \"framework\": \"unittest\", "
                         "\"python\": \"{}\", \"timeout_s\": 120}}\n",
                         python));
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

struct Tools {
  std::string runner;
  std::string python;
  std::vector<std::string> env;
  fs::path work;  // the temporary folder: suite, logs, databases
};

// Launches each file directly, one after another, the way the runner would; returns each one's
// wall-clock duration. Throws BenchError if one does not pass.
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
  GeneratedSuite suite = write_suite(t.work / "suite", t.python, sleeps);

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

// A fresh folder under $TMPDIR (or /tmp). Throws BenchError if it cannot be made.
fs::path make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "devshim-schedule-XXXXXX")
          .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw BenchError(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
  }
  return pattern;
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
    t.work = make_temp_dir();
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
