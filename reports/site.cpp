#include "reports/site.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "base/error.h"
#include "base/printable.h"
#include "parsers/read_file.h"
#include "reports/case_outcomes.h"
#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/site_files.h"
#include "reports/site_html.h"
#include "reports/write_reports.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Changes when what the site's pages hold changes, so that site.json's fingerprints lapse.
constexpr int kSiteFormat = 2;
constexpr const char* kManifest = "site.json";

// Writes text unless the file already holds it; true when it wrote.
bool write_if_changed(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == text.size() &&
      read_file(path) == text) {
    return false;
  }
  create_report_folder(path.parent_path());
  write_file_atomically(path, text);
  return true;
}

// What a run's pages depend on besides the code that renders them; later: the runs of the site
// that name it as their previous run or baseline (its forward links).
std::string fingerprint(const RunRecord& r, const std::set<std::int64_t>& in_site,
                        const std::vector<std::int64_t>& later) {
  auto linked = [&](std::int64_t id) { return in_site.count(id) > 0 ? id : 0; };
  const std::string key =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", kSiteFormat, DEVSHIM_VERSION, r.status,
                  r.finished_at, r.summary, linked(r.baseline_run), linked(r.previous_run),
                  r.environment.size(), fmt::join(later, ","));
  return fmt::format("{:016x}", std::hash<std::string>{}(key));
}

struct RenderedRun {
  json summary;
  SiteRunDigest digest;
  int files_written = 0;
};

// What the pages across runs keep of a run's report (SiteRunDigest).
SiteRunDigest digest_of(const Report& report) {
  SiteRunDigest d;
  std::vector<std::pair<std::string, double>> files;
  for (const ReportFile& f : report.files) {
    if (f.file.status) files.emplace_back(f.file.path, f.file.duration_s);
    for (const ReportCase& c : f.cases) {
      const CaseStatus s = c.test.status;
      const char kind = c.flaky                    ? 'k'
                        : s == CaseStatus::kFailed ? 'f'
                        : s == CaseStatus::kError  ? 'e'
                                                   : '\0';
      if (kind == '\0') continue;
      std::string message = c.test.exception;
      if (!c.test.message.empty()) message += (message.empty() ? "" : ": ") + c.test.message;
      if (message.size() > 300) message = message.substr(0, 300) + "…";
      d.failing.push_back(
          {{f.file.path, c.test.classname, c.test.name}, kind, c.test.duration_s, message});
    }
  }
  const std::size_t slow = std::min<std::size_t>(files.size(), 10);
  std::partial_sort(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(slow), files.end(),
                    [](const auto& a, const auto& b) { return a.second > b.second; });
  files.resize(slow);
  d.slow_files = std::move(files);
  for (const ReportCluster& c : report.clusters) {
    d.clusters.push_back({c.signature, c.exception, c.message, static_cast<int>(c.tests.size())});
  }
  return d;
}

// The report.html of a run in the site: the site's navigation on top (not sticky: the report's
// own table of contents is), and the links of both kept whole when they wrap.
std::string with_site_nav(std::string page, const RunRecord& run, const std::string& suite_dir) {
  const auto body = page.find("<body>\n");
  if (body == std::string::npos) return page;
  page.insert(body + 7, site_html::report_nav("../../", run.suite, suite_dir));
  const auto style_end = page.find("</style>\n</head>");
  if (style_end != std::string::npos) {
    page.insert(style_end,
                "nav.site-nav { position: static; display: flex; flex-wrap: wrap; gap: 0.3rem "
                "1.2rem; }\nnav.site-nav a { margin-right: 0; white-space: nowrap; }\n"
                "nav.toc a { display: inline-block; white-space: nowrap; }\n");
  }
  return page;
}

// Where the run's pages are and what they link to in the site.
struct RunPlace {
  fs::path dir;           ///< site/runs/<id>
  std::string suite_dir;  ///< site_slugs
  const std::set<std::int64_t>* in_site = nullptr;
  SiteFiles* files = nullptr;  ///< copy_files: where linked files are copied; else null
};

// The run's report pages in the site: its baseline's, previous run's and later runs' pages
// linked when they are in the site too, each failing or flaky test linked to its page.
RenderedRun render_run_pages(Store& store, StatusReader& statuses, const RunRecord& run,
                             const RunPlace& at) {
  RenderedRun out;
  Report report = build_report(store, run.id, at.dir, 0, ReportCases::kShown, &statuses);
  auto page = [&](std::int64_t other, const char* file) {
    return at.in_site->count(other) > 0 ? fmt::format("../{}/{}", other, file) : std::string();
  };
  if (report.differential) {
    report.differential->baseline_md = page(run.baseline_run, "report.md");
    report.differential->baseline_html = page(run.baseline_run, "report.html");
  }
  if (report.previous) {
    report.previous->previous_md = page(report.previous->previous_run, "report.md");
    report.previous->previous_html = page(report.previous->previous_run, "report.html");
  }
  for (auto& later : report.later_runs) {
    later.md = page(later.run, "report.md");
    later.html = page(later.run, "report.html");
  }
  out.digest = digest_of(report);
  for (ReportFile& f : report.files) {
    for (ReportCase& c : f.cases) {
      if (c.flaky || c.test.status == CaseStatus::kFailed || c.test.status == CaseStatus::kError) {
        c.test_page =
            "../../" + site_test_page(at.suite_dir, {f.file.path, c.test.classname, c.test.name});
      }
    }
  }
  std::string html = with_site_nav(render_html(report), run, at.suite_dir);
  std::string md = render_markdown(report);
  if (at.files != nullptr) {
    html = at.files->html(html, at.dir);
    md = at.files->markdown(md, at.dir);
  }
  out.files_written += write_if_changed(at.dir / "report.html", html) ? 1 : 0;
  out.files_written += write_if_changed(at.dir / "report.md", md) ? 1 : 0;
  out.summary = run_summary(report);
  return out;
}

// site.json's form of digests: tests are indexes into the manifest's "tests" list (interned, as
// a year of runs names the same failing tests again and again).
class TestTable {
 public:
  explicit TestTable(const json& list) {
    if (!list.is_array()) return;
    for (const auto& t : list) {
      if (t.is_array() && t.size() == 3 && t[0].is_string() && t[1].is_string() &&
          t[2].is_string()) {
        old_.push_back({t[0].get<std::string>(), t[1].get<std::string>(), t[2].get<std::string>()});
      } else {
        old_.push_back({});
      }
    }
  }
  std::size_t add(const SiteTestRef& t) {
    const auto [it, added] = index_.try_emplace(t, list_.size());
    if (added) list_.push_back({t.file, t.classname, t.name});
    return it->second;
  }
  json to_json(const SiteRunDigest& d) {
    json failing = json::array(), clusters = json::array(), files = json::array();
    for (const auto& f : d.failing) {
      failing.push_back({add(f.ref), std::string(1, f.kind), f.duration_s, f.message});
    }
    for (const auto& c : d.clusters) {
      clusters.push_back({c.signature, c.exception, c.message, c.tests});
    }
    for (const auto& [path, s] : d.slow_files) files.push_back({path, s});
    return {{"failing", failing}, {"clusters", clusters}, {"slow_files", files}};
  }
  /// A digest of the last build's site.json; nullopt when it has none or it is not readable.
  std::optional<SiteRunDigest> from_json(const json& j) const {
    try {
      SiteRunDigest d;
      for (const auto& f : j.at("failing")) {
        const auto i = f.at(0).get<std::size_t>();
        if (i >= old_.size()) return std::nullopt;
        d.failing.push_back({old_[i], f.at(1).get<std::string>().at(0), f.at(2).get<double>(),
                             f.at(3).get<std::string>()});
      }
      for (const auto& c : j.at("clusters")) {
        d.clusters.push_back({c.at(0).get<std::string>(), c.at(1).get<std::string>(),
                              c.at(2).get<std::string>(), c.at(3).get<int>()});
      }
      for (const auto& f : j.at("slow_files")) {
        d.slow_files.emplace_back(f.at(0).get<std::string>(), f.at(1).get<double>());
      }
      return d;
    } catch (const json::exception&) {
      return std::nullopt;
    }
  }
  const json& list() const { return list_; }

 private:
  std::vector<SiteTestRef> old_;
  std::map<SiteTestRef, std::size_t> index_;
  json list_ = json::array();
};

// Renders runs[i] for each i of todo, on up to one thread per core: this thread with store, the
// others each with their own connection to the same database. Each thread takes a contiguous
// part of todo (newest first), so that the run it renders next is mostly the previous run of the
// one before and its statuses are still in its StatusReader. The first error stops the rest and
// is rethrown here.
std::vector<RenderedRun> render_runs(Store& store, const std::vector<RunRecord>& runs,
                                     const std::vector<std::size_t>& todo, const fs::path& site,
                                     const std::set<std::int64_t>& in_site,
                                     const std::map<std::string, std::string>& slugs,
                                     SiteFiles* files) {
  std::vector<RenderedRun> out(todo.size());
  std::atomic<bool> stop{false};
  std::mutex failed;
  std::exception_ptr error;
  const std::size_t threads =
      std::min<std::size_t>(std::max(1U, std::thread::hardware_concurrency()), todo.size());
  auto work = [&](Store& s, std::size_t part) {
    StatusReader statuses(s);
    const std::size_t end = todo.size() * (part + 1) / threads;
    for (std::size_t i = todo.size() * part / threads; i < end && !stop; ++i) {
      const RunRecord& r = runs[todo[i]];
      out[i] = render_run_pages(
          s, statuses, r,
          {site / "runs" / std::to_string(r.id), slugs.at(r.suite), &in_site, files});
    }
  };
  auto guarded = [&](auto&& f) {
    try {
      f();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failed);
      if (!error) error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) {
    helpers.emplace_back([&, t] {
      guarded([&] {
        Store own(store.path(), Store::Purpose::kRead);
        work(own, t);
      });
    });
  }
  if (threads > 0) guarded([&] { work(store, 0); });
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
  return out;
}

json load_manifest(const fs::path& dir) {
  const std::optional<std::string> text = read_file(dir / kManifest);
  if (!text) return json::object();
  json m = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("runs") || !m["runs"].is_object()) return json::object();
  return m;
}

}  // namespace

std::map<std::string, std::string> site_slugs(const std::vector<std::string>& suites) {
  std::map<std::string, std::string> out;
  std::set<std::string> taken;
  for (const std::string& suite : suites) {
    if (out.count(suite) > 0) continue;
    std::string slug;
    for (const char c : suite) {
      const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
      slug += keep ? c : '_';
    }
    if (slug.find_first_not_of('.') == std::string::npos) slug = "suite";
    std::string unique = slug;
    for (int n = 2; taken.count(unique) > 0; ++n) unique = fmt::format("{}-{}", slug, n);
    taken.insert(unique);
    out[suite] = unique;
  }
  return out;
}

namespace {

// The tests with a page: every test a digest names as failing, errored or flaky, and the
// slowest tests of each suite's newest run (slowest: by suite); each with its failing runs from
// the digests (rows: newest first), so that no test costs a read of the database.
std::vector<SiteTest> tests_with_pages(
    const std::vector<SiteRun>& rows,
    const std::map<std::string, std::vector<SiteSlowTest>>& slowest) {
  std::map<std::pair<std::string, SiteTestRef>, SiteTest> tests;
  for (const SiteRun& r : rows) {
    for (const auto& f : r.digest.failing) {
      SiteTest& t = tests[{r.run.suite, f.ref}];
      if (t.suite.empty()) t = {r.run.suite, r.suite_dir, f.ref, {}};
      TestHistoryEntry e;
      e.run.id = r.run.id;  // what the test page shows of the run
      e.run.mode = r.run.mode;
      e.run.started_at = r.run.started_at;
      e.file = f.ref.file;
      e.test.classname = f.ref.classname;
      e.test.name = f.ref.name;
      e.test.status = f.kind == 'e'   ? CaseStatus::kError
                      : f.kind == 'k' ? CaseStatus::kPassed
                                      : CaseStatus::kFailed;
      e.flaky = f.kind == 'k';
      e.test.duration_s = f.duration_s;
      e.test.message = f.message;
      t.history.push_back(std::move(e));
    }
  }
  std::map<std::string, std::string> dirs;
  for (const SiteRun& r : rows) dirs.try_emplace(r.run.suite, r.suite_dir);
  for (const auto& [suite, list] : slowest) {
    for (const auto& s : list) {
      SiteTest& t = tests[{suite, s.ref}];
      if (t.suite.empty()) t = {suite, dirs.at(suite), s.ref, {}};
    }
  }
  std::vector<SiteTest> out;
  out.reserve(tests.size());
  for (auto& [key, t] : tests) out.push_back(std::move(t));
  return out;
}

// The slowest tests of a run, slowest first.
std::vector<SiteSlowTest> slowest_tests(Store& store, const SiteRun& run, std::size_t n) {
  std::vector<StoredCase> cases = store.cases(run.run.id);
  n = std::min(n, cases.size());
  std::partial_sort(cases.begin(), cases.begin() + static_cast<std::ptrdiff_t>(n), cases.end(),
                    [](const StoredCase& a, const StoredCase& b) {
                      if (a.test.duration_s != b.test.duration_s) {
                        return a.test.duration_s > b.test.duration_s;
                      }
                      return std::tie(a.file, a.test.classname, a.test.name) <
                             std::tie(b.file, b.test.classname, b.test.name);
                    });
  std::vector<SiteSlowTest> out;
  for (std::size_t i = 0; i < n; ++i) {
    SiteTestRef ref{cases[i].file, cases[i].test.classname, cases[i].test.name};
    out.push_back({ref, cases[i].test.duration_s, site_test_page(run.suite_dir, ref)});
  }
  return out;
}

// Removes the .html files under dir/tests that this build did not write (tests whose runs left).
int remove_stale_test_pages(const fs::path& dir, const std::set<fs::path>& kept) {
  int removed = 0;
  std::error_code ec;
  if (!fs::is_directory(dir / "tests", ec)) return 0;
  std::vector<fs::path> stale;
  for (auto it = fs::recursive_directory_iterator(dir / "tests", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".html" && kept.count(it->path()) == 0)
      stale.push_back(it->path());
  }
  for (const auto& p : stale) removed += fs::remove(p, ec) ? 1 : 0;
  return removed;
}

// The pages across runs (index, suite, test, search and gap-log pages), each written when it
// changed; the test pages of tests no longer in the site removed.
void write_pages(Store& store, const fs::path& root, std::vector<SiteRun> rows,
                 const std::map<std::string, std::string>& slugs, SiteResult& result) {
  std::map<std::int64_t, std::string> run_pages;
  for (const auto& row : rows)
    run_pages[row.run.id] = fmt::format("runs/{}/report.html", row.run.id);
  auto write = [&](const fs::path& path, const std::string& text) {
    result.files_written += write_if_changed(path, text) ? 1 : 0;
  };
  write(root / "index.html", render_site_index(rows, store.path().filename().string()));
  std::map<std::string, std::vector<SiteSlowTest>> slowest;
  for (const auto& row : rows) {  // newest first: a suite's first row is its newest run
    if (slowest.count(row.run.suite) == 0) slowest[row.run.suite] = slowest_tests(store, row, 10);
  }
  const std::vector<SiteTest> pages = tests_with_pages(rows, slowest);
  std::map<std::string, std::vector<SiteRun>> of_suite;
  for (auto& row : rows) of_suite[row.run.suite].push_back(std::move(row));
  for (const auto& [suite, slug] : slugs) {
    write(root / "suites" / slug / "index.html",
          render_site_suite(suite, of_suite[suite], slowest[suite]));
  }
  std::set<fs::path> kept;
  for (const SiteTest& t : pages) {
    const fs::path path = root / site_test_page(t.suite_dir, t.ref);
    kept.insert(path);
    write(path, render_site_test(t, of_suite[t.suite]));
  }
  remove_stale_test_pages(root, kept);
  result.test_pages = static_cast<int>(pages.size());
  std::map<std::string, std::int64_t> newest_runs;
  for (const auto& [suite, runs] : of_suite) newest_runs[suite] = runs.front().run.id;
  write(root / "search.html", render_site_search(pages, newest_runs));
  write(root / "gaps.html", render_site_gaps(GapLog(store).list(), run_pages));
}

}  // namespace

SiteResult build_site(Store& store, const SiteOptions& o) {
  const fs::path root = fs::absolute(o.dir).lexically_normal();
  std::vector<RunRecord> runs;  // newest first
  for (auto& r : store.runs(-1)) {
    if (r.status == "running") continue;
    if (!o.suite.empty() && r.suite != o.suite) continue;
    runs.push_back(std::move(r));
  }
  if (!o.suite.empty() && runs.empty()) {
    throw UsageError(fmt::format("no finished run of suite \"{}\" in {}", printable(o.suite),
                                 store.path().string()));
  }
  std::set<std::int64_t> in_site;
  std::vector<std::string> suite_names;
  for (const auto& r : runs) {
    in_site.insert(r.id);
    suite_names.push_back(r.suite);
  }
  const std::map<std::string, std::string> slugs = site_slugs(suite_names);
  std::map<std::int64_t, std::vector<std::int64_t>> later;  // run -> runs naming it, oldest first
  for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
    if (r->previous_run > 0) later[r->previous_run].push_back(r->id);
    if (r->baseline_run > 0 && r->baseline_run != r->previous_run) {
      later[r->baseline_run].push_back(r->id);
    }
  }

  const json old = o.full ? json::object() : load_manifest(root);
  const TestTable old_tests(old.contains("tests") ? old["tests"] : json::array());
  TestTable tests(json::array());
  json manifest{{"format", kSiteFormat},
                {"generator", "devshim runner " DEVSHIM_VERSION},
                {"database", store.path().string()},
                {"copy_files", o.copy_files},
                {"runs", json::object()}};
  SiteResult result;
  // The runs whose pages are missing or stale are rendered, the others keep site.json's summary
  // and digest.
  std::vector<json> summaries(runs.size());
  std::vector<SiteRunDigest> digests(runs.size());
  std::vector<std::string> prints(runs.size());
  std::vector<std::size_t> todo;
  const bool same_files = old.value("copy_files", false) == o.copy_files;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string id = std::to_string(runs[i].id);
    prints[i] = fingerprint(runs[i], in_site, later[runs[i].id]);
    std::error_code ec;
    std::optional<SiteRunDigest> digest;
    if (same_files && old.contains("runs") && old["runs"].contains(id) &&
        old["runs"][id].value("fingerprint", "") == prints[i] &&
        fs::is_regular_file(root / "runs" / id / "report.html", ec) &&
        old["runs"][id].contains("digest") &&
        (digest = old_tests.from_json(old["runs"][id]["digest"]))) {
      summaries[i] = old["runs"][id]["summary"];
      digests[i] = std::move(*digest);
    } else {
      todo.push_back(i);
    }
  }
  std::optional<SiteFiles> files;
  if (o.copy_files) files.emplace(root);
  std::vector<RenderedRun> rendered =
      render_runs(store, runs, todo, root, in_site, slugs, files ? &*files : nullptr);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    summaries[todo[k]] = rendered[k].summary;
    digests[todo[k]] = std::move(rendered[k].digest);
    result.files_written += rendered[k].files_written;
  }
  result.pages_rendered = static_cast<int>(todo.size());
  result.files_copied = files ? files->copied() : 0;
  std::vector<SiteRun> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    manifest["runs"][std::to_string(r.id)] = {{"fingerprint", prints[i]},
                                              {"summary", summaries[i]},
                                              {"digest", tests.to_json(digests[i])}};
    rows.push_back({r, run_versions(r), comparable_policy(r), slugs.at(r.suite), summaries[i],
                    std::move(digests[i])});
  }
  manifest["tests"] = tests.list();
  // Runs pruned from the database (or of another suite) leave the site.
  if (old.contains("runs")) {
    for (const auto& [id, entry] : old["runs"].items()) {
      if (manifest["runs"].contains(id)) continue;
      std::error_code ec;
      fs::remove_all(root / "runs" / id, ec);
      ++result.pages_removed;
    }
  }

  result.runs = static_cast<int>(rows.size());
  write_pages(store, root, std::move(rows), slugs, result);
  if (write_if_changed(root / kManifest,
                       manifest.dump(1, ' ', false, json::error_handler_t::replace) + "\n")) {
    ++result.files_written;
  }
  return result;
}

}  // namespace devshim
