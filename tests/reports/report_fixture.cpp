#include "tests/reports/report_fixture.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace devshim::testing {

namespace fs = std::filesystem;

namespace {

TestCase make_case(const std::string& cls, const std::string& name, CaseStatus status,
                   const std::string& exc = "", const std::string& msg = "", int line = 0,
                   const std::string& path = "") {
  TestCase c;
  c.classname = cls;
  c.name = name;
  c.status = status;
  c.duration_s = 0.25;
  c.exception = exc;
  c.message = msg;
  if (!exc.empty()) {
    c.traceback = fmt::format(
        "Traceback (most recent call last):\n  File \"/src/{}\", line {}, in {}\n    "
        "check()\n{}: {}",
        path, line, name, exc, msg);
  }
  c.source = SourceLocation{path, line};
  return c;
}

// The night before: the tolerance tests and test_import.py failed already, test_zeros,
// test_segv and test_ok passed, test_xfail failed; the hostile test did not exist.
std::int64_t record_previous_run(Store& store, RunRecord run) {
  run.started_at = "2026-11-20T10:00:00Z";
  const std::int64_t id = store.begin_run(run, {"test_cuda.py", "test_import.py", "test_ok.py",
                                                "test_tolerance.py", "sub/test_crash.py"});
  auto file = [](const std::string& path, FileStatus status) {
    FileRecord f;
    f.path = path;
    f.status = status;
    f.duration_s = 1;
    f.log_path = "logs/" + path + ".log";
    return f;
  };
  std::vector<TestCase> tol;
  for (int i = 0; i < 30; ++i) {
    tol.push_back(make_case("tests.test_tolerance.Tol", fmt::format("test_{:02}", i),
                            CaseStatus::kFailed, "AssertionError", "0.5 not less than 1e-05"));
  }
  store.record_file(id, file("test_tolerance.py", FileStatus::kFailed), tol);
  store.record_file(id, file("test_cuda.py", FileStatus::kFailed),
                    {make_case("tests.test_cuda", "test_zeros", CaseStatus::kPassed),
                     make_case("tests.test_cuda", "test_skipped", CaseStatus::kSkipped),
                     make_case("tests.test_cuda", "test_xfail", CaseStatus::kFailed,
                               "AssertionError", "was broken")});
  store.record_file(id, file("test_ok.py", FileStatus::kPassed),
                    {make_case("tests.test_ok", "test_ok", CaseStatus::kPassed)});
  store.record_file(id, file("sub/test_crash.py", FileStatus::kPassed),
                    {make_case("tests.sub.test_crash", "test_segv", CaseStatus::kPassed)});
  store.record_file(id, file("test_import.py", FileStatus::kError), {});
  store.finish_run(id, "failed", "2026-11-20T10:00:40Z");
  return id;
}

}  // namespace

void record_sample_run(RecordedRun& r) {
  const std::string tol = "tests/test_tolerance.py";
  std::string tol_src = "import unittest\n\n\nclass Tol(unittest.TestCase):\n";
  for (int i = 0; i < 30; ++i)
    tol_src += fmt::format("    def test_{:02}(self):\n        pass\n", i);
  write_file(r.project() / tol, tol_src);
  write_file(r.project() / "tests/test_cuda.py", "import torch\n\n\ndef test_zeros():\n    pass\n");
  write_file(r.project() / "tests/test_ok.py", "def test_ok():\n    pass\n");
  write_file(r.project() / "tests/sub/test_crash.py", "def test_segv():\n    pass\n");
  write_file(r.project() / "tests/test_import.py", "import nope\n");
  for (const char* log :
       {"test_tolerance.py", "test_cuda.py", "test_ok.py", "sub/test_crash.py", "test_import.py"}) {
    write_file(r.out() / "logs" / (std::string(log) + ".log"), "log\n");
  }

  Store store(r.db());
  RunRecord run;
  run.suite = "sample";
  run.suite_file = (r.dir / "suite/suite.json").string();
  run.framework = "pytest";
  run.targets = {"tests"};
  run.command_line = {"runner", "suites/sample", "tests", "-j", "2"};
  run.started_at = "2026-11-21T10:00:00Z";
  run.host = "testhost";
  run.project_root = r.project().string();
  run.tests_dir = "tests";
  run.project_commit = "0123456789abcdef0123456789abcdef01234567";
  run.out_dir = r.out().string();
  run.jobs = 2;
  run.timeout_s = 60;
  run.runner_pid = 1;
  run.source_url = "https://github.com/example/project/blob/{commit}/{path}#L{line}";
  run.environment =
      R"({"cores":2,"cuda_available":false,"cuda_device_count":0,"executable":"/venv/bin/python",)"
      R"("mps_available":false,"python":"3.11.7","runner_version":"0.1.0",)"
      R"("shim":{"active":true,"name":"devshim","policy":"default","version":"0.1.0"},)"
      R"("torch":"2.13.0+cpu","device_probe":{"probe":"devshim-probe/1","torch_version":"2.13.0",)"
      R"("devices":[{"device":"cpu","matmul":{"bfloat16":true,"float16":false,"float32":true},)"
      R"("recommended_dtype":"float32"}],"policy":{"cuda_redirects_to":"cpu"}},)"
      R"("git_toplevel":")" +
      r.dir.path().string() + "\"}";
  run.previous_run = record_previous_run(store, run);
  r.run_id = store.begin_run(run, {"test_cuda.py", "test_import.py", "test_ok.py",
                                   "test_tolerance.py", "sub/test_crash.py", "test_never.py"});

  auto file = [&](const std::string& path, FileStatus status, double duration,
                  const std::string& note = "") {
    FileRecord f;
    f.path = path;
    f.status = status;
    f.exit_code = status == FileStatus::kPassed ? 0 : 1;
    f.duration_s = duration;
    f.log_path = "logs/" + path + ".log";
    f.started_at = "2026-11-21T10:00:01Z";
    f.finished_at = "2026-11-21T10:00:05Z";
    f.note = note;
    f.parsed_from = "junit";
    return f;
  };
  std::vector<TestCase> tol_cases;
  for (int i = 0; i < 30; ++i) {
    tol_cases.push_back(make_case("tests.test_tolerance.Tol", fmt::format("test_{:02}", i),
                                  CaseStatus::kFailed, "AssertionError",
                                  fmt::format("0.{} not less than or equal to 1e-05", 79 + i),
                                  5 + 2 * i, tol));
  }
  store.record_file(r.run_id, file("test_tolerance.py", FileStatus::kFailed, 3.5), tol_cases);
  store.record_file(
      r.run_id, file("test_cuda.py", FileStatus::kFailed, 1.25),
      {make_case("tests.test_cuda", "test_zeros", CaseStatus::kFailed, "AssertionError",
                 "Torch not compiled with CUDA enabled", 4, "tests/test_cuda.py"),
       make_case("tests.test_cuda", "test_<script>alert(1)</script> | `tick` [x](y)",
                 CaseStatus::kError, "RuntimeError",
                 "line one\nline two | with pipe " + std::string(10000, 'x'), 0,
                 "tests/test_cuda.py"),
       make_case("tests.test_cuda", "test_skipped", CaseStatus::kSkipped, "", "needs a GPU"),
       make_case("tests.test_cuda", "test_xfail", CaseStatus::kXfailed, "", "known")});
  // What the shim rewrote in test_ok.py: two call sites of torch.zeros, one .cuda(), and a
  // call site outside the project (absolute path).
  auto redirection = [](const char* api, const char* requested, long long count, const char* site,
                        int line) {
    Redirection d;
    d.shim = "python";
    d.api = api;
    d.requested = requested;
    d.used = "cpu";
    d.count = count;
    d.site_file = site;
    d.site_line = line;
    d.site_function = "test_ok";
    return d;
  };
  store.record_file(r.run_id, file("test_ok.py", FileStatus::kPassed, 0.5),
                    {make_case("tests.test_ok", "test_ok", CaseStatus::kPassed)},
                    {redirection("torch.zeros", "cuda", 3, "tests/test_ok.py", 7),
                     redirection("torch.zeros", "cuda", 2, "tests/test_ok.py", 9),
                     redirection("torch.Tensor.cuda", "cuda:1", 1, "tests/test_ok.py", 8),
                     redirection("torch.load", "cuda:0", 5, "/opt/lib/helpers.py", 12)});
  TestCase culprit =
      make_case("tests.sub.test_crash", "test_segv", CaseStatus::kError, "Fatal Python error",
                "Segmentation fault", 1, "tests/sub/test_crash.py");
  culprit.culprit = "crashed";
  store.record_file(r.run_id,
                    file("sub/test_crash.py", FileStatus::kCrashed, 0.75, "killed by SIGSEGV"),
                    {culprit});
  store.record_file(r.run_id, file("test_import.py", FileStatus::kError, 0.5), {});
  // test_ok failed at first and passed on a rerun: flaky.
  RerunResult rerun;
  rerun.path = "test_ok.py";
  rerun.attempts = {
      {"test_ok.py", "tests.test_ok", "test_ok", 1, CaseStatus::kFailed, "TimeoutError: slow disk"},
      {"test_ok.py", "tests.test_ok", "test_ok", 2, CaseStatus::kPassed, ""}};
  rerun.flaky = {make_case("tests.test_ok", "test_ok", CaseStatus::kPassed)};
  rerun.note = "flaky: 1 failing test passed on a rerun";
  store.record_reruns(r.run_id, rerun);
  store.finish_run(r.run_id, "failed", "2026-11-21T10:00:42Z");
}

std::int64_t record_compared_run(Store& store, const std::string& policy,
                                 const std::vector<std::pair<std::string, CaseStatus>>& tests) {
  RunRecord r;
  r.suite = "s";
  r.suite_file = "/s/suite.json";
  r.framework = "pytest";
  r.started_at = "2026-11-23T08:00:00Z";
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  r.environment =
      R"({"torch": "2.13.0+cpu", "shim": {"policy": ")" + policy + R"(", "version": "0.2.0"}})";
  const std::int64_t id = store.begin_run(r, {"test_a.py"});
  FileRecord f;
  f.path = "test_a.py";
  f.status = FileStatus::kFailed;
  std::vector<TestCase> cases;
  for (const auto& [name, status] : tests) {
    TestCase t;
    t.classname = "tests.test_a";
    t.name = name;
    t.status = status;
    t.source = {"test_a.py", static_cast<int>(cases.size()) + 10};
    if (is_failure(status)) {
      t.exception = "RuntimeError";
      t.message = name + " broke";
    }
    cases.push_back(t);
  }
  store.record_file(id, f, cases);
  store.finish_run(id, "failed", "2026-11-23T08:01:00Z");
  return id;
}

std::string normalise(std::string text, const RecordedRun& r) {
  const std::string tmp = r.dir.path().string();
  for (std::size_t p = 0; (p = text.find(tmp, p)) != std::string::npos;) {
    text.replace(p, tmp.size(), "<TMP>");
    p += 5;
  }
  return text;
}

void expect_golden(const std::string& name, const std::string& text) {
  const fs::path golden = fs::path(GOLDEN_DIR) / name;
  const char* approve = std::getenv("DEVSHIM_APPROVE");
  if (approve != nullptr && std::string(approve) == "1") {
    write_file(golden, text);
    return;
  }
  const std::string want = read_file(golden);
  if (want != text) {
    const fs::path unapproved = fs::path(GOLDEN_DIR) / (name + ".unapproved");
    write_file(unapproved, text);
    ADD_FAILURE() << "rendered output differs from " << golden.string() << "; wrote "
                  << unapproved.string()
                  << " (diff them; tests/reports/approve.sh re-approves an intended change)";
  }
}

}  // namespace devshim::testing
