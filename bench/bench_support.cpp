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
#include <iterator>
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

namespace {

// User + system seconds of process `pid` itself, children excluded, from /proc/PID/stat (fields 14
// and 15); -1 when it cannot be read. Read while the process is a zombie, they are its final ones.
double own_cpu_seconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // field 3 (state) is the first after ')'
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

Outcome wait_for(const Started& p) {
  // Wait for the exit without reaping, so that the zombie's own CPU time can still be read.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) throw BenchError(fmt::format("waitid: {}", std::strerror(errno)));
  }
  const double own_cpu = own_cpu_seconds(p.pid);
  int status = 0;
  rusage usage{};
  while (::wait4(p.pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) throw BenchError(fmt::format("wait4: {}", std::strerror(errno)));
  }
  Outcome o;
  o.seconds = std::chrono::duration<double>(Clock::now() - p.start).count();
  o.max_rss_kib = usage.ru_maxrss;
  o.own_cpu_seconds = own_cpu;
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
  env.emplace_back("PYTHONFAULTHANDLER=1");
  return env;
}

std::vector<std::string> shim_environment(std::vector<std::string> env, const fs::path& shim_dir) {
  std::string pythonpath = shim_dir.string();
  std::erase_if(env, [&](const std::string& kv) {
    if (kv.starts_with("PYTHONPATH=") && kv.size() > 11) pythonpath += ":" + kv.substr(11);
    return kv.starts_with("PYTHONPATH=") || kv.starts_with("PYTORCH_ENABLE_MPS_FALLBACK=");
  });
  env.emplace_back("ACTIVATE_TORCH_DEVICE=1");
  env.emplace_back("PYTORCH_ENABLE_MPS_FALLBACK=1");
  env.push_back("PYTHONPATH=" + pythonpath);
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
  for (const Outcome& o : launch_directly(t, suite, t.env, false)) seconds.push_back(o.seconds);
  return seconds;
}

std::vector<Outcome> launch_directly(const Tools& t, const GeneratedSuite& suite,
                                     const std::vector<std::string>& env, bool record) {
  std::vector<Outcome> outcomes;
  const fs::path logs = t.work / "direct-logs";
  fs::create_directories(logs);
  for (const auto& rel : suite.files) {
    Command c{{t.python, "-m", "unittest", "-v", rel},
              suite.dir,
              env,
              logs / (fs::path(rel).filename().string() + ".log")};
    if (record) c.env.push_back("TORCHDEVICE_RECORD=" + c.output.string() + ".redirections.json");
    Outcome o = spawn_and_wait(c);
    require_success(o, fmt::format("direct launch of {}", rel), c.output);
    outcomes.push_back(o);
  }
  return outcomes;
}

}  // namespace devshim::bench
