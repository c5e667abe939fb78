// Links from a report to the source lines it names: into the local checkout (relative to the
// report's folder) and upstream (the suite's source_url template, the project's commit).
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>

#include "parsers/test_result.h"

namespace devshim {

/// Where a test's source line is: a link relative to the report's folder into the local
/// checkout ("../../suites/x/tests/test_a.py#L12"), and an upstream URL when the suite gives a
/// source_url template and the project is a git checkout. Either may be empty.
struct SourceLinks {
  std::string local;
  std::string upstream;
};

/// A link from the folder from_dir to target, relative (generic separators); target as it is when
/// no relative path joins them.
std::string relative_link(const std::filesystem::path& target,
                          const std::filesystem::path& from_dir);

/// Fills a source_url template: {commit}, {path}, {line}. Empty when the template or the commit
/// is empty, or the template is no http(s) URL (is_web_url: a stored javascript: never links).
std::string upstream_url(const std::string& url_template, const std::string& commit,
                         const std::string& path, int line);

/// Where a run's source locations are linked from and to.
struct LinkBase {
  std::filesystem::path project;       ///< the run's project root (absolute)
  std::filesystem::path git_toplevel;  ///< its git checkout; empty: unknown (the project's own)
  std::filesystem::path report_dir;    ///< where the report is written (absolute)
  std::string source_url;              ///< the suite's upstream template (may be empty)
  std::string commit;                  ///< the project's commit (may be empty)
};

/// The links of a source location. A relative path is the project's. An absolute one (a
/// GoogleTest __FILE__, a library's call site) gets a local link only when the file exists here,
/// and an upstream link only when it lies inside the git checkout: a header of /usr/include has
/// none.
SourceLinks source_links(const SourceLocation& loc, const LinkBase& base);

/// source_links of many locations with one base: what depends on the path alone (the file's
/// existence, the relative link, the path inside the checkout) is worked out once per path.
class SourceLinker {
 public:
  explicit SourceLinker(LinkBase base);
  SourceLinks operator()(const SourceLocation& loc);
  const std::filesystem::path& report_dir() const { return base_.report_dir; }

 private:
  struct PathLinks {
    bool has_local = false;
    std::string local;    ///< without the line's anchor
    std::string in_repo;  ///< empty: no upstream link
  };
  LinkBase base_;
  std::unordered_map<std::string, PathLinks> by_path_;
};

}  // namespace devshim
