// Zero tests is never success (issue 34): an interpreter that is no Python is refused before
// anything runs, a file that ran no test framework at all fails with the reason, and the warm
// start says what happened to its parent.
#include <gtest/gtest.h>
#include <unistd.h>

#include "runner/results/store.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

class InterpreterE2E : public E2EFixture {
 protected:
  testing::RunResult run_with_python(const std::string& python) {
    return testing::run({RUNNER_PATH, (kSuites / "slow").string(), "--db", db().string(), "--out",
                         out().string(), "--python", python, "--no-shim", "test_a_quick.py"},
                        env());
  }
  /// A unittest suite in dir_/name with the given files (path → text) and suite.json extras.
  fs::path suite(const std::string& name, const std::map<std::string, std::string>& files,
                 const std::string& extra = "") {
    const fs::path dir = dir_ / name;
    write_file(dir / "suite.json", "{\"name\": \"e2e-" + name +
                                       "\", \"project_root\": \".\", \"tests_dir\": \"tests\", "
                                       "\"framework\": \"unittest\"" +
                                       extra + "}");
    for (const auto& [path, text] : files) write_file(dir / path, text);
    return dir;
  }
};

TEST_F(InterpreterE2E, AnInterpreterThatIsNoPythonIsRefusedBeforeAnythingRuns) {
  std::vector<std::string> pythons{"/bin/true", "/bin/false"};
  if (::access("/usr/bin/perl", X_OK) == 0) pythons.emplace_back("/usr/bin/perl");
  for (const std::string& python : pythons) {
    const auto r = run_with_python(python);
    EXPECT_EQ(r.exit_code, 2) << python << ": " << r.output;
    EXPECT_NE(r.output.find("runner: error: " + python + " is no Python interpreter (--python)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("give --python a Python 3 interpreter"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(db())) << python << ": a run was recorded";
    EXPECT_FALSE(fs::exists(out() / "logs")) << python << ": a file ran";
  }
  EXPECT_NE(run_with_python("/bin/true").output.find("it exited with 0 and printed nothing"),
            std::string::npos);
  EXPECT_NE(run_with_python("/bin/false").output.find("it exited with 1 and printed nothing"),
            std::string::npos);
  if (::access("/usr/bin/perl", X_OK) == 0) {
    // What it printed is shown: the reader sees it is Perl.
    const auto r = run_with_python("/usr/bin/perl");
    EXPECT_NE(r.output.find("and printed \""), std::string::npos) << r.output;
  }
  // The suite's own "python" is named as such.
  const fs::path s =
      suite("no-python", {{"tests/test_a.py", "import unittest\n"}}, ", \"python\": \"/bin/true\"");
  const auto r = testing::run(
      {RUNNER_PATH, s.string(), "--db", db().string(), "--out", out().string(), "--no-shim"},
      env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/bin/true is no Python interpreter (\"python\" of " +
                          (s / "suite.json").string() + ")"),
            std::string::npos)
      << r.output;
}

TEST_F(InterpreterE2E, AFileThatRanNoTestFrameworkFailsWithTheReason) {
  // The module ends the process before unittest can say anything, even "Ran 0 tests".
  const fs::path s = suite("silent", {{"tests/test_silent.py", "import os\nos._exit(0)\n"},
                                      {"tests/test_fine.py",
                                       "import unittest\n\n\nclass T(unittest.TestCase):\n"
                                       "    def test_fine(self):\n        pass\n"}});
  for (const char* start : {"--cold", ""}) {
    std::vector<std::string> argv{RUNNER_PATH, s.string(),     "--db",     db().string(),
                                  "--out",     out().string(), "--python", SUITE_PYTHON,
                                  "--no-shim", "-j",           "1"};
    if (*start != '\0') argv.emplace_back(start);
    const auto r = testing::run(argv, env());
    EXPECT_EQ(r.exit_code, 1) << start << ": " << r.output;
    EXPECT_NE(r.output.find("1 passed, 1 error"), std::string::npos) << r.output;
    const auto files = files_of_last_run();
    ASSERT_EQ(files.count("test_silent.py"), 1U);
    EXPECT_EQ(files.at("test_silent.py").status, FileStatus::kError);
    EXPECT_NE(files.at("test_silent.py").note.find("exited 0 without running a test"),
              std::string::npos)
        << files.at("test_silent.py").note;
    EXPECT_EQ(files.at("test_fine.py").status, FileStatus::kPassed);
  }
}

TEST_F(InterpreterE2E, AWarmParentThatEndsAtOnceIsSaidToHaveEnded) {
  // Its preload ends the warm parent before it says it is ready: the run goes on cold. The test
  // file imports the preload too (harmless outside the warm parent), so it waits for the parent
  // rather than starting cold while the parent imports (runner/engine/python_imports.h).
  const fs::path s = suite("dying-parent",
                           {{"die_now.py",
                             "import os\nimport sys\n\n"
                             "if sys.argv[0].endswith('devshim_zygote.py'):\n    os._exit(0)\n"},
                            {"tests/test_fine.py",
                             "import unittest\n\nimport die_now  # noqa: F401\n\n\n"
                             "class T(unittest.TestCase):\n"
                             "    def test_fine(self):\n        pass\n"}},
                           ", \"pythonpath\": [\".\"], \"preload\": [\"die_now\"]");
  const auto r = testing::run({RUNNER_PATH, s.string(), "--db", db().string(), "--out",
                               out().string(), "--python", SUITE_PYTHON, "--no-shim"},
                              env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("without saying it was ready"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no answer within"), std::string::npos) << r.output;
  EXPECT_NE(read_file(out() / "run.log").find("every file starts cold"), std::string::npos);
}

// A test that runs a console script of its project by name (litgpt's `subprocess.run(["litgpt",
// ...])`) finds it in the venv of the suite's interpreter, as under the activated venv of the
// project's CI, whether the file starts cold or forks from the warm parent.
TEST_F(InterpreterE2E, TheInterpretersVenvIsActivatedForTheTests) {
  const fs::path venv = dir_ / "venv";
  const auto made = testing::run({SUITE_PYTHON, "-m", "venv", "--without-pip", venv.string()}, {});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  write_file(venv / "bin/e2e-console-script", "#!/bin/sh\necho from-the-venv\n");
  fs::permissions(venv / "bin/e2e-console-script", fs::perms::owner_all, fs::perm_options::add);
  const fs::path s = suite(
      "venv-scripts",
      {{"tests/test_script.py",
        "import os\nimport subprocess\nimport sys\nimport unittest\n\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_console_script(self):\n"
        "        out = subprocess.run(['e2e-console-script'], capture_output=True, text=True,\n"
        "                             check=True).stdout\n"
        "        self.assertEqual(out, 'from-the-venv\\n')\n"
        "        self.assertEqual(os.environ['VIRTUAL_ENV'], sys.prefix)\n"}});
  for (const char* start : {"--cold", ""}) {
    std::vector<std::string> argv{
        RUNNER_PATH, s.string(),     "--db",     db().string(),
        "--out",     out().string(), "--python", (venv / "bin/python").string(),
        "--no-shim"};
    if (*start != '\0') argv.emplace_back(start);
    const auto r = testing::run(argv, env());
    EXPECT_EQ(r.exit_code, 0) << start << ": " << r.output;
    EXPECT_NE(r.output.find("1 passed"), std::string::npos) << start << ": " << r.output;
  }
}

}  // namespace
}  // namespace devshim
