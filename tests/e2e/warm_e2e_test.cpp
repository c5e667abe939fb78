// The warm start (runner/engine/zygote.h) end to end, with the real runner binary: warm and cold
// give the same outcomes on the e2e suites and the bundled suite; a file cannot change what the
// next file sees; a zygote that cannot start, or cannot fork, leaves the run cold and says so.
// (Timeouts, crashes, SIGINT and kill -9 of the runner are the other e2e tests' suites, which run
// warm by default.)
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/e2e_fixture.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class WarmE2E : public E2EFixture {
 protected:
  // The newest run: each file's status and each test's, as "file::class::name".
  struct Outcomes {
    std::map<std::string, std::string> files;
    std::map<std::string, std::string> tests;
    std::map<std::string, long long> redirections;  ///< "api requested->used" -> calls
    json start;
  };
  Outcomes last_run() {
    Store store(db());
    const RunRecord run = store.runs(1).at(0);
    Outcomes o;
    for (const auto& f : store.files(run.id)) {
      o.files[f.path] = f.status ? std::string(to_string(*f.status)) : "not_run";
    }
    for (const auto& c : store.cases(run.id)) {
      o.tests[c.file + "::" + c.test.classname + "::" + c.test.name] = to_string(c.test.status);
    }
    for (const auto& r : store.redirections(run.id)) {
      o.redirections[r.first.api + " " + r.first.requested + "->" + r.first.used] += r.count;
    }
    o.start = json::parse(run.environment).value("start", json());
    return o;
  }
  // Runs suite warm (the default) and cold into out()/warm and out()/cold; returns both.
  std::pair<Outcomes, Outcomes> warm_and_cold(const std::string& suite,
                                              const std::vector<std::string>& extra = {},
                                              const std::string& python = SUITE_PYTHON) {
    auto with = [&](const std::string& folder, bool cold) {
      std::vector<std::string> args = runner_argv(suite, extra, python);
      args.at(5) = (out() / folder).string();  // --out's value
      if (cold) args.push_back("--cold");
      auto r = testing::run(args, env(), std::chrono::seconds(240));
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
      return last_run();
    };
    Outcomes warm = with("warm", false);
    Outcomes cold = with("cold", true);
    return {warm, cold};
  }
};

TEST_F(WarmE2E, WarmAndColdGiveTheSameOutcomesOnTheMixedSuite) {
  const auto [warm, cold] = warm_and_cold("mixed", {"--max-log-mb", "5"});
  EXPECT_EQ(warm.start.value("mode", ""), "warm") << warm.start;
  EXPECT_EQ(cold.start.value("mode", ""), "cold") << cold.start;
  EXPECT_EQ(cold.start.value("why", ""), "--cold");
  EXPECT_EQ(warm.files, cold.files);
  EXPECT_EQ(warm.tests, cold.tests);
  EXPECT_EQ(warm.files.at("test_segv.py"), "crashed");
  EXPECT_EQ(warm.files.at("test_hang.py"), "timeout");
  EXPECT_EQ(warm.files.at("test_flood.py"), "crashed") << "the log limit holds warm too";
  // faulthandler is enabled again in the child: the crash says where it happened.
  EXPECT_NE(testing::read_file(out() / "warm/logs/test_segv.py.log")
                .find("Fatal Python error: Segmentation fault"),
            std::string::npos);
  expect_no_survivors();
}

TEST_F(WarmE2E, AFileSeesWhatAColdStartWouldAndNothingOfTheFileBefore) {
  // -j 1: test_a_mutates runs first, in the same zygote's previous child.
  const auto [warm, cold] = warm_and_cold("warm", {"-j", "1"});
  ASSERT_EQ(warm.start.value("mode", ""), "warm") << warm.start;
  // The suite's files import no torch: neither does its zygote.
  EXPECT_EQ(warm.start["preloaded"], json({"unittest", "warm_state"}));
  EXPECT_EQ(warm.tests, cold.tests);
  EXPECT_EQ(warm.tests.at("test_b_sees_fresh.py::tests.test_b_sees_fresh.SeesFresh::"
                          "test_nothing_leaked_from_another_file"),
            "passed");
  // What the process looks like from inside: argv[0], sys.path[0], cwd, __main__.
  auto startup = [&](const std::string& mode, const std::string& file) {
    const std::string log = testing::read_file(out() / mode / "logs" / (file + ".log"));
    const auto at = log.find("startup ");
    return at == std::string::npos ? log : log.substr(at, log.find('\n', at) - at);
  };
  for (const char* file : {"test_a_mutates.py", "test_b_sees_fresh.py"}) {
    EXPECT_EQ(startup("warm", file), startup("cold", file)) << file;
  }
  EXPECT_NE(startup("warm", "test_a_mutates.py").find("main=unittest"), std::string::npos);
  // Each child draws its own random numbers.
  auto random_line = [&](const std::string& file) {
    const std::string log = testing::read_file(out() / "warm/logs" / (file + ".log"));
    const auto at = log.find("random ");
    return log.substr(at, log.find('\n', at) - at);
  };
  EXPECT_NE(random_line("test_a_mutates.py"), random_line("test_b_sees_fresh.py"));
  // The zygote's heap is frozen (out of the child's collections); the child's own is collected.
  auto frozen = [&](const std::string& mode) {
    const std::string log = testing::read_file(out() / mode / "logs/test_b_sees_fresh.py.log");
    const auto at = log.find("frozen ");
    return at == std::string::npos ? -1 : std::stol(log.substr(at + 7));
  };
  EXPECT_GT(frozen("warm"), 10000);
  EXPECT_EQ(frozen("cold"), 0);
  EXPECT_EQ(warm.tests.at("test_b_sees_fresh.py::tests.test_b_sees_fresh.SeesFresh::"
                          "test_the_collector_frees_what_this_process_made"),
            "passed");
  // A preload's temporary directory belongs to the zygote: the first file's exit leaves it for
  // the next file, and the zygote removes it when the run is over.
  EXPECT_EQ(warm.tests.at("test_b_sees_fresh.py::tests.test_b_sees_fresh.SeesFresh::"
                          "test_what_a_preload_made_outlives_the_file_before"),
            "passed");
  const std::string a_log = testing::read_file(out() / "warm/logs/test_a_mutates.py.log");
  const auto at = a_log.find("workdir ");
  ASSERT_NE(at, std::string::npos) << a_log;
  const fs::path workdir = a_log.substr(at + 8, a_log.find('\n', at) - at - 8);
  EXPECT_FALSE(fs::exists(workdir)) << workdir << " outlived the run";
}

#if defined(DEVSHIM_PLATFORM_LINUX)
TEST_F(WarmE2E, ThePosixPlatformStartsEveryFileColdSaysWhyAndEndsThemAsLinuxDoes) {
  // No subreaper: the runner cannot wait for the zygote's doubly forked children
  // (runner/engine/process_platform.h). The mixed suite's crash, hang, flood and daemon end as
  // on the linux platform.
  auto with = [&](const std::string& platform) {
    std::vector<std::string> args = runner_argv("mixed", {"--max-log-mb", "5"});
    args.at(5) = (out() / platform).string();  // --out's value
    if (platform == "linux") args.push_back("--cold");
    auto environment = env();
    environment["DEVSHIM_PROCESS_PLATFORM"] = platform;
    auto r = testing::run(args, environment, std::chrono::seconds(240));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    if (platform == "posix") {
      EXPECT_NE(r.output.find("runner: warm start unavailable (the posix process platform cannot "
                              "adopt the warm parent's children): every file starts cold"),
                std::string::npos)
          << r.output;
    }
    return last_run();
  };
  const Outcomes posix = with("posix");
  const Outcomes linux_cold = with("linux");
  EXPECT_EQ(posix.start.value("mode", ""), "cold") << posix.start;
  EXPECT_NE(posix.start.value("why", "").find("posix process platform"), std::string::npos);
  EXPECT_EQ(posix.files, linux_cold.files);
  EXPECT_EQ(posix.tests, linux_cold.tests);
  EXPECT_EQ(posix.files.at("test_segv.py"), "crashed");
  EXPECT_EQ(posix.files.at("test_hang.py"), "timeout");
  expect_no_survivors();
}
#endif

TEST_F(WarmE2E, APreloadThatFailsLeavesTheRunColdAndSaysSo) {
  auto r = run_runner("warm/suite-bad-preload.json", {"-j", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // test_fails_as_usual
  EXPECT_NE(r.output.find("runner: warm start unavailable (zygote: preload "
                          "no_such_module_for_devshim: No module named"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("every file starts cold"), std::string::npos);
  const Outcomes o = last_run();
  EXPECT_EQ(o.start.value("mode", ""), "cold");
  EXPECT_NE(o.start.value("why", "").find("no_such_module_for_devshim"), std::string::npos);
  EXPECT_EQ(o.files.at("test_a_mutates.py"), "passed");
  EXPECT_EQ(o.files.at("test_b_sees_fresh.py"), "failed");
  EXPECT_EQ(o.tests.size(), 5U);
  // The zygote had imported warm_state before the failing preload: it left as an interpreter
  // does, removing that preload's temporary directory, rather than being killed at once.
  const std::string zygote_log = testing::read_file(out() / "zygote-shim.log");
  const auto at = zygote_log.find("preload workdir ");
  ASSERT_NE(at, std::string::npos) << zygote_log;
  const fs::path workdir = zygote_log.substr(at + 16, zygote_log.find('\n', at) - at - 16);
  EXPECT_FALSE(fs::exists(workdir)) << workdir << " outlived the failed zygote";
}

TEST_F(WarmE2E, AnOptionalPreloadThatRaisesIsSkippedAndTheRunStaysWarm) {
  auto r = run_runner("warm/suite-optional-preload.json", {"-j", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // test_fails_as_usual
  const Outcomes o = last_run();
  EXPECT_EQ(o.start.value("mode", ""), "warm") << o.start;
  // No file of the suite imports torch: the zygote does not either.
  EXPECT_EQ(o.start["preloaded"], json({"unittest", "warm_state"}));
  EXPECT_NE(testing::read_file(out() / "zygote-shim.log")
                .find("optional preload warm_broken: RuntimeError: broken on purpose"),
            std::string::npos);
  EXPECT_EQ(o.files.at("test_a_mutates.py"), "passed");
}

TEST_F(WarmE2E, AZygoteHoldingAThreadStartsEachFileCold) {
  auto r = run_runner("warm/suite-thread-preload.json", {"-j", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("threads: no fork: starting it cold"), std::string::npos) << r.output;
  const std::string log = testing::read_file(out() / "run.log");
  EXPECT_NE(log.find("Cold start of test_a_mutates.py: zygote: the zygote holds 2 threads"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Cold start of test_b_sees_fresh.py"), std::string::npos);
  const Outcomes o = last_run();
  EXPECT_EQ(o.files.at("test_a_mutates.py"), "passed");
  EXPECT_EQ(o.files.at("test_b_sees_fresh.py"), "failed");
}

TEST_F(WarmE2E, APytestChildStartsFromTheZygotesConfigurationAndSeesWhatAColdStartWould) {
  const auto [warm, cold] = warm_and_cold("warm/suite-pytest.json", {"-j", "1"});
  ASSERT_EQ(warm.start.value("mode", ""), "warm") << warm.start;
  EXPECT_EQ(warm.tests, cold.tests);
  EXPECT_EQ(warm.files.at("test_config_b.py"), "passed");
  auto printed = [&](const std::string& mode, const std::string& file, const std::string& what) {
    const std::string log = testing::read_file(out() / mode / "logs" / (file + ".log"));
    const auto at = log.find("\n" + what + " ");
    return at == std::string::npos ? log : log.substr(at + 1, log.find('\n', at + 1) - at - 1);
  };
  for (const char* file : {"test_config_a.py", "test_config_b.py"}) {
    // Its own arguments (its file, its XML), the ini file, the markers, `-p no:cacheprovider`.
    const std::string config = printed("warm", file, "config");
    EXPECT_EQ(config, printed("cold", file, "config")) << file;
    EXPECT_NE(config.find(std::string("junitxml=") + file + ".xml"), std::string::npos) << config;
    EXPECT_NE(config.find("inipath=pytest.ini"), std::string::npos) << config;
    EXPECT_NE(config.find("cacheprovider=False"), std::string::npos) << config;
    // Made once in the zygote (frozen there) for both files; cold, by the process itself.
    EXPECT_EQ(printed("warm", file, "made"), "made zygote") << file;
    EXPECT_EQ(printed("cold", file, "made"), "made this process") << file;
  }
}

TEST_F(WarmE2E, WarmAndColdGiveTheSameOutcomesOnTheBundledSuite) {
  const auto [warm, cold] = warm_and_cold((fs::path(BUNDLED_SUITES_DIR) / "cuda-idioms").string(),
                                          {"-j", "2"}, TORCH_PYTHON);
  EXPECT_EQ(warm.start.value("mode", ""), "warm") << warm.start;
  EXPECT_EQ(warm.files, cold.files);
  EXPECT_EQ(warm.tests, cold.tests);
  EXPECT_EQ(warm.tests.size(), 127U);
  // The shim, applied in the zygote, records each child's redirections in the child's record.
  EXPECT_FALSE(warm.redirections.empty());
  EXPECT_EQ(warm.redirections, cold.redirections);
}

}  // namespace
}  // namespace devshim
