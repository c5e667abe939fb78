// The report fuzz target's model and checks (report_fuzz): a Report whose test names, messages,
// tracebacks and paths come from the input, rendered to Markdown and HTML, and the properties the
// renderers promise for any text from tests:
// - Markdown: every table row has as many unescaped `|` as its header; fences and <details>
//   close; no table row is split over lines.
// - HTML: outside the page's own <script> (there is exactly one), every tag is well formed
//   (quoted attributes, no `<` inside a tag, no bare `<` in text) and elements nest and close
//   (a stack check over every non-void element: tr, td, details, pre, a, ...); no href uses a
//   javascript:, data: or vbscript: scheme.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_checks.h"
#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/report.h"

namespace devshim::fuzz {

/// The input's NUL-separated pieces, in order, starting over at the end (every field gets text
/// even from a one-piece input).
class Pieces {
 public:
  explicit Pieces(std::string_view data) : data_(data) {}
  std::string next() {
    if (data_.empty()) return "";
    if (pos_ > data_.size()) pos_ = 0;
    auto end = data_.find('\0', pos_);
    if (end == std::string_view::npos) end = data_.size();
    std::string s(data_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  int small(int limit) {
    const std::string s = next();
    return s.empty() ? 0 : static_cast<unsigned char>(s[0]) % limit;
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

/// Links as build_report makes them: the path, relative to the report's folder, unencoded.
inline SourceLinks fuzz_links(const SourceLocation& loc) {
  SourceLinks links;
  if (loc.path.empty()) return links;
  const std::string anchor = loc.line > 0 ? "#L" + std::to_string(loc.line) : "";
  links.local = "../../" + loc.path + anchor;
  links.upstream = "https://example.com/blob/abc/" + loc.path + anchor;
  return links;
}

inline Report fuzz_report(std::string_view data) {
  Pieces in(data);
  Report r;
  r.run.id = 7;
  r.run.suite = in.next();
  r.run.mode = in.small(2) == 0 ? "shim" : "baseline";
  r.run.status = "finished";
  r.run.project_root = in.next();
  r.run.command_line = {"runner", "run", in.next()};
  r.run.targets = {in.next()};
  r.run.host = in.next();
  r.environment = nlohmann::json::object();
  r.environment["python"] = in.next();
  r.duration_s = 12;

  static constexpr CaseStatus kStatuses[] = {CaseStatus::kPassed,  CaseStatus::kFailed,
                                             CaseStatus::kError,   CaseStatus::kSkipped,
                                             CaseStatus::kXfailed, CaseStatus::kXpassed};
  static const char* const kCulprits[] = {"", "crashed", "timeout", "interrupted"};
  static const char* const kFileStatuses[] = {"failed", "passed", "crashed", "no_tests"};
  for (int fi = 0; fi < 2; ++fi) {
    ReportFile f;
    f.file.path = in.next();
    f.file.note = in.next();
    f.file.duration_s = 1.5;
    f.status = kFileStatuses[in.small(4)];
    f.log_link = "logs/" + f.file.path + ".log";
    for (int ci = 0; ci < 3; ++ci) {
      ReportCase c;
      c.test.classname = in.next();
      c.test.name = in.next();
      c.test.status = kStatuses[in.small(6)];
      c.test.exception = in.next();
      c.test.message = in.next();
      c.test.traceback = in.next();
      c.test.culprit = kCulprits[in.small(4)];
      c.test.source = {in.next(), in.small(100)};
      c.links = fuzz_links(c.test.source);
      if (is_failure(c.test.status)) c.signature = "0123456789abcdef";
      f.counts[std::string(to_string(c.test.status))] += 1;
      f.cases.push_back(std::move(c));
    }
    r.files.push_back(std::move(f));
  }

  ReportCluster cl;
  cl.signature = "0123456789abcdef";
  cl.exception = in.next();
  cl.message = in.next();
  cl.example_message = in.next();
  cl.example_traceback = in.next();
  for (const ReportFile& f : r.files) {
    for (const ReportCase& c : f.cases) {
      cl.tests.push_back({f.file.path, c.test.classname, c.test.name, c.links});
    }
  }
  r.clusters.push_back(std::move(cl));

  const std::string file = in.next(), classname = in.next(), name = in.next(), msg = in.next();
  const SourceLinks links = fuzz_links({file, 3});
  ReportDifferential d;
  d.baseline_run = 6;
  d.counts["regression"] = 1;
  d.regressions.push_back({file, classname, name, "passed", "failed", msg, links});
  r.differential = d;
  ReportPrevious p;
  p.previous_run = 5;
  p.started_at = "2026-11-21T00:00:00Z";
  p.new_failures.push_back({file, classname, name, "passed", "failed", msg, links});
  p.fixed.push_back({file, classname, name, "failed", "passed", msg, links});
  r.previous = p;
  ReportFlaky fl{file, classname, name, {}, links};
  fl.attempts.push_back({file, classname, name, 1, CaseStatus::kFailed, msg});
  fl.attempts.push_back({file, classname, name, 2, CaseStatus::kPassed, ""});
  r.flaky.push_back(fl);

  ReportRedirection red;
  red.shim = "devshim";
  red.api = in.next();
  red.requested = in.next();
  red.used = in.next();
  red.count = 3;
  red.files = 1;
  red.sites = 1;
  red.first_site = {file, 9};
  red.first_function = in.next();
  red.links = fuzz_links(red.first_site);
  r.redirections.push_back(red);

  GapEntry g;
  g.api = in.next();
  g.kind = "failing";
  g.status = "open";
  g.severity = "high";
  g.why = in.next();
  g.note = in.next();
  g.tests = 1;
  g.files = 1;
  g.test_list.push_back({file, classname, name});
  r.gaps.push_back(g);

  for (const ReportFile& f : r.files) {
    r.summary.files[f.status] += 1;
    ++r.summary.files_total;
    for (const auto& [status, n] : f.counts) {
      r.summary.tests[status] += n;
      r.summary.tests_total += n;
    }
  }
  r.summary.pass_rate = 0.5;
  return r;
}

/// `|` not escaped by a backslash.
inline int table_pipes(std::string_view line) {
  int n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
    } else if (line[i] == '|') {
      ++n;
    }
  }
  return n;
}

inline void check_markdown(std::string_view md) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at <= md.size();) {
    auto end = md.find('\n', at);
    if (end == std::string_view::npos) end = md.size();
    lines.push_back(md.substr(at, end - at));
    at = end + 1;
  }
  std::size_t fence = 0;  // length of the open fence; 0: none
  int details = 0;
  int header_pipes = -1;  // in a table: the header's cell separators
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (fence > 0) {
      if (line.size() >= fence && line.find_first_not_of('`') == std::string_view::npos) fence = 0;
      continue;
    }
    if (line.starts_with("```")) {
      fence = std::min(line.find_first_not_of('`'), line.size());
      header_pipes = -1;
      continue;
    }
    for (auto at = line.find("<details>"); at != std::string_view::npos;
         at = line.find("<details>", at + 1)) {
      ++details;
    }
    for (auto at = line.find("</details>"); at != std::string_view::npos;
         at = line.find("</details>", at + 1)) {
      --details;
      check(details >= 0, "markdown: </details> without <details>");
    }
    if (!line.starts_with("|")) {
      header_pipes = -1;
      continue;
    }
    check(line.back() == '|', "markdown: table row does not end with |");
    if (header_pipes < 0) {
      check(i + 1 < lines.size() && lines[i + 1].starts_with("| ---"),
            "markdown: table row outside a table (a row split over lines?)");
      header_pipes = table_pipes(line);
      check(table_pipes(lines[i + 1]) == header_pipes, "markdown: delimiter row cells");
      ++i;
      continue;
    }
    check(table_pipes(line) == header_pipes, "markdown: row cells differ from the header's");
  }
  check(fence == 0, "markdown: unclosed code fence");
  check(details == 0, "markdown: unclosed <details>");
}

inline bool is_void_element(std::string_view name) {
  static constexpr std::string_view kVoid[] = {"area",   "base",  "br",    "col",  "embed",
                                               "hr",     "img",   "input", "link", "meta",
                                               "source", "track", "wbr"};
  return std::find(std::begin(kVoid), std::end(kVoid), name) != std::end(kVoid);
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline void check_href(std::string_view value) {
  std::string v = lower(value);
  v.erase(0, std::min(v.find_first_not_of(" \t\r\n\f"), v.size()));
  check(!v.starts_with("javascript:") && !v.starts_with("data:") && !v.starts_with("vbscript:"),
        "html: href with a script scheme");
}

inline void check_html(std::string_view page) {
  const std::string low = lower(page);
  const auto script = low.find("<script");
  check(script != std::string::npos, "html: the page's script is missing");
  check(low.find("<script", script + 1) == std::string::npos, "html: a second <script");
  const auto script_end = low.find("</script>", script);
  check(script_end != std::string::npos, "html: <script> not closed");
  std::string body(page.substr(0, script));
  body += page.substr(script_end + 9);

  std::vector<std::string> open;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '<') continue;
    if (body.compare(i, 4, "<!--") == 0) {
      i = body.find("-->", i);
      check(i != std::string::npos, "html: unclosed comment");
      continue;
    }
    if (body.compare(i, 2, "<!") == 0) {  // <!DOCTYPE html>
      i = body.find('>', i);
      check(i != std::string::npos, "html: unclosed declaration");
      continue;
    }
    std::size_t j = i + 1;
    const bool closing = j < body.size() && body[j] == '/';
    if (closing) ++j;
    const std::size_t name_at = j;
    while (j < body.size() && std::isalnum(static_cast<unsigned char>(body[j]))) ++j;
    check(j > name_at, "html: '<' that starts no tag (unescaped text?)");
    const std::string name = lower(std::string_view(body).substr(name_at, j - name_at));
    // Attributes up to the tag's end: name, or name="value" / name='value'.
    bool self_closing = false;
    for (;;) {
      check(j < body.size(), "html: tag not closed");
      const char c = body[j];
      if (c == '>') break;
      check(c != '<', "html: '<' inside a tag");
      if (c == '/') {
        self_closing = true;
        ++j;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++j;
        continue;
      }
      const std::size_t attr_at = j;
      while (j < body.size() && body[j] != '=' && body[j] != '>' && body[j] != '/' &&
             !std::isspace(static_cast<unsigned char>(body[j]))) {
        check(body[j] != '"' && body[j] != '\'' && body[j] != '<', "html: bad attribute name");
        ++j;
      }
      const std::string attr = lower(std::string_view(body).substr(attr_at, j - attr_at));
      if (j < body.size() && body[j] == '=') {
        ++j;
        check(j < body.size() && (body[j] == '"' || body[j] == '\''),
              "html: unquoted attribute value");
        const char quote = body[j];
        const auto end = body.find(quote, j + 1);
        check(end != std::string::npos, "html: unterminated attribute value");
        const std::string_view value = std::string_view(body).substr(j + 1, end - j - 1);
        check(value.find('<') == std::string_view::npos, "html: '<' in an attribute value");
        if (attr == "href") check_href(value);
        j = end + 1;
      }
    }
    i = j;
    if (is_void_element(name) || self_closing) continue;
    if (!closing) {
      open.push_back(name);
    } else {
      check(!open.empty() && open.back() == name, "html: closing tag does not match the open one");
      open.pop_back();
    }
  }
  check(open.empty(), "html: elements left open");
}

/// report_fuzz: render both formats and check them. With DEVSHIM_FUZZ_DUMP set, the rendered
/// Markdown and HTML go to stderr first (to see what a found input does).
inline void run_report(std::string_view data) {
  const Report r = fuzz_report(data);
  const std::string md = render_markdown(r);
  const std::string page = render_html(r);
  if (std::getenv("DEVSHIM_FUZZ_DUMP") != nullptr) {
    std::fprintf(stderr, "%s\n----\n%s\n", md.c_str(), page.c_str());
  }
  check_markdown(md);
  check_html(page);
  (void)md_code_block(data);
  const std::string cell = md_cell(data);
  check(cell.find('\n') == std::string::npos, "md_cell keeps a newline");
  check(table_pipes(cell) == 0, "md_cell leaves an unescaped |");
}

}  // namespace devshim::fuzz
