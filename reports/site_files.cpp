#include "reports/site_files.h"

#include <system_error>

#include "reports/html_text.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded (html::safe_href and the Markdown writer encode what a path may hold).
std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The HTML entities html::escape writes, undone.
std::string unescaped(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool matched = false;
    for (const auto& [entity, c] : {std::pair<std::string_view, char>{"&amp;", '&'},
                                    {"&lt;", '<'},
                                    {"&gt;", '>'},
                                    {"&quot;", '"'},
                                    {"&#39;", '\''}}) {
      if (s.substr(i, entity.size()) == entity) {
        out += c;
        i += entity.size() - 1;
        matched = true;
        break;
      }
    }
    if (!matched) out += s[i];
  }
  return out;
}

bool inside(const fs::path& path, const fs::path& folder) {
  const fs::path rel = path.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

SiteFiles::SiteFiles(const fs::path& site) : site_(site.lexically_normal()) {}

int SiteFiles::copied() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return copied_;
}

std::string SiteFiles::html(std::string_view page, const fs::path& page_dir) {
  return rewrite(page, page_dir, Syntax::kHtml);
}

std::string SiteFiles::markdown(std::string_view page, const fs::path& page_dir) {
  return rewrite(page, page_dir, Syntax::kMarkdown);
}

std::string SiteFiles::rewrite(std::string_view page, const fs::path& page_dir, Syntax syntax) {
  const std::string_view open = syntax == Syntax::kHtml ? "href=\"" : "](";
  const char close = syntax == Syntax::kHtml ? '"' : ')';
  std::string out;
  out.reserve(page.size());
  std::size_t at = 0;
  for (std::size_t found = page.find(open); found != std::string_view::npos;
       found = page.find(open, at)) {
    const std::size_t start = found + open.size();
    const std::size_t end = page.find(close, start);
    if (end == std::string_view::npos) break;
    out.append(page.substr(at, start - at));
    const std::string_view link = page.substr(start, end - start);
    const std::size_t hash = link.find('#');
    const std::string_view target = link.substr(0, hash);
    const std::string_view fragment =
        hash == std::string_view::npos ? std::string_view() : link.substr(hash);
    const std::string plain = syntax == Syntax::kHtml ? unescaped(target) : std::string(target);
    std::string moved = relink(plain, page_dir);
    if (moved.empty()) {
      out.append(link);
    } else {
      moved = html::safe_href(moved);
      out += syntax == Syntax::kHtml ? html::escape(moved) : moved;
      out.append(fragment);
    }
    out += close;
    at = end + 1;
  }
  out.append(page.substr(at));
  return out;
}

std::string SiteFiles::relink(std::string_view target, const fs::path& page_dir) {
  if (target.empty() || target.front() == '/' || target.find(':') != std::string_view::npos) {
    return "";
  }
  const fs::path source = (page_dir / percent_decoded(target)).lexically_normal();
  if (inside(source, site_)) return "";
  std::error_code ec;
  if (!fs::is_regular_file(source, ec)) return "";
  const fs::path copy = site_ / "files" / source.relative_path();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (done_.insert(copy).second) {
      fs::create_directories(copy.parent_path(), ec);
      const bool same = fs::is_regular_file(copy, ec) &&
                        fs::file_size(copy, ec) == fs::file_size(source, ec) &&
                        fs::last_write_time(copy, ec) >= fs::last_write_time(source, ec);
      if (!same) {
        fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
        if (ec) return "";
        ++copied_;
      }
    } else if (!fs::is_regular_file(copy, ec)) {
      return "";
    }
  }
  return copy.lexically_relative(page_dir.lexically_normal()).generic_string();
}

}  // namespace devshim
