// make_sample_report DIR: writes DIR/report.html for a hand-built run (the input of
// check_report_in_chromium.py), with the files its relative links point to: test sources and
// per-file logs. The run has a hostile test name, a javascript: link that must be refused, a
// 10 KB message, three failing cases in two clusters, a file that failed with no case, and a
// differential section (two regressions) above the summary.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "reports/html.h"

namespace {

namespace fs = std::filesystem;
using devshim::CaseStatus;

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kHostileName = "test_<script>alert(1)</script> \"q\" 'a' | `tick`";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// A local link into DIR/src (relative to the report) and an upstream link at kCommit.
devshim::SourceLinks links_to(const std::string& path, int line) {
  const std::string anchor = "#L" + std::to_string(line);
  return {"src/" + path + anchor,
          "https://github.com/example/project/blob/" + std::string(kCommit) + "/" + path + anchor};
}

devshim::ReportCase make_case(const std::string& classname, const std::string& name,
                              CaseStatus status, double duration_s) {
  devshim::ReportCase c;
  c.test.classname = classname;
  c.test.name = name;
  c.test.status = status;
  c.test.duration_s = duration_s;
  return c;
}

devshim::ReportCase failing(const std::string& path, const std::string& classname,
                            const std::string& name, CaseStatus status,
                            const std::string& exception, const std::string& message, int line,
                            const std::string& signature) {
  auto c = make_case(classname, name, status, 0.25);
  c.test.exception = exception;
  c.test.message = message;
  c.test.traceback = "Traceback (most recent call last):\n  File \"" + path + "\", line " +
                     std::to_string(line) + ", in " + name +
                     "\n    self.assertLessEqual(err, tol)\n" + exception + ": " +
                     message.substr(0, 200) + "\n";
  c.test.source = {path, line};
  c.signature = signature;
  c.links = links_to(path, line);
  return c;
}

devshim::Report sample_report(const fs::path& dir) {
  devshim::Report r;
  auto& run = r.run;
  run.id = 7;
  run.suite = "transformers-mini";
  run.suite_file = "suites/transformers-mini/suite.json";
  run.framework = "pytest";
  run.targets = {"tests/test_math.py", "tests/models"};
  run.command_line = {"runner", "run",          "suites/transformers-mini/suite.json", "-j", "4",
                      "--out",  "out dir/run 7"};
  run.mode = "shim";
  run.status = "failed";
  run.started_at = "2026-11-21T22:46:00Z";
  run.finished_at = "2026-11-21T22:58:41Z";
  run.host = "ci-runner-03";
  run.project_root = "/work/projects/transformers";
  run.tests_dir = "tests";
  run.project_commit = kCommit;
  run.out_dir = dir.string();
  run.jobs = 4;
  run.timeout_s = 600;
  run.source_url = "https://github.com/example/project/blob/{commit}/{path}#L{line}";
  r.environment = {
      {"python", "3.11.2"},
      {"executable", "/work/projects/transformers/.venv/bin/python"},
      {"platform", "Linux-6.1.0-x86_64-with-glibc2.36"},
      {"torch", "2.5.1+cpu"},
      {"cuda_available", false},
      {"cuda_device_count", 0},
      {"mps_available", false},
      {"shim",
       {{"name", "devshim"}, {"version", "0.1.0"}, {"active", true}, {"policy", "default"}}},
      {"cores", 16},
      {"runner_version", "0.1.0"}};
  r.duration_s = 761;

  const std::string math = "tests/test_math.py";
  const std::string long_message =
      "Tensor-likes are not close!\n\nMismatched elements: 3 / 4096 (0.1%)\n" +
      std::string(10 * 1024, 'x') + "\nend of message";
  const std::string tolerance = "0.79 not less than or equal to 1e-05";

  devshim::ReportFile f1;
  f1.file.path = math;
  f1.file.status = devshim::FileStatus::kFailed;
  f1.file.exit_code = 1;
  f1.file.duration_s = 12.5;
  f1.file.log_path = "logs/tests/test_math.py.log";
  f1.status = "failed";
  f1.log_link = "logs/tests/test_math.py.log";
  f1.cases.push_back(make_case("tests.test_math.MathTest", "test_add", CaseStatus::kPassed, 0.1));
  f1.cases.push_back(failing(math, "tests.test_math.MathTest", "test_sub", CaseStatus::kFailed,
                             "AssertionError", tolerance, 21, "sig-tolerance"));
  f1.cases.push_back(failing(math, "tests.test_math.MathTest", "test_matmul_large",
                             CaseStatus::kFailed, "AssertionError", long_message, 34,
                             "sig-tolerance"));
  auto hostile =
      failing(math, "tests.test_math.MathTest", kHostileName, CaseStatus::kError, "RuntimeError",
              "Torch not compiled with CUDA enabled <b>bold</b>", 47, "sig-cuda");
  hostile.links.local = "javascript:alert(1)";  // must never become a link
  f1.cases.push_back(hostile);
  f1.counts = {{"passed", 1}, {"failed", 2}, {"error", 1}};

  devshim::ReportFile f2;
  f2.file.path = "tests/models/test_import.py";
  f2.file.status = devshim::FileStatus::kError;
  f2.file.exit_code = 2;
  f2.file.duration_s = 1.2;
  f2.file.log_path = "logs/tests/models/test_import.py.log";
  f2.file.note = "collection error: ModuleNotFoundError: No module named 'flash_attn'";
  f2.status = "error";
  f2.log_link = "logs/tests/models/test_import.py.log";

  devshim::ReportFile f3;
  f3.file.path = "tests/models/test_ok.py";
  f3.file.status = devshim::FileStatus::kPassed;
  f3.file.exit_code = 0;
  f3.file.duration_s = 48.0;
  f3.status = "passed";
  f3.log_link = "logs/tests/models/test_ok.py.log";
  for (int i = 0; i < 5; ++i) {
    f3.cases.push_back(make_case("tests.models.test_ok.OkTest", "test_" + std::to_string(i),
                                 CaseStatus::kPassed, 9.0));
  }
  f3.cases.push_back(
      make_case("tests.models.test_ok.OkTest", "test_big_gpu", CaseStatus::kSkipped, 0));
  f3.counts = {{"passed", 5}, {"skipped", 1}};

  devshim::ReportFile f4;
  f4.file.path = "tests/models/test_slow.py";
  f4.status = "not_run";

  r.files = {f1, f2, f3, f4};
  r.summary.files = {{"failed", 1}, {"error", 1}, {"passed", 1}, {"not_run", 1}};
  r.summary.files_total = 4;
  r.summary.tests = {{"passed", 6}, {"failed", 2}, {"error", 1}, {"skipped", 1}};
  r.summary.tests_total = 10;
  r.summary.pass_rate = 6.0 / 9.0;

  devshim::ReportCluster tol;
  tol.signature = "sig-tolerance";
  tol.exception = "AssertionError";
  tol.message = "<num> not less than or equal to <num>";
  tol.example_message = tolerance;
  tol.example_traceback = f1.cases[1].test.traceback;
  tol.tests = {{math, "tests.test_math.MathTest", "test_sub", f1.cases[1].links},
               {math, "tests.test_math.MathTest", "test_matmul_large", f1.cases[2].links}};
  devshim::ReportCluster cuda;
  cuda.signature = "sig-cuda";
  cuda.exception = "RuntimeError";
  cuda.message = "Torch not compiled with CUDA enabled <b>bold</b>";
  cuda.example_message = hostile.test.message;
  cuda.example_traceback = hostile.test.traceback;
  cuda.tests = {{math, "tests.test_math.MathTest", kHostileName, hostile.links}};
  r.clusters = {tol, cuda};

  // A differential run: its regressions link to their source like failures do.
  devshim::ReportDifferential diff;
  diff.baseline_run = 6;
  diff.counts = {{"compatible", 6}, {"regression", 2}, {"broken_both", 1}, {"skipped_both", 1}};
  diff.regressions.push_back({math, "tests.test_math.MathTest", "test_sub", "passed", "failed",
                              "AssertionError: " + tolerance, f1.cases[1].links,
                              "unattributed AssertionError: " + tolerance});
  diff.regressions.push_back({math, "tests.test_math.MathTest", kHostileName, "passed", "error",
                              hostile.test.message, hostile.links, ""});
  r.differential = diff;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_report DIR\n");
    return 2;
  }
  try {
    const fs::path dir = argv[1];
    std::string source;
    for (int i = 1; i <= 60; ++i) source += "# line " + std::to_string(i) + "\n";
    write(dir / "src/tests/test_math.py", source);
    write(dir / "logs/tests/test_math.py.log", "FAILED tests/test_math.py::MathTest::test_sub\n");
    write(dir / "logs/tests/models/test_import.py.log", "ModuleNotFoundError: flash_attn\n");
    write(dir / "logs/tests/models/test_ok.py.log", "5 passed, 1 skipped\n");
    write(dir / "report.html", devshim::render_html(sample_report(dir)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_sample_report: %s\n", e.what());
    return 1;
  }
  return 0;
}
