// Nightly operations on the runner's command line, on a purpose-made suite (suites/nightly) whose
// test processes are replayed (tests/support/replay_run.h): the comparison with the previous run
// and --fail-on, any two runs compared after the fact, a night on another torch version, shards
// merged back into the run one machine makes, the holders of a lock in one shard, and runner
// prune. Reruns and the shard variables: tests/e2e/nightly_e2e_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/support/replay_run.h"
#include "tests/support/report_json.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using nlohmann::json;
using testing::find_case;
using testing::TempDir;
namespace fs = std::filesystem;

const fs::path kSuite = fs::path(E2E_SUITES_DIR) / "nightly";

class Nightly : public ::testing::Test {
 protected:
  fs::path db() const { return dir_ / "results.db"; }

  // runner <suite> --out <out> --db <database or db()> --python <python> extra..., with env added,
  // its processes those of the recording "nightly/<recording>".
  testing::RunResult runner(const std::string& recording, const fs::path& out,
                            const std::vector<std::string>& extra,
                            std::map<std::string, std::string> env = {},
                            const fs::path& suite = kSuite, const fs::path& database = {}) {
    std::vector<std::string> args{
        suite.string(), "--db",       (database.empty() ? db() : database).string(),
        "--out",        out.string(), "--python",
        TEST_PYTHON};
    args.insert(args.end(), extra.begin(), extra.end());
    // Nothing from the environment of the test run may shard these runs.
    for (const char* v : {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "JOB_COMPLETION_INDEX",
                          "DEVSHIM_SHARD_TOTAL", "E2E_NIGHT", "E2E_FLAKY_DIR"}) {
      env.emplace(v, "");
    }
    return testing::replay_run("nightly/" + recording, out, args, env, kSuite);
  }
  // A runner command that starts no test process (--list, history, merge, prune, runs, ...).
  testing::RunResult command(const std::vector<std::string>& args,
                             std::map<std::string, std::string> env = {}) {
    for (const char* v :
         {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "JOB_COMPLETION_INDEX", "DEVSHIM_SHARD_TOTAL"}) {
      env.emplace(v, "");
    }
    return testing::replay_command(args, env);
  }
  json report(const fs::path& out) { return json::parse(testing::read_file(out / "report.json")); }
  TempDir dir_;
};

TEST_F(Nightly, EachRunIsComparedWithThePreviousOneAndFailOnDecidesTheExitCode) {
  auto night1 = runner("night1", dir_ / "n1", {});
  ASSERT_EQ(night1.exit_code, 1) << night1.output;  // test_flip fails
  EXPECT_TRUE(report(dir_ / "n1")["previous"].is_null());
  const std::int64_t first = Store(db()).runs(1).at(0).id;

  auto night2 = runner("night2", dir_ / "n2", {}, {{"E2E_NIGHT", "2"}});
  ASSERT_EQ(night2.exit_code, 1) << night2.output;
  json r = report(dir_ / "n2");
  ASSERT_TRUE(r["previous"].is_object()) << r["previous"];
  EXPECT_EQ(r["previous"]["run"], first);
  const json& counts = r["previous"]["counts"];
  EXPECT_EQ(counts["new_failure"], 1) << counts;
  EXPECT_EQ(counts["fixed"], 1) << counts;
  EXPECT_EQ(counts["still_failing"], 1) << counts;
  EXPECT_EQ(counts["flaky"], 0) << counts;
  EXPECT_EQ(find_case(r, "test_flip.py", "test_breaks")["change"], "new_failure");
  EXPECT_EQ(find_case(r, "test_flip.py", "test_heals")["change"], "fixed");
  EXPECT_EQ(find_case(r, "test_flip.py", "test_broken")["change"], "still_failing");
  EXPECT_EQ(find_case(r, "test_stable.py", "test_one")["change"], "unchanged");
  ASSERT_EQ(r["previous"]["new_failures"].size(), 1U);
  EXPECT_EQ(r["previous"]["new_failures"][0]["name"], "test_breaks");
  // The section comes first, before the summary, in Markdown and HTML.
  const std::string md = testing::read_file(dir_ / "n2/report.md");
  EXPECT_NE(md.find("## Changes since run " + std::to_string(first)), std::string::npos) << md;
  EXPECT_LT(md.find("## Changes since run"), md.find("## Summary"));
  const std::string html = testing::read_file(dir_ / "n2/report.html");
  EXPECT_LT(html.find("id=\"previous\""), html.find("id=\"summary\""));
  EXPECT_EQ(Store(db()).runs(1).at(0).previous_run, first);

  // Night 2 again: only still-failing tests, so new-failures is green and any is red.
  auto again = runner("night2", dir_ / "n3", {"--fail-on", "new-failures"}, {{"E2E_NIGHT", "2"}});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  // "run N failed" and exit 0: the next line says why.
  EXPECT_NE(again.output.find("runner: --fail-on new-failures: no test fails that did not in run"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(report(dir_ / "n3")["previous"]["counts"]["new_failure"], 0);
  auto any = runner("night2", dir_ / "n4", {"--fail-on", "any"}, {{"E2E_NIGHT", "2"}});
  EXPECT_EQ(any.exit_code, 1) << any.output;
  // No baseline: regressions behaves like new-failures.
  auto regressions =
      runner("night2", dir_ / "n5", {"--fail-on", "regressions"}, {{"E2E_NIGHT", "2"}});
  EXPECT_EQ(regressions.exit_code, 0) << regressions.output;
  // Back to night 1: test_heals fails again, a new failure.
  auto back = runner("night1", dir_ / "n6", {"--fail-on", "new-failures"});
  EXPECT_EQ(back.exit_code, 1) << back.output;
  // --previous names the run to compare with.
  auto explicit_previous = runner("night1", dir_ / "n7", {"--previous", std::to_string(first)});
  EXPECT_EQ(report(dir_ / "n7")["previous"]["run"], first);
  EXPECT_EQ(report(dir_ / "n7")["previous"]["counts"]["new_failure"], 0);
  // Another set of targets is not comparable.
  auto other = runner("night1-stable", dir_ / "n8", {"test_stable.py"});
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_TRUE(report(dir_ / "n8")["previous"].is_null());
}

TEST_F(Nightly, AnyTwoRunsAreComparedAfterTheFactWithLinksToTheirSource) {
  ASSERT_EQ(runner("night1", dir_ / "n1", {}).exit_code, 1);
  ASSERT_EQ(runner("night2", dir_ / "n2", {}, {{"E2E_NIGHT", "2"}}).exit_code, 1);
  ASSERT_EQ(runner("night1", dir_ / "n3", {}).exit_code, 1);  // night 1 again

  const auto cmp = dir_ / "cmp";
  auto c = command({"compare", "latest~2", "latest~1", "--db", db().string(), "-o", cmp.string()});
  ASSERT_EQ(c.exit_code, 1) << "a regression: --fail-on regressions, the default\n" << c.output;
  const json j = json::parse(testing::read_file(cmp / "compare.json"));
  ASSERT_EQ(j["tests"]["regressed"].size(), 1U) << j["tests"];
  EXPECT_EQ(j["tests"]["regressed"][0]["name"], "test_breaks");
  EXPECT_EQ(j["tests"]["fixed"][0]["name"], "test_heals");
  // The link leads from the folder written to the test's real source line.
  const std::string local = j["tests"]["regressed"][0]["links"]["local"];
  const auto hash = local.find("#L");
  ASSERT_NE(hash, std::string::npos) << local;
  EXPECT_TRUE(std::filesystem::is_regular_file(cmp / local.substr(0, hash))) << local;
  EXPECT_EQ(j["b"]["reports"]["html"], "../n2/report.html");
  EXPECT_NE(testing::read_file(cmp / "compare.html").find("test_breaks"), std::string::npos);

  // Night 3 against night 1 instead of its previous run (night 2): nothing new fails.
  auto a = command({"report", "latest", "--against", "latest~2", "--db", db().string()});
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const json against = report(dir_ / "n3" / fmt::format("against-{}", j["a"]["id"].get<int>()));
  EXPECT_EQ(against["previous"]["chosen"], "against");
  EXPECT_EQ(against["previous"]["counts"]["new_failure"], 0) << against["previous"];
  EXPECT_EQ(report(dir_ / "n3")["previous"]["counts"]["new_failure"], 1)
      << "the run's own report still compares with night 2";
  auto bad = command({"compare", "1", "2", "--format", "md", "--db", db().string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;

  // The three nights as a site: every run's report, the suite's page; a rebuild writes nothing.
  const auto site = dir_ / "site";
  auto s = command({"site", "-o", site.string(), "--db", db().string()});
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find("3 runs; 3 runs rendered, 0 removed"), std::string::npos) << s.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(site / "runs/2/report.html"));
  EXPECT_TRUE(std::filesystem::is_regular_file(site / "suites/e2e-nightly/index.html"));
  EXPECT_TRUE(std::filesystem::is_regular_file(site / "search.html"));
  s = command({"site", "-o", site.string(), "--db", db().string()});
  EXPECT_NE(s.output.find("0 runs rendered, 0 removed, "), std::string::npos) << s.output;
  EXPECT_NE(s.output.find(" test pages, 0 files written"), std::string::npos) << s.output;
  // Published elsewhere: --copy-files brings the logs the reports link to into the site.
  s = command({"site", "-o", site.string(), "--db", db().string(), "--copy-files"});
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_NE(s.output.find("3 runs rendered"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("linked files copied"), std::string::npos) << s.output;
  EXPECT_NE(testing::read_file(site / "runs/2/report.html").find("href=\"../../files/"),
            std::string::npos)
      << "the report links the copies of its logs";
  s = command({"site", "--db", db().string()});
  EXPECT_EQ(s.exit_code, 2) << "-o is required: " << s.output;
}

// The probe names torch's version only as the run goes; the run is then compared with a night of
// the same versions, never silently with one of other versions.
TEST_F(Nightly, ANightOnAnotherTorchVersionIsComparedWithNoneAndSaysWithWhich) {
  ASSERT_EQ(runner("night1", dir_ / "n1", {}).exit_code, 1);
  const std::int64_t first = Store(db()).runs(1).at(0).id;
  {
    sql::Database edit(db());
    edit.exec("UPDATE runs SET environment = json_set(environment, '$.torch', '1.0.0-older')");
  }
  ASSERT_EQ(runner("night2", dir_ / "n2", {}, {{"E2E_NIGHT", "2"}}).exit_code, 1);
  const std::int64_t second = Store(db()).runs(1).at(0).id;
  EXPECT_EQ(Store(db()).run(second)->previous_run, 0);
  const json r = report(dir_ / "n2");
  EXPECT_TRUE(r["previous"].is_null()) << r["previous"];
  EXPECT_EQ(r["previous_other_versions"]["run"], first) << r["previous_other_versions"];
  EXPECT_EQ(r["previous_other_versions"]["torch"], "1.0.0-older");
  EXPECT_NE(testing::read_file(dir_ / "n2/report.md").find(fmt::format("--against {}`", first)),
            std::string::npos);

  ASSERT_EQ(runner("night1", dir_ / "n3", {}).exit_code, 1);
  EXPECT_EQ(report(dir_ / "n3")["previous"]["run"], second) << "the same versions";
}

// Normalises what differs between two runs of the same files: ids, times, the command line,
// the number of workers, how long the warm start took.
json comparable(json r) {
  for (const char* k : {"id", "started_at", "finished_at", "duration_s", "command_line", "jobs"}) {
    r["run"].erase(k);
  }
  if (r["run"]["environment"].contains("start")) r["run"]["environment"]["start"].erase("ready_s");
  for (auto& f : r["files"]) {
    f["duration_s"] = 0;
    for (auto& c : f["cases"]) {
      c["duration_s"] = 0;
      c.erase("rerun");  // each run's own command line and database
    }
  }
  return r;
}

TEST_F(Nightly, ShardsMergedGiveTheReportOfOneMachine) {
  const fs::path one = dir_ / "one", s1 = dir_ / "s1", s2 = dir_ / "s2";
  auto single = runner("night1", one, {"-j", "2"}, {}, kSuite, one / "results.db");
  ASSERT_EQ(single.exit_code, 1) << single.output;
  std::set<std::string> seen;
  for (const auto& [shard, dir] : {std::pair{"1/2", s1}, std::pair{"2/2", s2}}) {
    auto r = runner(fmt::format("night1-shard{}", shard[0]), dir, {"--shard", shard}, {}, kSuite,
                    dir / "results.db");
    EXPECT_LE(r.exit_code, 1) << r.output;
    Store store(dir / "results.db");
    const RunRecord run = store.runs(1).at(0);
    EXPECT_EQ(run.shard, shard);
    EXPECT_EQ(run.shard_plan.size(), 16U);
    for (const auto& f : store.files(run.id)) {
      EXPECT_TRUE(seen.insert(f.path).second) << f.path << " ran in two shards";
    }
  }
  EXPECT_EQ(seen.size(), 4U);

  const fs::path all = dir_ / "all.db", merged = dir_ / "merged";
  auto m = command({"merge", (s1 / "results.db").string(), (s2 / "results.db").string(), "--into",
                    all.string(), "--out", merged.string()});
  ASSERT_EQ(m.exit_code, 1) << m.output;  // like the run: test_flip fails
  EXPECT_NE(m.output.find("merged 2 runs of e2e-nightly (1/2, 2/2)"), std::string::npos)
      << m.output;
  EXPECT_TRUE(fs::exists(merged / "logs/test_flip.py.log"));
  EXPECT_TRUE(fs::exists(merged / "report.md"));
  EXPECT_EQ(comparable(report(merged)), comparable(report(one)));
  {
    sql::Database check(all);
    sql::Statement fk(check, "PRAGMA foreign_key_check");
    EXPECT_FALSE(fk.step()) << "dangling reference in the merged database";
  }
  // --fail-on applies to the merged run as to a run. -o, the old name of --into, still works
  // and says so.
  auto again =
      command({"merge", (s1 / "results.db").string(), (s2 / "results.db").string(), "-o",
               all.string(), "--out", (dir_ / "merged2").string(), "--fail-on", "new-failures"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("merge -o/--output DB is deprecated: say --into DB"),
            std::string::npos)
      << again.output;
  auto neither = command({"merge", (s1 / "results.db").string()});
  EXPECT_EQ(neither.exit_code, 2) << neither.output;
  EXPECT_NE(neither.output.find("give --into DB"), std::string::npos) << neither.output;
  EXPECT_EQ(report(dir_ / "merged2")["previous"]["counts"]["still_failing"], 2);

  // What does not belong together is refused.
  auto mixed = command({"merge", (s1 / "results.db").string(), (one / "results.db").string(),
                        "--into", (dir_ / "bad.db").string()});
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  auto twice = command({"merge", (s1 / "results.db").string(), (s1 / "results.db").string(),
                        "--into", (dir_ / "bad.db").string()});
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("same shard"), std::string::npos) << twice.output;
}

TEST_F(Nightly, TheHoldersOfALockAreInOneShard) {
  // Without history the four files are split round robin in path order, test_flaky.py and
  // test_flip.py apart; their lock keeps them together, and the run takes what --list lists.
  const fs::path suite = dir_ / "locked/suite.json";
  testing::write_file(suite, json{{"name", "e2e-nightly"},
                                  {"project_root", kSuite.string()},
                                  {"tests_dir", "tests"},
                                  {"framework", "unittest"},
                                  {"locks", {{"port", {"test_flaky.py", "test_flip.py"}}}}}
                                 .dump());
  auto list = [&](const fs::path& suite, const char* shard) {
    return command({suite.string(), "--db", db().string(), "--python", TEST_PYTHON, "--list",
                    "--shard", shard});
  };
  auto unlocked = list(kSuite, "1/2");
  ASSERT_EQ(unlocked.exit_code, 0) << unlocked.output;
  EXPECT_EQ(unlocked.output, "sub/test_skip.py\ntest_flip.py\n");
  auto first = list(suite, "1/2");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, "test_flaky.py\ntest_flip.py\n");
  EXPECT_EQ(list(suite, "2/2").output, "sub/test_skip.py\ntest_stable.py\n");

  auto run = runner("locked-shard1", dir_ / "s1", {"--shard", "1/2"}, {}, suite);
  EXPECT_EQ(run.exit_code, 1) << run.output;  // test_flip fails
  Store store(db());
  std::string ran;
  for (const auto& f : store.files(store.runs(1).at(0).id)) ran += f.path + "\n";
  EXPECT_EQ(ran, first.output);
}

TEST_F(Nightly, PruneDeletesOldRunsWithTheirLogs) {
  for (const char* out : {"p1", "p2", "p3"}) {
    ASSERT_LE(
        runner("night1-stable-flip", dir_ / out, {"test_stable.py", "test_flip.py"}).exit_code, 1);
  }
  ASSERT_TRUE(fs::exists(dir_ / "p1/logs/test_flip.py.log"));
  auto dry = command({"prune", "--keep", "1", "--dry-run", "--db", db().string()});
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_EQ(Store(db()).runs(10).size(), 3U);
  auto p = command({"prune", "--keep", "1", "--db", db().string()});
  EXPECT_EQ(p.exit_code, 0) << p.output;
  auto runs = Store(db()).runs(10);
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(fs::path(runs[0].out_dir), dir_ / "p3");
  EXPECT_FALSE(fs::exists(dir_ / "p1")) << "its logs, reports and folder go with the run";
  EXPECT_FALSE(fs::exists(dir_ / "p2"));
  EXPECT_TRUE(fs::exists(dir_ / "p3/logs/test_flip.py.log"));
  sql::Database check(db());
  sql::Statement fk(check, "PRAGMA foreign_key_check");
  EXPECT_FALSE(fk.step()) << "dangling reference after prune";
  sql::Statement orphans(check,
                         "SELECT count(*) FROM signatures WHERE signature NOT IN "
                         "(SELECT signature FROM cases WHERE signature IS NOT NULL)");
  ASSERT_TRUE(orphans.step());
  EXPECT_EQ(orphans.int64(0), 0);
  auto none = command({"prune", "--db", db().string()});
  EXPECT_EQ(none.exit_code, 2) << "neither --keep nor --older-than";
}

}  // namespace
}  // namespace devshim
