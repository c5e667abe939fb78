#include "runner/engine/git_remote.h"

#include <gtest/gtest.h>

#include "runner/cli/process_environment.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

TEST(SourceUrlOfRemote, GithubGitlabAndBitbucketInEveryUrlForm) {
  const std::string github = "https://github.com/o/r/blob/{commit}/{path}#L{line}";
  for (const char* url :
       {"https://github.com/o/r.git", "https://github.com/o/r", "https://github.com/o/r/",
        "git@github.com:o/r.git", "ssh://git@github.com/o/r.git", "ssh://git@github.com:22/o/r",
        "https://user:secret@github.com/o/r.git", "git://github.com/o/r",
        "HTTPS://GitHub.com/o/r"}) {
    EXPECT_EQ(source_url_of_remote(url), github) << url;
    EXPECT_EQ(forge_of_remote(url), "GitHub") << url;
  }
  EXPECT_EQ(source_url_of_remote("git@gitlab.com:group/sub/project.git"),
            "https://gitlab.com/group/sub/project/-/blob/{commit}/{path}#L{line}");
  EXPECT_EQ(source_url_of_remote("https://gitlab.example.org/g/p"),
            "https://gitlab.example.org/g/p/-/blob/{commit}/{path}#L{line}")
      << "a self-hosted GitLab";
  EXPECT_EQ(source_url_of_remote("git@bitbucket.org:team/repo.git"),
            "https://bitbucket.org/team/repo/src/{commit}/{path}#lines-{line}");
  EXPECT_EQ(source_url_of_remote("https://github.example.com/o/r"),
            "https://github.example.com/o/r/blob/{commit}/{path}#L{line}")
      << "GitHub Enterprise";
  for (const char* url : {"https://example.org/o/r.git", "/srv/git/r.git", "file:///srv/git/r",
                          "../r", "https://github.com/", "C:relative", ""}) {
    EXPECT_EQ(source_url_of_remote(url), "") << url;
  }
}

TEST(WithoutCredentials, KeepsNoUserOrPasswordOfAUrl) {
  EXPECT_EQ(without_credentials("https://user:token@github.com/o/r.git"),
            "https://github.com/o/r.git");
  EXPECT_EQ(without_credentials("https://github.com/o/r@v1"), "https://github.com/o/r@v1");
  EXPECT_EQ(without_credentials("git@github.com:o/r.git"), "git@github.com:o/r.git");
}

class ReadGitRemote : public ::testing::Test {
 protected:
  void git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git",         "-C", dir_.path().string(),      "-c",
                                  "user.name=t", "-c", "user.email=t@example.org"};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(testing::run(argv).exit_code, 0);
  }
  TempDir dir_;
};

TEST_F(ReadGitRemote, TheBranchsRemoteElseOriginElseTheFirst) {
  const Environment env = runner_environment();
  EXPECT_FALSE(read_git_remote(dir_.path(), env)) << "not a checkout";
  git({"init", "-q", "-b", "main"});
  EXPECT_FALSE(read_git_remote(dir_.path(), env)) << "a checkout without a commit";
  git({"commit", "-q", "--allow-empty", "-m", "first"});
  auto remote = read_git_remote(dir_.path(), env);
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->commit.size(), 40U);
  EXPECT_EQ(remote->name, "") << "no remote";
  git({"remote", "add", "fork", "https://github.com/me/r.git"});
  EXPECT_EQ(read_git_remote(dir_.path(), env)->name, "fork") << "the only one";
  git({"remote", "add", "origin", "git@gitlab.com:g/r.git"});
  remote = read_git_remote(dir_.path(), env);
  EXPECT_EQ(remote->name, "origin");
  EXPECT_EQ(remote->url, "git@gitlab.com:g/r.git");
  git({"config", "branch.main.remote", "fork"});
  EXPECT_EQ(read_git_remote(dir_.path(), env)->name, "fork") << "the branch's own";
  std::filesystem::create_directories(dir_ / "sub/dir");
  remote = read_git_remote(dir_ / "sub/dir", env);
  ASSERT_TRUE(remote);
  EXPECT_EQ(std::filesystem::canonical(remote->toplevel), std::filesystem::canonical(dir_.path()));
}

}  // namespace
}  // namespace devshim
