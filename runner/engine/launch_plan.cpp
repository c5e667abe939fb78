#include "runner/engine/launch_plan.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

namespace fs = std::filesystem;

int threads_per_process(int jobs, unsigned cores) {
  return std::max(1, static_cast<int>(cores) / std::max(1, jobs));
}

Environment child_environment(const Suite& suite, const LaunchOptions& options,
                              const Environment& inherited) {
  Environment env = inherited;
  for (const auto& [k, v] : suite.env) env[k] = v;
  if (options.threads > 0) env.try_emplace(kThreadsVar, std::to_string(options.threads));

  std::vector<std::string> path;
  if (options.shim) {
    env[kActivateVar] = "1";
    env[kMpsFallbackVar] = "1";
    path.push_back(options.shim_dir.string());
  } else {
    env.erase(kActivateVar);
  }
  framework_traits(suite.framework).adjust_environment(env);
  env["PYTHONUNBUFFERED"] = "1";
  env["PYTHONFAULTHANDLER"] = "1";
  env.erase("PYTHONSTARTUP");
  for (const auto& p : suite.pythonpath) path.push_back(p.string());
  if (auto it = suite.env.find("PYTHONPATH"); it != suite.env.end() && !it->second.empty()) {
    path.push_back(it->second);
  }
  if (auto it = inherited.find("PYTHONPATH"); it != inherited.end() && !it->second.empty()) {
    path.push_back(it->second);
  }
  std::string joined;
  for (const auto& p : path) {
    if (!joined.empty()) joined += ':';
    joined += p;
  }
  if (joined.empty()) {
    env.erase("PYTHONPATH");
  } else {
    env["PYTHONPATH"] = joined;
  }
  return env;
}

void activate_interpreter_environment(Environment& env, const fs::path& interpreter) {
  const fs::path bin = interpreter.parent_path();
  const fs::path root = bin.parent_path();
  std::error_code ec;
  const char* prefix_var = nullptr;
  if (fs::is_regular_file(root / "pyvenv.cfg", ec)) {
    prefix_var = "VIRTUAL_ENV";
  } else if (fs::is_directory(root / "conda-meta", ec)) {
    prefix_var = "CONDA_PREFIX";
  } else {
    return;
  }
  env[prefix_var] = root.string();
  env.erase("PYTHONHOME");
  std::string& path = env["PATH"];
  const std::string first = bin.string();
  if (path == first || path.starts_with(first + ":")) return;
  path = path.empty() ? first : first + ":" + path;
}

std::vector<std::string> test_command(const Suite& suite, const std::string& python,
                                      const TestFile& file, const fs::path& junit_path) {
  return framework_traits(suite.framework).command(suite, python, file, junit_path);
}

std::string_view warm_start_refusal() {
#if defined(__APPLE__)
  return "macOS: a process forked from one that loaded torch may not use Metal, Accelerate or "
         "CoreFoundation";
#else
  return {};
#endif
}

std::string find_executable(const std::string& name, const Environment& env) {
  if (name.find('/') != std::string::npos) return name;
  auto it = env.find("PATH");
  std::string search = it == env.end() ? "/usr/local/bin:/usr/bin:/bin" : it->second;
  std::stringstream ss(search);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
      return fs::absolute(candidate).string();
    }
  }
  return "";
}

ProcessSpec plan_process(const Suite& suite, const LaunchOptions& options, const Environment& env,
                         const TestFile& file) {
  ProcessSpec spec;
  spec.env = env;
  spec.cwd = suite.project_root;
  spec.locks = locks_of(suite, file.rel_path);
  const FrameworkTraits& traits = framework_traits(suite.framework);
  std::string python;
  if (traits.runs_python()) {
    python = options.python.empty() ? suite.python : options.python;
    const std::string resolved = find_executable(python, env);
    if (!resolved.empty()) python = resolved;
  }
  traits.plan(suite, python, file, options.logs_dir, spec);
  if (!file.keyword.empty()) traits.add_keyword(spec, file.keyword);
  if (!file.tests.empty()) traits.select(spec, traits.test_selectors(suite, file));
  return spec;
}

}  // namespace devshim
