#include "runner/launch_plan.h"

#include <fmt/format.h>
#include <unistd.h>

#include <sstream>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace devshim {

namespace fs = std::filesystem;

Environment inherited_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

Environment child_environment(const Suite& suite, const LaunchOptions& options,
                              const Environment& inherited) {
  Environment env = inherited;
  for (const auto& [k, v] : suite.env) env[k] = v;

  std::vector<std::string> path;
  if (options.shim) {
    env[kActivateVar] = "1";
    env[kMpsFallbackVar] = "1";
    path.push_back(options.shim_dir.string());
  } else {
    env.erase(kActivateVar);
  }
  if (suite.framework == Framework::kGtest) {
    env.erase("GTEST_TOTAL_SHARDS");
    env.erase("GTEST_SHARD_INDEX");
  }
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

std::vector<std::string> test_command(const Suite& suite, const std::string& python,
                                      const TestFile& file, const fs::path& junit_path) {
  if (suite.framework == Framework::kGtest) {
    std::vector<std::string> argv{file.abs_path.string(),
                                  "--gtest_output=xml:" + junit_path.string()};
    argv.insert(argv.end(), suite.args.begin(), suite.args.end());
    return argv;
  }
  const std::string path =
      (fs::path(suite.tests_dir) / file.rel_path).lexically_normal().generic_string();
  std::vector<std::string> argv{python, "-m"};
  switch (suite.framework) {
    case Framework::kUnittest:
      argv.insert(argv.end(), {"unittest", "-v"});
      break;
    case Framework::kPytest:
      argv.insert(argv.end(), {"pytest", "-v", "-rA", "--junitxml=" + junit_path.string(), "-o",
                               "junit_family=xunit1", "-p", "no:cacheprovider"});
      break;
    case Framework::kGtest:
      break;  // above
  }
  argv.insert(argv.end(), suite.args.begin(), suite.args.end());
  argv.push_back(path);
  return argv;
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
  spec.log_path = options.logs_dir / (file.rel_path + ".log");
  if (suite.framework == Framework::kPytest) {
    spec.junit_path = options.logs_dir / (file.rel_path + ".xml");
  }
  if (suite.framework == Framework::kGtest) {
    const std::string base = file.shards > 1 ? fmt::format("{}.shard-{}-of-{}", file.file_rel(),
                                                           file.shard + 1, file.shards)
                                             : file.rel_path;
    spec.log_path = options.logs_dir / (base + ".log");
    spec.junit_path = options.logs_dir / (base + ".xml");
    spec.env.erase("GTEST_TOTAL_SHARDS");
    spec.env.erase("GTEST_SHARD_INDEX");
    if (file.shards > 1) {
      spec.env["GTEST_TOTAL_SHARDS"] = std::to_string(file.shards);
      spec.env["GTEST_SHARD_INDEX"] = std::to_string(file.shard);
    }
    spec.argv = test_command(suite, "", file, spec.junit_path);  // the binary itself
  } else {
    std::string python = options.python.empty() ? suite.python : options.python;
    std::string resolved = find_executable(python, env);
    spec.argv = test_command(suite, resolved.empty() ? python : resolved, file, spec.junit_path);
  }
  return spec;
}

}  // namespace devshim
