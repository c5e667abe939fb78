// Rendering all four report formats for a synthetic run of 100,000 test cases (10% failing,
// ~500 signatures), against the time to read the run from the database (issue 4's target:
// rendering under 1 s).
//
//   report_render_bench [--cases N] [--keep]
#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "runner/results/store.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Records a run of `cases` tests in files of 100; every 10th fails with one of ~500 messages.
std::int64_t record_run(devshim::Store& store, const fs::path& dir, int cases) {
  devshim::RunRecord run;
  run.suite = "bench";
  run.suite_file = (dir / "suite.json").string();
  run.framework = "pytest";
  run.started_at = "2026-11-21T10:00:00Z";
  run.project_root = (dir / "project").string();
  run.tests_dir = "tests";
  run.project_commit = "0123456789abcdef0123456789abcdef01234567";
  run.out_dir = (dir / "out").string();
  run.source_url = "https://github.com/example/project/blob/{commit}/{path}#L{line}";
  const int files = (cases + 99) / 100;
  std::vector<std::string> planned;
  for (int f = 0; f < files; ++f) planned.push_back(fmt::format("models/m{}/test_m{}.py", f, f));
  const std::int64_t id = store.begin_run(run, planned);
  int n = 0;
  for (int f = 0; f < files; ++f) {
    std::vector<devshim::TestCase> batch;
    for (int t = 0; t < 100 && n < cases; ++t, ++n) {
      devshim::TestCase c;
      c.classname = fmt::format("tests.models.m{}.test_m{}.ModelTest", f, f);
      c.name = fmt::format("test_case_{}", t);
      c.duration_s = 0.01;
      if (n % 10 == 3) {
        const int kind = (n / 10) % 500;
        c.status = devshim::CaseStatus::kFailed;
        c.exception = "AssertionError";
        c.message = fmt::format("check_{} failed: 0.{} not less than or equal to 1e-05", kind, n);
        c.traceback = fmt::format(
            "Traceback (most recent call last):\n  File \"/src/{}\", line {}, in {}\n    "
            "self.check_{}()\nAssertionError: {}",
            planned[f], 10 + t, c.name, kind, c.message);
        c.source = devshim::SourceLocation{"tests/" + planned[f], 10 + t};
      }
      batch.push_back(std::move(c));
    }
    devshim::FileRecord rec;
    rec.path = planned[f];
    rec.status = devshim::FileStatus::kFailed;
    rec.exit_code = 1;
    rec.log_path = "logs/" + planned[f] + ".log";
    store.record_file(id, rec, batch);
  }
  store.finish_run(id, "failed", "2026-11-21T10:30:00Z");
  return id;
}

}  // namespace

int main(int argc, char** argv) {
  int cases = 100000;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      cases = std::stoi(argv[++i]);
    } else if (a == "--keep") {
      keep = true;
    } else {
      fmt::print(stderr, "usage: report_render_bench [--cases N] [--keep]\n");
      return 2;
    }
  }
  std::string templ = (fs::temp_directory_path() / "devshim-render-bench-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return 1;
  const fs::path dir = templ;
  std::int64_t id = 0;
  {
    devshim::Store store(dir / "bench.db");
    auto t = Clock::now();
    id = record_run(store, dir, cases);
    fmt::print("recorded {} cases in {:.2f} s\n", cases, seconds_since(t));
  }
  devshim::Store store(dir / "bench.db");
  auto t = Clock::now();
  devshim::Report report = devshim::build_report(store, id, dir / "out");
  const double read_s = seconds_since(t);

  t = Clock::now();
  const std::size_t md = devshim::render_markdown(report).size();
  const double md_s = seconds_since(t);
  t = Clock::now();
  const nlohmann::json j = devshim::render_json(report);
  const double json_build_s = seconds_since(t);
  const std::size_t js = devshim::dump_report_json(j).size();
  const double json_s = seconds_since(t);
  fmt::print("(json: building {:.3f} s, dumping {:.3f} s)\n", json_build_s, json_s - json_build_s);
  t = Clock::now();
  const std::size_t xml = devshim::render_junit(report).size();
  const double junit_s = seconds_since(t);
  t = Clock::now();
  const std::size_t html = devshim::render_html(report).size();
  const double html_s = seconds_since(t);
  const double render_s = md_s + json_s + junit_s + html_s;

  fmt::print("read from the database (build_report): {:.3f} s ({} clusters)\n", read_s,
             report.clusters.size());
  fmt::print("render md    {:.3f} s ({:.1f} MB)\n", md_s, md / 1e6);
  fmt::print("render json  {:.3f} s ({:.1f} MB)\n", json_s, js / 1e6);
  fmt::print("render junit {:.3f} s ({:.1f} MB)\n", junit_s, xml / 1e6);
  fmt::print("render html  {:.3f} s ({:.1f} MB)\n", html_s, html / 1e6);
  fmt::print("all four formats: {:.3f} s, {:.2f}x the read; target < 1 s\n", render_s,
             render_s / read_s);
  if (!keep) fs::remove_all(dir);
  return 0;
}
