// The fixture of the end-to-end tests that run the real runner binary on the purpose-made suites
// (tests/e2e/suites): a temporary folder with the database, the output folder and the folder
// where suites' processes write their pids.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {

inline const std::filesystem::path kSuites = E2E_SUITES_DIR;

inline constexpr const char* kSetpriv = "/usr/bin/setpriv";

class E2EFixture : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(pids()); }
  std::filesystem::path pids() const { return dir_ / "pids"; }
  std::filesystem::path db() const { return dir_ / "results.db"; }
  std::filesystem::path out() const { return dir_ / "out"; }

  /// The runner on `suite` (a folder of tests/e2e/suites, or an absolute path) with this test's
  /// database and output folder, run by `python`: SUITE_PYTHON, which has no torch, or
  /// TORCH_PYTHON for a suite that imports torch (tests/e2e/requirements.txt).
  std::vector<std::string> runner_argv(const std::string& suite,
                                       const std::vector<std::string>& extra,
                                       const std::string& python = SUITE_PYTHON) const {
    return runner_argv_in(dir_.path(), suite, extra, python);
  }
  /// The same with the database and output folder in `folder` (results.db, out/), for runs side
  /// by side in one test.
  static std::vector<std::string> runner_argv_in(const std::filesystem::path& folder,
                                                 const std::string& suite,
                                                 const std::vector<std::string>& extra,
                                                 const std::string& python = SUITE_PYTHON) {
    std::vector<std::string> argv{
        RUNNER_PATH, (kSuites / suite).string(), "--db",     (folder / "results.db").string(),
        "--out",     (folder / "out").string(),  "--python", python};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  std::map<std::string, std::string> env() const {
    return {{"E2E_PID_DIR", pids().string()}, {"NO_COLOR", "1"}};
  }
  testing::RunResult run_runner(const std::string& suite, const std::vector<std::string>& extra) {
    return testing::run(runner_argv(suite, extra), env(), std::chrono::seconds(100));
  }
  std::map<std::string, FileRecord> files_of_last_run() {
    Store store(db());
    auto runs = store.runs(1);
    EXPECT_EQ(runs.size(), 1U);
    std::map<std::string, FileRecord> out;
    if (runs.empty()) return out;
    for (auto& f : store.files(runs[0].id)) out[f.path] = f;
    return out;
  }
  /// The argv prefix that runs a command as "nobody" when this test runs as root (root reads and
  /// writes whatever the mode bits say), else nothing. Root's temporary folder is opened to others
  /// so that the command can reach what it is given.
  std::vector<std::string> as_unprivileged_user() {
    if (::geteuid() != 0) return {};
    EXPECT_EQ(::access(kSetpriv, X_OK), 0) << "setpriv (util-linux) is needed as root";
    EXPECT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    return {kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  }
  void expect_no_survivors() {
    for (pid_t pid : testing::pids_in(pids())) {
      EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(pid); },
                                      std::chrono::seconds(3)))
          << "process " << pid << " of the suite outlived the run";
    }
  }
  testing::TempDir dir_;
};

}  // namespace devshim
