#include "tests/support/replay_run.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace devshim::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool recapturing() {
  const char* value = std::getenv("DEVSHIM_RECAPTURE");  // NOLINT(concurrency-mt-unsafe)
  return value != nullptr && std::string_view(value) == "1";
}

RunResult replay_runner(const std::vector<std::string>& args,
                        std::map<std::string, std::string> env) {
  std::vector<std::string> argv{REPLAY_RUNNER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  env.emplace("NO_COLOR", "1");
  // The real processes of a recapture import torch: as long as the end-to-end tests allow.
  return run(argv, env, recapturing() ? 300s : 60s);
}

// The suite a recording was made of, as one number: FNV-1a over its files' relative paths and
// contents, in path order, caches left out. A suite edited since its recording no longer replays
// what it would do.
std::string suite_fingerprint(const fs::path& suite) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(suite); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "__pycache__" || name == ".pytest_cache")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      files.push_back(it->path().lexically_relative(suite));
    }
  }
  std::sort(files.begin(), files.end());
  std::uint64_t hash = 14695981039346656037ULL;
  auto add = [&hash](std::string_view bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
  };
  for (const fs::path& f : files) {
    add(f.generic_string());
    add(std::string_view("\0", 1));
    add(read_file(suite / f));
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace

fs::path recording(const std::string& name) { return fs::path(REPLAY_FIXTURES_DIR) / name; }

RunResult replay_run(const std::string& name, const fs::path& out,
                     const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env, const fs::path& source) {
  std::map<std::string, std::string> all = env;
  all["DEVSHIM_REPLAY_OUT"] = out.string();
  const fs::path suite = source.empty() ? fs::path(args.at(0)) : source;
  const fs::path fingerprint = recording(name) / "suite.fnv1a";
  if (recapturing()) {
    fs::remove_all(recording(name));
    all["DEVSHIM_RECORD_TO"] = recording(name).string();
    RunResult result = replay_runner(args, std::move(all));
    write_file(fingerprint, suite_fingerprint(suite) + "\n");
    return result;
  }
  if (!fs::exists(fingerprint) || read_file(fingerprint) != suite_fingerprint(suite) + "\n") {
    ADD_FAILURE() << "the recording " << recording(name) << " was not made of " << suite
                  << " as it is now: record it again (DEVSHIM_RECAPTURE=1, "
                     "tests/runner/fixtures/replay/README.md)";
  }
  all["DEVSHIM_REPLAY_FROM"] = recording(name).string();
  return replay_runner(args, std::move(all));
}

RunResult replay_command(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
  return replay_runner(args, env);
}

}  // namespace devshim::testing
