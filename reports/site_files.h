// Copies the files a site's pages link to outside the site (logs, sources) into the site, and
// links the copies instead (`runner site --copy-files`): the folder then works moved to another
// place or published as it is (GitHub Pages, any static host).
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace devshim {

/// One per build; its methods may be called from several threads at once.
class SiteFiles {
 public:
  /// site: the site's root folder (absolute).
  explicit SiteFiles(const std::filesystem::path& site);

  /// page with each relative link (an href="…" of HTML, or a ](…) of Markdown) that leads out of
  /// the site to a regular file replaced by a link to its copy, DIR/files/<its absolute path>
  /// (the fragment kept); page_dir: the page's folder (absolute, inside the site). Links to
  /// nothing that exists, web links and links inside the site are left as they are.
  std::string html(std::string_view page, const std::filesystem::path& page_dir);
  std::string markdown(std::string_view page, const std::filesystem::path& page_dir);

  /// Files copied (or brought up to date) by this build.
  int copied() const;

 private:
  enum class Syntax { kHtml, kMarkdown };
  std::string rewrite(std::string_view page, const std::filesystem::path& page_dir, Syntax syntax);
  /// The new link for a relative link target (undecoded, without its fragment); empty: keep it.
  std::string relink(std::string_view target, const std::filesystem::path& page_dir);

  std::filesystem::path site_;
  mutable std::mutex mutex_;
  std::set<std::filesystem::path> done_;  ///< copies made or checked by this build
  int copied_ = 0;
};

}  // namespace devshim
