#include "runner/engine/git_remote.h"

#include <chrono>
#include <sstream>
#include <vector>

#include "parsers/text.h"
#include "runner/engine/process_pool.h"

namespace devshim {

namespace {

constexpr std::chrono::seconds kGitTimeout{10};

// A remote URL's host (lower case, no user or port) and repository path (no ".git", no slashes
// around it); both empty for a URL that names no host.
struct HostAndPath {
  std::string host;
  std::string path;
};

HostAndPath host_and_path(std::string_view url) {
  url = trim(url);
  std::string_view authority;
  std::string_view path;
  if (const auto scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    const std::string scheme = ascii_lower(url.substr(0, scheme_end));
    if (scheme != "https" && scheme != "http" && scheme != "ssh" && scheme != "git" &&
        scheme != "git+ssh" && scheme != "ssh+git") {
      return {};
    }
    const std::string_view rest = url.substr(scheme_end + 3);
    const auto slash = rest.find('/');
    authority = rest.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
      authority = authority.substr(at + 1);  // a user and password
    }
    if (const auto colon = authority.rfind(':');
        colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
      authority = authority.substr(0, colon);  // the port
    }
  } else {
    // scp-like: [user@]host:path, the colon before any slash.
    const auto colon = url.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        url.substr(0, colon).find('/') != std::string_view::npos) {
      return {};
    }
    authority = url.substr(0, colon);
    path = url.substr(colon + 1);
  }
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.ends_with(".git")) path.remove_suffix(4);
  if (authority.empty() || path.empty()) return {};
  return {ascii_lower(authority), std::string(path)};
}

}  // namespace

std::string without_credentials(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const std::size_t start = scheme_end + 3;
  const std::size_t slash = url.find('/', start);
  const std::size_t at = url.substr(0, slash).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + std::string(url.substr(at + 1));
}

std::string forge_of_remote(std::string_view url) {
  const HostAndPath hp = host_and_path(url);
  if (hp.host.empty()) return "";
  if (hp.host == "github.com" || hp.host.starts_with("github.")) return "GitHub";
  if (hp.host == "gitlab.com" || hp.host.starts_with("gitlab.")) return "GitLab";
  if (hp.host == "bitbucket.org") return "Bitbucket";
  return "";
}

std::string source_url_of_remote(std::string_view url) {
  const std::string forge = forge_of_remote(url);
  if (forge.empty()) return "";
  const HostAndPath hp = host_and_path(url);
  const std::string base = "https://" + hp.host + "/" + hp.path;
  if (forge == "GitHub") return base + "/blob/{commit}/{path}#L{line}";
  if (forge == "GitLab") return base + "/-/blob/{commit}/{path}#L{line}";
  return base + "/src/{commit}/{path}#lines-{line}";
}

std::optional<GitRemote> read_git_remote(const std::filesystem::path& folder,
                                         const Environment& env) {
  // The checkout's root, its commit and the branch checked out ("HEAD" when detached); a
  // repository without a commit fails here, and has nothing to link to.
  const auto head =
      capture_output({"git", "rev-parse", "--show-toplevel", "HEAD", "--abbrev-ref", "HEAD"},
                     folder, kGitTimeout, env);
  if (!head) return std::nullopt;
  GitRemote remote;
  std::string toplevel;
  std::string branch;
  std::istringstream lines(*head);
  std::getline(lines, toplevel);
  std::getline(lines, remote.commit);
  std::getline(lines, branch);
  remote.toplevel = toplevel;
  // Every remote's URL and every branch's remote, in one call ("remote.origin.url URL").
  const std::string config =
      capture_output({"git", "config", "--get-regexp", R"(^(remote\..*\.url|branch\..*\.remote)$)"},
                     folder, kGitTimeout, env)
          .value_or("");
  std::vector<std::pair<std::string, std::string>> urls;  // name, URL, in the config's order
  std::string branch_remote;
  for (const std::string_view line : lines_of(config)) {
    const auto space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, space);
    const std::string value(trim(line.substr(space + 1)));
    if (key.starts_with("remote.") && key.ends_with(".url")) {
      urls.emplace_back(std::string(key.substr(7, key.size() - 11)), value);
    } else if (key == "branch." + branch + ".remote") {
      branch_remote = value;
    }
  }
  for (const std::string& wanted : {branch_remote, std::string("origin")}) {
    for (const auto& [name, url] : urls) {
      if (remote.name.empty() && !wanted.empty() && name == wanted) {
        remote.name = name;
        remote.url = url;
      }
    }
  }
  if (remote.name.empty() && !urls.empty()) std::tie(remote.name, remote.url) = urls.front();
  return remote;
}

}  // namespace devshim
