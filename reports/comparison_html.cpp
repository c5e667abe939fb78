// compare.html (reports/comparison_report.h): both runs side by side, the classes, and every
// test that changed, folded per class.
#include <fmt/format.h>

#include "parsers/text.h"
#include "reports/comparison_report.h"
#include "reports/html_text.h"
#include "runner/results/native_id.h"

namespace devshim {

namespace {

using nlohmann::json;

class ComparisonPage {
 public:
  explicit ComparisonPage(const ComparisonReport& report) : report_(report) {}

  std::string render() {
    const RunComparison& c = report_.comparison;
    out_ += html::page_head(fmt::format("devshim · run {} compared with run {}", c.b.id, c.a.id));
    out_ += "<body>\n<header class=\"run\">\n";
    out_ += fmt::format("<h1>Run {} compared with run {}</h1>\n", c.b.id, c.a.id);
    runs();
    out_ += "</header>\n<main>\n";
    classes();
    for (const auto& [cls, meaning] : comparison_classes()) {
      if (cls != "same") tests(cls, meaning);
    }
    out_ += "</main>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void text(std::string_view s) { out_ += html::escape(s); }

  void link(std::string_view href, std::string_view label) {
    const std::string safe = html::safe_href(href);
    if (safe.empty()) return;
    out_ += "<a href=\"" + html::escape(safe) +
            (safe.starts_with("http") ? "\" rel=\"noreferrer\">" : "\">");
    text(label);
    out_ += "</a> ";
  }

  void badge(std::string_view status) {
    out_ += "<span class=\"status status-";
    text(status);
    out_ += "\">";
    text(status);
    out_ += "</span>";
  }

  // Both runs side by side: what besides the tests makes them differ.
  void runs() {
    const RunComparison& c = report_.comparison;
    const json a = comparison_run_json(c.a);
    const json b = comparison_run_json(c.b);
    out_ += "<table class=\"runs\"><thead><tr><th></th><th>A</th><th>B</th></tr></thead><tbody>\n";
    auto row = [&](const char* label, const std::string& va, const std::string& vb) {
      out_ += fmt::format("<tr><th>{}</th><td>", label);
      text(va);
      out_ += "</td><td>";
      text(vb);
      out_ += "</td></tr>\n";
    };
    auto field = [](const json& r, const char* key) {
      return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "-";
    };
    row("Run", std::to_string(c.a.id), std::to_string(c.b.id));
    row("Suite", c.a.suite, c.b.suite);
    row("Mode", c.a.mode, c.b.mode);
    for (const auto& [label, key] : {std::pair{"Policy", "policy"},
                                     {"Shim", "shim_version"},
                                     {"torch", "torch"},
                                     {"Python", "python"}}) {
      row(label, field(a, key), field(b, key));
    }
    row("Started", c.a.started_at, c.b.started_at);
    row("Host", c.a.host, c.b.host);
    row("Commit", c.a.project_commit.substr(0, 12), c.b.project_commit.substr(0, 12));
    out_ += "<tr><th>Reports</th><td>";
    link(report_.a_html, "report.html");
    link(report_.a_md, "report.md");
    out_ += "</td><td>";
    link(report_.b_html, "report.html");
    link(report_.b_md, "report.md");
    out_ += "</td></tr>\n</tbody></table>\n";
  }

  void classes() {
    const RunComparison& c = report_.comparison;
    out_ +=
        "<section id=\"classes\">\n<h2>Classes</h2>\n<table><thead><tr><th>Class</th>"
        "<th>Tests</th><th>Meaning</th></tr></thead><tbody>\n";
    for (const auto& [cls, meaning] : comparison_classes()) {
      const int n = c.counts.at(cls);
      out_ += "<tr><td>";
      if (cls != "same" && n > 0) {
        out_ += fmt::format("<a href=\"#class-{}\">{}</a>", cls, cls);
      } else {
        out_ += cls;
      }
      out_ += fmt::format("</td><td>{}</td><td>", n);
      text(meaning);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
    if (const std::string renumbered = comparison_renumbered_text(c); !renumbered.empty()) {
      out_ += "<p>";
      text(renumbered);
      out_ += "</p>\n";
    }
    out_ += "</section>\n";
  }

  // One class's tests, folded: "file · class.name", A → B, links, message.
  void tests(const std::string& cls, const std::string& meaning) {
    const RunComparison& c = report_.comparison;
    const auto it = c.tests.find(cls);
    const std::size_t n = it == c.tests.end() ? 0 : it->second.size();
    out_ += fmt::format(
        "<section id=\"class-{}\">\n<h2>{} <span class=\"count\">({})</span></h2>\n", cls, cls, n);
    out_ += "<p class=\"hint\">";
    text(meaning);
    out_ += "</p>\n";
    if (n == 0) {
      out_ += "<p>None.</p>\n</section>\n";
      return;
    }
    const std::vector<SourceLinks>& links = report_.links.at(cls);
    out_ += fmt::format("<details class=\"tests\" open><summary>{} test{}</summary>\n<ul>\n", n,
                        n == 1 ? "" : "s");
    for (std::size_t i = 0; i < n; ++i) {
      const ComparedTest& t = it->second[i];
      out_ += "<li class=\"test\">";
      text(test_label(report_.comparison.b, t.file, t.classname, t.name));
      out_ += " ";
      badge(t.status_a);
      out_ += " → ";
      badge(t.status_b);
      out_ += " <span class=\"links\">";
      link(links[i].local, "source");
      link(links[i].upstream, "upstream");
      out_ += "</span>";
      if (!t.message.empty()) {
        out_ += "<br><span class=\"text\">";
        text(t.message.size() > kMessageBytes
                 ? std::string(cut_utf8(t.message, kMessageBytes)) + " …"
                 : t.message);
        out_ += "</span>";
      }
      out_ += "</li>\n";
    }
    out_ += "</ul>\n</details>\n</section>\n";
  }

  static constexpr std::size_t kMessageBytes = 2000;  ///< a longer message is cut

  const ComparisonReport& report_;
  std::string out_;
};

}  // namespace

std::string render_comparison_html(const ComparisonReport& report) {
  return ComparisonPage(report).render();
}

}  // namespace devshim
