#include "bench/bench_support.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace devshim::bench {

namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

Started spawn(const Command& c) {
  std::vector<char*> argv, envp;
  for (const auto& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : c.env) envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);

  Started p;
  p.start = Clock::now();
  p.pid = ::fork();
  if (p.pid < 0) throw BenchError(fmt::format("fork: {}", std::strerror(errno)));
  if (p.pid == 0) exec_child(c, argv, envp);
  return p;
}

Outcome wait_for(const Started& p) {
  int status = 0;
  rusage usage{};
  while (::wait4(p.pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) throw BenchError(fmt::format("wait4: {}", std::strerror(errno)));
  }
  Outcome o;
  o.seconds = std::chrono::duration<double>(Clock::now() - p.start).count();
  o.max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

Outcome spawn_and_wait(const Command& c) { return wait_for(spawn(c)); }

// The last `max_chars` characters of a file, for error messages.
std::string tail_of(const fs::path& file, std::size_t max_chars) {
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

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw BenchError(fmt::format("cannot write {}", path.string()));
}

fs::path make_temp_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw BenchError(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
  }
  return pattern;
}

GeneratedSuite write_sleep_suite(const fs::path& dir, const std::string& name,
                                 const std::string& python, const std::vector<double>& sleeps) {
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

}  // namespace devshim::bench
