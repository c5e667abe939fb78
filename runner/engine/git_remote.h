// Where a git checkout's project lives upstream: its remote, and the link template to a source line
// there (a suite's `source_url`, docs/suites.md) for the hosts whose URLs are known: GitHub,
// GitLab and Bitbucket.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "runner/engine/environment.h"

namespace devshim {

/// The checkout a folder lies in and the remote it comes from.
struct GitRemote {
  std::string commit;              ///< HEAD
  std::filesystem::path toplevel;  ///< the checkout's root folder
  std::string name;                ///< the remote: the branch's, else "origin", else the first;
                                   ///< empty when the checkout has none
  std::string url;                 ///< its URL as configured
};

/// `url` without a user name or password ("https://user:token@host/x" → "https://host/x"): what
/// may be printed and stored.
std::string without_credentials(std::string_view url);

/// The source_url template of a remote URL ("https://github.com/o/r.git",
/// "git@github.com:o/r.git", "ssh://git@gitlab.com/g/s/r", …): `https://github.com/o/r/blob/
/// {commit}/{path}#L{line}`, GitLab's `…/-/blob/{commit}/{path}#L{line}` (gitlab.com or a host
/// named gitlab.*), Bitbucket's `…/src/{commit}/{path}#lines-{line}`; a host named github.* is
/// taken as GitHub Enterprise. Empty for any other host, a local path or file:// URL.
std::string source_url_of_remote(std::string_view url);

/// The host kind source_url_of_remote recognised in url: "GitHub", "GitLab", "Bitbucket"; empty
/// for none.
std::string forge_of_remote(std::string_view url);

/// The checkout `folder` lies in, with its remote; nullopt when it lies in none, the checkout has
/// no commit yet, or git cannot be run. env: the runner's environment, which git runs with.
std::optional<GitRemote> read_git_remote(const std::filesystem::path& folder,
                                         const Environment& env);

}  // namespace devshim
