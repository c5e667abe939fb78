// The CUDA path on the runner's command line: tests/e2e/suites/cuda-path with and without the
// shim, its test processes replayed (tests/support/replay_run.h). The tests that took a CUDA path
// are counted and named in every place a person reads (the closing lines, report.md, report.json,
// junit.xml, `runner show`); the cases a device list gains under the shim are new, not renumbered;
// a file that fails to import the same way without the shim is an environment entry of the gap log,
// not a shim gap; two suites sharing an entry in one database each keep their own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"
#include "tests/support/replay_run.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

constexpr const char* kMissing =
    "environment: ModuleNotFoundError: No module named 'devshim_e2e_not_installed'";

class CudaPath : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  // A command that starts no test process.
  testing::RunResult runner(std::vector<std::string> args) {
    args.insert(args.end(), {"--db", db().string()});
    return testing::replay_command(args);
  }
  // A purpose-made suite of tests/e2e/suites/, without and with the shim, into out/<suite>: its
  // recorded processes replayed.
  testing::RunResult differential(const std::string& suite) {
    return testing::replay_run(
        suite, out(suite),
        {(fs::path(E2E_SUITES_DIR) / suite).string(), "--differential", "--out",
         out(suite).string(), "--python", TEST_PYTHON, "-j", "2", "--db", db().string()});
  }
  fs::path out(const std::string& suite) const { return dir_.path() / "out" / suite; }
  nlohmann::json report_json(const std::string& suite) const {
    return nlohmann::json::parse(testing::read_file(out(suite) / "report.json"));
  }
  TempDir dir_;
};

TEST_F(CudaPath, TheTestsThatTookACudaPathAreCountedAndNamed) {
  auto r = differential("cuda-path");
  EXPECT_EQ(r.exit_code, 1) << r.output;  // test_fails_both_ways, test_missing_module.py
  EXPECT_NE(r.output.find("against baseline run 1: 0 regressions (0 failing, 0 lost), 1 unlocked, "
                          "1 new under the shim (1 passes)"),
            std::string::npos)
      << r.output;
  constexpr const char* kHeadline =
      "4 tests took a CUDA path under the shim (device work): 3 passed, 1 failed (1 of them fails "
      "without the shim too), 0 skipped.";
  EXPECT_NE(r.output.find(std::string("runner: ") + kHeadline), std::string::npos) << r.output;

  const auto json = report_json("cuda-path");
  const auto& c = json["cuda_path"];
  EXPECT_EQ(c["tests"], 4) << c.dump(1);
  EXPECT_EQ(c["passed"], 3);
  EXPECT_EQ(c["failed"], 1);
  EXPECT_EQ(c["failed_without_shim"], 1);
  // test_needs_cuda ran where the baseline skipped it, and the shim's record names it too.
  EXPECT_EQ(c["by_reason"],
            (nlohmann::json{{"recorded", 3}, {"in_branch", 0}, {"unskipped", 0}, {"new", 1}}));
  std::set<std::string> on_the_path, off_it;
  for (const auto& f : json["files"]) {
    for (const auto& t : f["cases"]) (t["cuda_path"] ? on_the_path : off_it).insert(t["name"]);
  }
  EXPECT_EQ(on_the_path, (std::set<std::string>{"test_ones[cpu1]", "test_picks_cuda_when_available",
                                                "test_needs_cuda", "test_fails_both_ways"}));
  EXPECT_EQ(off_it.count("test_ones[cpu0]"), 1U);
  EXPECT_EQ(off_it.count("test_cpu_only"), 1U);

  // [cpu0] is the baseline's [cpu], compared; [cpu1] exists only under the shim.
  const auto& d = json["differential"];
  EXPECT_EQ(d["counts"]["new_passed"], 1) << d.dump(1);
  EXPECT_FALSE(d["counts"].contains("renumbered")) << d.dump(1);
  // test_picks_cuda_when_available passed without the shim on the CPU it picked, and with it did
  // device work on CUDA: a CUDA branch that ran and passed, apart from the plainly compatible.
  EXPECT_EQ(d["counts"]["compatible"], 2) << d.dump(1);
  EXPECT_EQ(d["counts"]["cuda_branch_passed"], 1) << d.dump(1);
  EXPECT_EQ(d["new_under_shim"], 1);
  EXPECT_EQ(d["baseline_passed"], 3) << "test_ones[cpu], test_picks_cuda..., test_cpu_only";

  const std::string md = testing::read_file(out("cuda-path") / "report.md");
  EXPECT_NE(md.find(std::string("## CUDA path\n\n") + kHeadline), std::string::npos) << md;
  EXPECT_NE(md.find("### New under the shim\n\n1 test of this run is not in the baseline"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| failed · CUDA path | tests/test\\_devices.py::test\\_fails\\_both\\_ways"),
            std::string::npos)
      << md;
  const std::string html = testing::read_file(out("cuda-path") / "report.html");
  EXPECT_NE(html.find("<section id=\"cuda-path\">"), std::string::npos);
  const std::string junit = testing::read_file(out("cuda-path") / "junit.xml");
  EXPECT_NE(junit.find("<property name=\"devshim.cuda_path\" value=\"true\""), std::string::npos);

  auto show = runner({"show", "latest"});
  EXPECT_NE(show.output.find("tests/test_devices.py::test_fails_both_ways [CUDA path]"),
            std::string::npos)
      << show.output;
  EXPECT_NE(show.output.find(kHeadline), std::string::npos) << show.output;
  auto runs = runner({"runs", "--json"});
  const auto listed = nlohmann::json::parse(runs.output);
  ASSERT_FALSE(listed.empty()) << runs.output;
}

// The file that imports a module absent both ways is the suite's environment: an entry of kind
// environment that says to install the module, listed apart from the shim's gaps, never a
// file_error entry; and a file of no test is not listed as passed.
TEST_F(CudaPath, AnImportErrorWithoutTheShimTooIsEnvironmentNotAShimGap) {
  auto r = differential("cuda-path");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  Store store(db());
  const std::vector<GapEntry> entries = GapLog(store).for_run(2);
  ASSERT_EQ(entries.size(), 1U) << "test_fails_both_ways fails as without the shim: no entry";
  EXPECT_EQ(entries[0].api, kMissing);
  EXPECT_EQ(entries[0].kind, "environment");
  EXPECT_EQ(entries[0].suite, "e2e-cuda-path");
  EXPECT_NE(entries[0].action.find("install it into the suite's interpreter"), std::string::npos)
      << entries[0].action;
  EXPECT_NE(entries[0].action.find("devshim_e2e_not_installed"), std::string::npos);
  EXPECT_EQ(entries[0].action.find("carry"), std::string::npos) << entries[0].action;
  EXPECT_NE(entries[0].why.find("fails without the shim too"), std::string::npos);

  const std::string md = testing::read_file(out("cuda-path") / "report.md");
  EXPECT_EQ(md.find("## Gaps"), std::string::npos) << "no shim gap in this run\n" << md;
  EXPECT_NE(md.find("## Environment\n\nWhat fails the same way without the shim"),
            std::string::npos)
      << md;
  const auto json = report_json("cuda-path");
  EXPECT_TRUE(json["gaps"].empty());
  ASSERT_EQ(json["environment_entries"].size(), 1U);
  EXPECT_EQ(json["environment_entries"][0]["api"], kMissing);
  // test_empty.py reports no test: listed with its status, not among the passed files.
  EXPECT_NE(md.find("| no_tests | test\\_empty.py |"), std::string::npos) << md;
  EXPECT_EQ(md.find("passed file"), std::string::npos) << "no file passed\n" << md;
}

// Two suites whose runs go into one database show the same entry: each suite keeps its own, with
// its own files and severity; `runner gaps` lists both, filters by suite, and `gaps set` asks
// which one is meant.
TEST_F(CudaPath, TwoSuitesSharingAnEntryEachKeepTheirOwn) {
  ASSERT_EQ(differential("cuda-path").exit_code, 1);
  ASSERT_EQ(differential("missing-dependency").exit_code, 1);
  Store store(db());
  GapLog log(store);
  const auto first = log.entry(kMissing, std::string("e2e-cuda-path"));
  const auto second = log.entry(kMissing, std::string("e2e-missing-dependency"));
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  ASSERT_EQ(first->test_list.size(), 1U) << "the second suite's run left the first's entry alone";
  EXPECT_EQ(first->test_list[0].file, "test_missing_module.py");
  EXPECT_EQ(first->last_seen_run, 2);
  EXPECT_EQ(second->files, 2);
  EXPECT_EQ(second->last_seen_run, 4);

  auto all = runner({"gaps"});
  EXPECT_NE(all.output.find("e2e-cuda-path"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("e2e-missing-dependency"), std::string::npos) << all.output;
  auto one = runner({"gaps", "--suite", "e2e-cuda-path"});
  EXPECT_EQ(one.output.find("e2e-missing-dependency"), std::string::npos) << one.output;
  auto show = runner({"gaps", "show", kMissing});
  EXPECT_NE(show.output.find("suite     e2e-cuda-path"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("suite     e2e-missing-dependency"), std::string::npos) << show.output;

  auto ambiguous = runner({"gaps", "set", kMissing, "--note", "ours"});
  EXPECT_EQ(ambiguous.exit_code, 2) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("name one with --suite"), std::string::npos) << ambiguous.output;
  auto set = runner({"gaps", "set", kMissing, "--suite", "e2e-cuda-path", "--note", "ours"});
  EXPECT_EQ(set.exit_code, 0) << set.output;
  EXPECT_EQ(GapLog(store).entry(kMissing, std::string("e2e-cuda-path"))->note, "ours");
  EXPECT_EQ(GapLog(store).entry(kMissing, std::string("e2e-missing-dependency"))->note, "");
}

}  // namespace
}  // namespace devshim
