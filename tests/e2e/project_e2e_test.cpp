// `runner PATH` on a project without a suite file, and `runner init` (issue 71): each inference
// shown on a purpose-made project by the real runner, from an activated virtual environment
// (the end-to-end tests' interpreter) with no --python; the interpreter checked before anything
// runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

#include "runner/results/store.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/report_json.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

constexpr const char* kTwoTests = "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n";

class ProjectE2E : public E2EFixture {
 protected:
  /// The virtual environment SUITE_PYTHON belongs to, activated.
  static fs::path venv() { return fs::path(SUITE_PYTHON).parent_path().parent_path(); }
  std::map<std::string, std::string> project_env() const {
    auto e = env();
    e["VIRTUAL_ENV"] = venv().string();
    e["CONDA_PREFIX"] = "";
    return e;
  }
  fs::path project(const std::string& name, const std::map<std::string, std::string>& files) {
    const fs::path root = dir_ / name;
    fs::create_directories(root);
    for (const auto& [path, text] : files) write_file(root / path, text);
    return root;
  }
  /// `runner args... --db --out -j 2` with the activated environment (and env's changes).
  testing::RunResult runner(const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& more_env = {}) {
    std::vector<std::string> argv{RUNNER_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const std::string& a : {std::string("--db"), db().string(), std::string("--out"),
                                 out().string(), std::string("-j"), std::string("2")}) {
      argv.push_back(a);
    }
    auto e = project_env();
    for (const auto& [k, v] : more_env) e[k] = v;
    return testing::run(argv, e, std::chrono::seconds(100));
  }
  void git(const fs::path& root, const std::vector<std::string>& args) {
    std::vector<std::string> argv{
        "git", "-C", root.string(), "-c", "user.name=t", "-c", "user.email=t@example.org"};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(testing::run(argv).exit_code, 0);
  }
  RunRecord last_run() {
    Store store(db(), Store::Purpose::kRead);
    return store.runs(1).at(0);
  }
  std::map<std::string, int> passed_by_file(std::int64_t run) {
    Store store(db(), Store::Purpose::kRead);
    std::map<std::string, int> out;
    for (const auto& c : store.cases(run))
      out[c.file] += c.test.status == CaseStatus::kPassed ? 1 : 0;
    return out;
  }
  static bool says(const testing::RunResult& r, const std::string& text) {
    return r.output.find(text) != std::string::npos;
  }
};

TEST_F(ProjectE2E, APytestProjectConfiguredInPyprojectTomlRunsAsConfigured) {
  const fs::path root = project(
      "configured", {{"pyproject.toml",
                      "[tool.pytest.ini_options]\ntestpaths = [\"spec\"]\n"
                      "python_files = [\"check_*.py\"]\n"},
                     {"spec/check_a.py", kTwoTests},
                     {"spec/test_not_a_check.py", "def test_x():\n    raise SystemExit(3)\n"},
                     {"tests/test_elsewhere.py", "def test_x():\n    raise SystemExit(3)\n"}});
  const auto r = runner({root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("runner: no suite file: inferred"), 0U)
      << "what was inferred comes first:\n"
      << r.output;
  EXPECT_TRUE(says(r, "runner:   project_root  " + root.string() +
                          "  (the nearest folder holding pyproject.toml)"))
      << r.output;
  EXPECT_TRUE(says(r,
                   "runner:   tests_dir     spec  (testpaths of pyproject.toml "
                   "[tool.pytest.ini_options])"))
      << r.output;
  EXPECT_TRUE(says(r, "runner:   framework     pytest  (pyproject.toml [tool.pytest.ini_options])"))
      << r.output;
  EXPECT_TRUE(says(r,
                   "runner:   pattern       check_*.py  (python_files of pyproject.toml "
                   "[tool.pytest.ini_options])"))
      << r.output;
  EXPECT_TRUE(says(r, "runner:   python        " + (venv() / "bin/python").string() +
                          "  ($VIRTUAL_ENV, the activated virtual environment)"))
      << r.output;
  EXPECT_TRUE(says(r, "runner: to keep these and edit them: runner init " + root.string()))
      << r.output;
  const RunRecord run = last_run();
  EXPECT_EQ(run.suite, "configured");
  EXPECT_EQ(run.framework, "pytest");
  EXPECT_EQ(run.suite_file, (root / "spec").string());
  EXPECT_EQ(passed_by_file(run.id), (std::map<std::string, int>{{"check_a.py", 2}}));
}

TEST_F(ProjectE2E, PytestIniSetupCfgAndToxIniConfigureItToo) {
  for (const auto& [file, text] : std::map<std::string, std::string>{
           {"pytest.ini", "[pytest]\npython_files = check_*.py\n"},
           {"setup.cfg", "[tool:pytest]\npython_files = check_*.py\n"},
           {"tox.ini", "[tox]\n[pytest]\npython_files = check_*.py\n"}}) {
    const std::string name = "with-" + fs::path(file).stem().string();
    const fs::path root = project(name, {{file, text},
                                         {"tests/check_a.py", kTwoTests},
                                         {"tests/test_b.py", "raise SystemExit(3)\n"}});
    const auto r = runner({root.string()});
    ASSERT_EQ(r.exit_code, 0) << file << ": " << r.output;
    EXPECT_TRUE(says(r, "pattern       check_*.py  (python_files of " + file)) << r.output;
    EXPECT_TRUE(says(r, "tests_dir     tests  (the root's tests/ folder)")) << r.output;
    EXPECT_EQ(last_run().suite, name);
    EXPECT_EQ(passed_by_file(last_run().id), (std::map<std::string, int>{{"check_a.py", 2}}));
  }
}

TEST_F(ProjectE2E, SeveralTestpathsRunEachOfThemAndNothingElse) {
  const fs::path root = project("paths", {{"pytest.ini", "[pytest]\ntestpaths = t/unit t/integ\n"},
                                          {"t/unit/test_a.py", kTwoTests},
                                          {"t/integ/test_b.py", kTwoTests},
                                          {"t/slow/test_c.py", "raise SystemExit(3)\n"}});
  const auto r = runner({root.string(), "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(says(r, "runner:   targets       unit, integ  (testpaths of pytest.ini [pytest])"))
      << r.output;
  EXPECT_TRUE(says(r, "integ/test_b.py\nunit/test_a.py\n")) << r.output;
  EXPECT_FALSE(says(r, "slow")) << r.output;
}

TEST_F(ProjectE2E, ASrcLayoutNotInstalledIsOnThePath) {
  const fs::path root = project(
      "srclayout", {{"pyproject.toml", "[project]\nname = \"pkg\"\n"},
                    {"src/pkg/__init__.py", "def answer():\n    return 42\n"},
                    {"tests/test_pkg.py",
                     "import unittest\n\nimport pkg\n\n\nclass Pkg(unittest.TestCase):\n"
                     "    def test_answer(self):\n        self.assertEqual(pkg.answer(), 42)\n"}});
  const auto r = runner({root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(says(r, "runner:   pythonpath    src  (src/pkg not installed in " +
                          (venv() / "bin/python").string() + ")"))
      << r.output;
  EXPECT_TRUE(says(r, "framework     unittest")) << "no pytest anywhere: " << r.output;
  EXPECT_EQ(passed_by_file(last_run().id), (std::map<std::string, int>{{"test_pkg.py", 1}}));
}

TEST_F(ProjectE2E, AUnittestProjectWithATestFolderAndNoRemote) {
  const fs::path root = project(
      "plain", {{"setup.py", "from setuptools import setup\nsetup()\n"},
                {"test/__init__.py", ""},
                {"test/utils.py", "import pytest  # a helper's import is not a test's\n"},
                {"test/test_rot.py",
                 "import unittest\n\n\nclass Rot(unittest.TestCase):\n"
                 "    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n"}});
  git(root, {"init", "-q"});
  git(root, {"add", "."});
  git(root, {"commit", "-q", "-m", "first"});
  const auto r = runner({root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(says(r, "runner:   tests_dir     test  (the root's test/ folder)")) << r.output;
  EXPECT_TRUE(says(r,
                   "runner:   framework     unittest  (no pytest configuration, conftest.py or "
                   "test file importing it)"))
      << r.output;
  EXPECT_TRUE(says(r, "runner:   pattern       test*.py  (unittest discover's default pattern)"))
      << r.output;
  EXPECT_TRUE(says(r, "runner:   source_url    none  (the git checkout has no remote)"))
      << r.output;
  const RunRecord run = last_run();
  EXPECT_EQ(run.framework, "unittest");
  EXPECT_EQ(run.source_url, "");
  EXPECT_EQ(run.project_commit.size(), 40U);
  EXPECT_EQ(passed_by_file(run.id), (std::map<std::string, int>{{"test_rot.py", 2}}));
}

TEST_F(ProjectE2E, AGitlabRemoteGivesUpstreamLinksAtTheCheckoutsCommit) {
  const fs::path root =
      project("linked",
              {{"pyproject.toml", "[project]\nname = \"linked\"\n"},
               {"tests/test_fail.py", "import pytest\n\n\ndef test_bad():\n    assert 1 == 2\n"}});
  git(root, {"init", "-q"});
  git(root, {"add", "."});
  git(root, {"commit", "-q", "-m", "first"});
  git(root, {"remote", "add", "origin", "https://ci:secret@gitlab.com/group/linked.git"});
  const auto r = runner({(root / "tests").string()});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(says(r,
                   "runner:   source_url    "
                   "https://gitlab.com/group/linked/-/blob/{commit}/{path}#L{line}  (git remote "
                   "origin (https://gitlab.com/group/linked.git), GitLab at the checkout's"))
      << r.output;
  EXPECT_FALSE(says(r, "secret")) << "no credential is printed";
  const RunRecord run = last_run();
  const json report = json::parse(read_file(fs::path(run.out_dir) / "report.json"));
  const json c = testing::find_case(report, "test_fail.py", "test_bad");
  ASSERT_FALSE(c.is_null()) << report["files"].dump(1);
  EXPECT_EQ(c["links"]["upstream"], "https://gitlab.com/group/linked/-/blob/" + run.project_commit +
                                        "/tests/test_fail.py#L5");
  // Its rerun command names the tests folder, which infers the same suite again.
  const std::string rerun = c["rerun"];
  EXPECT_EQ(rerun.find(std::string(RUNNER_PATH) + " " + (root / "tests").string() +
                       " test_fail.py::test_bad"),
            0U)
      << rerun;
  const auto again = runner({(root / "tests").string(), "test_fail.py::test_bad"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_EQ(last_run().suite, "linked");
  EXPECT_EQ(last_run().targets, std::vector<std::string>{"test_fail.py::test_bad"});
}

TEST_F(ProjectE2E, AnActivatedCondaEnvironmentIsTheInterpreter) {
  // A conda environment: conda-meta beside bin/python (here a wrapper of the tests' interpreter).
  const fs::path conda = dir_ / "conda-env";
  write_file(conda / "conda-meta/history", "");
  write_file(conda / "bin/python", std::string("#!/bin/sh\nexec ") + SUITE_PYTHON + " \"$@\"\n");
  fs::permissions(conda / "bin/python", fs::perms::owner_all);
  const fs::path root =
      project("condaproj", {{"setup.py", ""},
                            {"tests/test_env.py",
                             "import os\nimport unittest\n\n\nclass Env(unittest.TestCase):\n"
                             "    def test_activated(self):\n"
                             "        self.assertEqual(os.environ['CONDA_PREFIX'], '" +
                                 conda.string() +
                                 "')\n"
                                 "        self.assertTrue(os.environ['PATH'].startswith('" +
                                 (conda / "bin").string() + "'))\n"}});
  const auto r = runner({root.string()}, {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", conda.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(says(r, "runner:   python        " + (conda / "bin/python").string() +
                          "  ($CONDA_PREFIX, the activated conda environment)"))
      << r.output;
  EXPECT_EQ(passed_by_file(last_run().id), (std::map<std::string, int>{{"test_env.py", 1}}));
}

TEST_F(ProjectE2E, AnInterpreterWithoutPytestOrTorchIsOneErrorBeforeAnythingRuns) {
  // A virtual environment with nothing installed.
  const fs::path bare = dir_ / "bare-venv";
  ASSERT_EQ(testing::run({SUITE_PYTHON, "-m", "venv", "--without-pip", bare.string()}).exit_code,
            0);
  const fs::path root =
      project("needs", {{"pyproject.toml", "[tool.pytest.ini_options]\n"},
                        {"tests/test_a.py", kTwoTests},
                        {"tests/test_t.py", "import torch\n\n\ndef test_t():\n    pass\n"}});
  auto r = runner({root.string()}, {{"VIRTUAL_ENV", bare.string()}});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string python = (bare / "bin/python").string();
  EXPECT_TRUE(says(r, "runner: error: " + python +
                          " (the interpreter inferred: $VIRTUAL_ENV, the activated virtual "
                          "environment) cannot import pytest (the suite's framework) nor torch "
                          "(its tests import it: test_t.py): install them with `" +
                          python + " -m pip install pytest torch`"))
      << r.output;
  EXPECT_FALSE(fs::exists(db())) << "nothing was recorded";
  EXPECT_FALSE(fs::exists(out() / "logs")) << "no file ran";
  // With pytest and without torch: the same for torch alone, a suite file's interpreter too.
  r = runner({root.string(), "--python", SUITE_PYTHON});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(says(r, "runner: error: " + std::string(SUITE_PYTHON) +
                          " (--python) cannot import torch (its tests import it: test_t.py): "
                          "install it with `" +
                          SUITE_PYTHON + " -m pip install torch`"))
      << r.output;
  // A file that does not import torch runs.
  r = runner({(root / "tests/test_a.py").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(ProjectE2E, AFolderWithoutTestFilesSaysWhereItLooked) {
  const fs::path root = project("empty", {{"setup.py", ""}, {"tests/helpers.py", ""}});
  const auto r = runner({root.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(says(r, "runner: error: no test files: looked for test*.py in " +
                          (root / "tests").string() + " (the root's tests/ folder)"))
      << r.output;
  EXPECT_FALSE(fs::exists(db()));
}

TEST_F(ProjectE2E, TargetsKeywordsAndTheDifferentialWorkAsWithASuiteFile) {
  const fs::path root = project("targets", {{"setup.cfg", "[metadata]\nname = t\n"},
                                            {"tests/conftest.py", ""},
                                            {"tests/test_a.py", kTwoTests},
                                            {"tests/sub/test_b.py", kTwoTests}});
  auto r = runner({(root / "tests/test_a.py").string() + "::test_two"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_run().targets, std::vector<std::string>{"test_a.py::test_two"});
  EXPECT_EQ(passed_by_file(last_run().id), (std::map<std::string, int>{{"test_a.py", 1}}));
  r = runner({root.string(), "-k", "one"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(passed_by_file(last_run().id),
            (std::map<std::string, int>{{"sub/test_b.py", 1}, {"test_a.py", 1}}));
  r = runner({(root / "tests/sub").string(), "--differential"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(says(r, "runner: against baseline run ")) << r.output;
  const RunRecord shim = last_run();
  EXPECT_EQ(shim.mode, "shim");
  EXPECT_GT(shim.baseline_run, 0);
  EXPECT_EQ(shim.targets, std::vector<std::string>{"sub"});
  EXPECT_EQ(passed_by_file(shim.id), (std::map<std::string, int>{{"sub/test_b.py", 2}}));
}

TEST_F(ProjectE2E, RunsOfTheProjectAndRunnerInitsFileShareOneHistory) {
  const fs::path root =
      project("kept", {{"setup.py", ""},
                       {"tests/test_a.py", "import pytest\n\n\n" + std::string(kTwoTests)},
                       {"tests/unit/test_b.py", kTwoTests}});
  auto r = runner({root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunRecord first = last_run();
  r = runner({(root / "tests").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(last_run().previous_run, first.id) << "the project root and its tests folder alike";

  r = testing::run({RUNNER_PATH, "init", root.string()}, project_env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path kept = root / "devshim.json";
  EXPECT_TRUE(says(r, "runner: wrote " + kept.string())) << r.output;
  const json j = json::parse(read_file(kept));
  EXPECT_EQ(j, json::parse(R"({"name": "kept", "project_root": ".", "tests_dir": "tests",
                              "framework": "pytest", "pattern": ["test_*.py", "*_test.py"],
                              "python": ")" +
                           (venv() / "bin/python").string() + R"("})"))
      << j.dump(1);
  r = testing::run({RUNNER_PATH, "init", root.string()}, project_env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(says(r, kept.string() + " exists: runner init leaves it as it is (--force"))
      << r.output;
  write_file(kept, read_file(kept).replace(read_file(kept).find("\"tests\""), 7, "\"tests/unit\""));
  r = testing::run({RUNNER_PATH, "init", (root / "tests").string(), "--force"}, project_env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(read_file(kept)), j) << "--force writes it again from what it infers";

  // A later run reads it, says so, and runs the same tests into the same history.
  r = runner({root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("runner: suite file " + kept.string()), 0U) << r.output;
  EXPECT_FALSE(says(r, "inferred")) << r.output;
  const RunRecord from_file = last_run();
  EXPECT_EQ(from_file.suite, "kept");
  EXPECT_EQ(from_file.suite_file, kept.string());
  EXPECT_EQ(passed_by_file(from_file.id), passed_by_file(first.id));
  EXPECT_EQ(from_file.previous_run, first.id + 1);
  r = testing::run({RUNNER_PATH, "init", kept.string()}, project_env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(says(r, "is a suite file already")) << r.output;
}

// A real project fetched for the purpose, not a purpose-made one: opt-in, as it takes minutes.
// DEVSHIM_REAL_PROJECT is what a user would give the runner (a checkout with a remote, or its
// tests folder), DEVSHIM_REAL_VENV the virtual environment its tests run in (the project, its test
// requirements, pytest, torch). Run alone, as ctest's 300 s are too few, with both set:
//   build/tests/e2e/runner_e2e_tests --gtest_filter='ProjectE2E.ARealProject*'
// (DEVSHIM_REAL_PROJECT=…/roma/test DEVSHIM_REAL_VENV=…/roma-venv, for example).
// A copy of the checkout is run, so that runner init writes nothing into the checkout.
TEST_F(ProjectE2E, ARealProjectRunsWhatPlainPytestCollectsWithUpstreamLinks) {
  const char* given = std::getenv("DEVSHIM_REAL_PROJECT");
  const char* venv_dir = std::getenv("DEVSHIM_REAL_VENV");
  if (given == nullptr || venv_dir == nullptr) {
    GTEST_SKIP()
        << "DEVSHIM_REAL_PROJECT and DEVSHIM_REAL_VENV name a fetched project and its venv";
  }
  auto r = testing::run({"git", "-C", given, "rev-parse", "--show-toplevel"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path checkout = r.output.substr(0, r.output.find('\n'));
  const fs::path copy = dir_ / checkout.filename();
  ASSERT_EQ(testing::run({"cp", "-a", checkout.string(), copy.string()}).exit_code, 0);
  const fs::path path = copy / fs::absolute(given).lexically_normal().lexically_relative(checkout);
  const fs::path python = fs::path(venv_dir) / "bin/python";
  std::map<std::string, std::string> activated = env();
  activated["VIRTUAL_ENV"] = venv_dir;
  activated["CONDA_PREFIX"] = "";
  activated["PATH"] = (fs::path(venv_dir) / "bin").string() + ":" + std::getenv("PATH");

  // Plain pytest in the project root, as its user types it: the tests it collects, by file.
  r = testing::run({"/bin/sh", "-c",
                    R"(cd "$1" && exec "$2" -m pytest -q --collect-only -p no:cacheprovider "$3")",
                    "sh", copy.string(), python.string(), path.string()},
                   activated, std::chrono::minutes(10));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, int> collected;
  for (std::size_t at = 0, end; at < r.output.size(); at = end + 1) {
    end = std::min(r.output.find('\n', at), r.output.size());
    const std::string line = r.output.substr(at, end - at);
    if (const auto sep = line.find("::"); sep != std::string::npos)
      ++collected[line.substr(0, sep)];
  }
  ASSERT_FALSE(collected.empty()) << r.output;

  // runner PATH --differential from the activated venv, no --python.
  std::vector<std::string> argv{RUNNER_PATH,    path.string(), "--differential",
                                "--db",         db().string(), "--out",
                                out().string(), "-j",          "2"};
  r = testing::run(argv, activated, std::chrono::minutes(60));
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // upstream's failures: 1
  EXPECT_TRUE(says(r, "runner:   python        " + python.string() +
                          "  ($VIRTUAL_ENV, the activated virtual environment)"))
      << r.output;
  EXPECT_TRUE(says(r, "runner: against baseline run ")) << r.output;
  for (const fs::path& report : {out() / "baseline/report.json", out() / "report.json"}) {
    const json j = json::parse(read_file(report));
    std::map<std::string, int> ran;
    const fs::path tests_dir = j["run"]["tests_dir"].get<std::string>();
    for (const auto& f : j["files"]) {
      ran[(tests_dir / f["path"].get<std::string>()).generic_string()] +=
          static_cast<int>(f["cases"].size());
    }
    EXPECT_EQ(ran, collected) << report << ": the tests plain pytest collects, file by file";
  }

  // Every upstream link of the shim run's report is the file at the checkout's commit.
  const json report = json::parse(read_file(out() / "report.json"));
  const std::string commit = report["run"]["project_commit"];
  std::vector<std::string> links;
  const std::function<void(const json&)> gather = [&](const json& j) {
    if (j.is_object() && j.contains("upstream") && j["upstream"].is_string()) {
      links.push_back(j["upstream"]);
    }
    if (j.is_structured()) {
      for (const auto& e : j) gather(e);
    }
  };
  gather(report);
  EXPECT_FALSE(links.empty()) << "a failure or a redirection links to upstream";
  for (const std::string& link : links) {
    EXPECT_NE(link.find("/" + commit + "/"), std::string::npos) << link;
  }

  // runner init writes a file that selects the same test files.
  argv = {RUNNER_PATH, path.string(), "--list"};
  const auto inferred = testing::run(argv, activated);
  ASSERT_EQ(inferred.exit_code, 0) << inferred.output;
  r = testing::run({RUNNER_PATH, "init", path.string()}, activated);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto kept = testing::run(argv, activated);
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_EQ(kept.output.find("runner: suite file "), 0U) << kept.output;
  const auto files = [](const std::string& output) {
    return output.substr(output.find("\n", output.rfind("runner: ")) + 1);
  };
  EXPECT_EQ(files(kept.output), files(inferred.output));
}

}  // namespace
}  // namespace devshim
