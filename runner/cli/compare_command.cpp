#include "runner/cli/compare_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "base/printable.h"
#include "reports/comparison_report.h"
#include "reports/report.h"
#include "reports/write_reports.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One rendering written by `runner compare -o DIR`.
struct ComparisonFormat {
  const char* name;
  const char* file;
  std::string (*render)(const ComparisonReport&);
};

const std::vector<ComparisonFormat>& comparison_formats() {
  static const std::vector<ComparisonFormat> formats{
      {"md", "compare.md", render_comparison_markdown},
      {"json", "compare.json", render_comparison_json},
      {"html", "compare.html", render_comparison_html}};
  return formats;
}

std::vector<const ComparisonFormat*> parse_comparison_formats(const std::string& names) {
  std::vector<const ComparisonFormat*> out;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    const std::string name = names.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    const ComparisonFormat* found = nullptr;
    for (const auto& f : comparison_formats()) {
      if (name == f.name) found = &f;
    }
    if (found == nullptr) {
      throw UsageError(
          fmt::format("unknown compare format \"{}\" (known: md, json, html)", printable(name)));
    }
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
  }
  if (out.empty()) {
    for (const auto& f : comparison_formats()) out.push_back(&f);
  }
  return out;
}

// Printed output is read from anywhere: its local links become absolute paths.
void make_links_absolute(ComparisonReport& report, const fs::path& from) {
  auto absolute = [&](std::string& link) {
    if (!link.empty() && !fs::path(link).is_absolute()) {
      link = (from / link).lexically_normal().string();
    }
  };
  for (auto& [cls, links] : report.links) {
    for (SourceLinks& l : links) absolute(l.local);
  }
  for (std::string* link : {&report.a_md, &report.a_html, &report.b_md, &report.b_html}) {
    absolute(*link);
  }
}

}  // namespace

int compare_command(const fs::path& db_path, const std::string& a, const std::string& b,
                    bool as_json, const std::string& formats, const std::string& dir,
                    const FailOnList& fail_on) {
  if (!fs::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  if (dir.empty() && !formats.empty()) {
    throw UsageError("--format names the files written to -o DIR: give -o DIR too");
  }
  const auto wanted = parse_comparison_formats(formats);
  Store store(db_path, Store::Purpose::kRead);
  const RunRecord run_a = store.resolve_run(a);
  const RunRecord run_b = store.resolve_run(b);
  if (!dir.empty()) {
    // Written: links relative to the folder, so that it can be moved or published whole.
    const fs::path out(dir);
    create_report_folder(out);
    const ComparisonReport report = build_comparison_report(store, run_a, run_b, out);
    for (const ComparisonFormat* f : wanted) {
      write_file_atomically(out / f->file, f->render(report));
      fmt::print("{}\n", fs::absolute(out / f->file).lexically_normal().string());
    }
    const ComparisonVerdict verdict = comparison_verdict(fail_on, report.comparison);
    fmt::print("runner: {}\n", verdict.reason);
    return verdict.exit_code;
  }
  ComparisonReport report = build_comparison_report(store, run_a, run_b, fs::current_path());
  make_links_absolute(report, fs::current_path());
  const ComparisonVerdict verdict = comparison_verdict(fail_on, report.comparison);
  if (as_json) {
    fmt::print("{}\n", comparison_json(report).dump(2, ' ', false, json::error_handler_t::replace));
    std::fflush(stdout);
    fmt::print(stderr, "runner: {}\n", verdict.reason);  // stdout stays one JSON document
  } else {
    fmt::print("{}", render_comparison_text(report));
    fmt::print("runner: {}\n", verdict.reason);
  }
  return verdict.exit_code;
}

}  // namespace devshim
