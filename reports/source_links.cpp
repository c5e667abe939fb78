#include "reports/source_links.h"

#include <fmt/format.h>

#include <system_error>
#include <utility>

#include "parsers/text.h"

namespace devshim {

namespace fs = std::filesystem;

std::string relative_link(const fs::path& target, const fs::path& from_dir) {
  fs::path rel = target.lexically_normal().lexically_relative(from_dir.lexically_normal());
  return rel.empty() ? target.generic_string() : rel.generic_string();
}

std::string upstream_url(const std::string& url_template, const std::string& commit,
                         const std::string& path, int line) {
  if (url_template.empty() || commit.empty() || path.empty()) return "";
  // Only web links: a stored template of another scheme (javascript:, data:) never becomes a link.
  if (!is_web_url(url_template)) return "";
  std::string templ = url_template;
  if (line <= 0) {  // no line to point at: drop the fragment that would name one
    if (auto at = templ.find("#L{line}"); at != std::string::npos) templ.erase(at, 8);
  }
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ.compare(i, 8, "{commit}") == 0) {
      out += commit;
      i += 7;
    } else if (templ.compare(i, 6, "{path}") == 0) {
      out += path;
      i += 5;
    } else if (templ.compare(i, 6, "{line}") == 0) {
      out += std::to_string(line);
      i += 5;
    } else {
      out += templ[i];
    }
  }
  return out;
}

SourceLinker::SourceLinker(LinkBase base) : base_(std::move(base)) {}

SourceLinks SourceLinker::operator()(const SourceLocation& loc) {
  SourceLinks links;
  if (loc.path.empty()) return links;
  auto [it, fresh] = by_path_.try_emplace(loc.path);
  PathLinks& p = it->second;
  if (fresh) {
    const fs::path given(loc.path);
    const fs::path source =
        given.is_absolute() ? given : (base_.project / given).lexically_normal();
    std::error_code ec;
    if (!given.is_absolute() || fs::is_regular_file(source, ec)) {
      p.local = relative_link(source, base_.report_dir);
      p.has_local = true;
    }
    // {path}: the source's path inside the git checkout (the project's path when that is
    // unknown).
    const fs::path in_repo = base_.git_toplevel.empty()
                                 ? (given.is_absolute() ? fs::path() : given)
                                 : source.lexically_relative(base_.git_toplevel);
    if (!in_repo.empty() && *in_repo.begin() != "..") p.in_repo = in_repo.generic_string();
  }
  if (p.has_local) {
    links.local = loc.line > 0 ? fmt::format("{}#L{}", p.local, loc.line) : p.local;
  }
  if (!p.in_repo.empty()) {
    links.upstream = upstream_url(base_.source_url, base_.commit, p.in_repo, loc.line);
  }
  return links;
}

SourceLinks source_links(const SourceLocation& loc, const LinkBase& base) {
  return SourceLinker(base)(loc);
}

}  // namespace devshim
