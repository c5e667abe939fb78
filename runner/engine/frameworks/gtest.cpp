// GoogleTest binaries: each file is a program (or GTEST_TOTAL_SHARDS processes of one); results
// from its XML refined by the console output, else the console output; reruns by
// --gtest_filter, continuations after a crash by its negative patterns.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "parsers/gtest_xml.h"
#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFilterFlag = "--gtest_filter=";

// How a binary's cases are named: "ops/math_test" → classname prefix "ops.math_test".
std::string classname_prefix(const TestFile& file) {
  std::string prefix = file.file_rel();
  std::replace(prefix.begin(), prefix.end(), '/', '.');
  return prefix;
}

class GtestTraits final : public FrameworkTraits {
 public:
  bool runs_python() const override { return false; }

  // The shards are the runner's to set, per file.
  void adjust_environment(Environment& env) const override {
    env.erase("GTEST_TOTAL_SHARDS");
    env.erase("GTEST_SHARD_INDEX");
  }

  std::vector<std::string> command(const Suite& suite, const std::string& /*python*/,
                                   const TestFile& file,
                                   const fs::path& junit_path) const override {
    std::vector<std::string> argv{file.abs_path.string(),
                                  "--gtest_output=xml:" + junit_path.string()};
    argv.insert(argv.end(), suite.args.begin(), suite.args.end());
    return argv;
  }

  void plan(const Suite& suite, const std::string& python, const TestFile& file,
            const fs::path& logs_dir, ProcessSpec& spec) const override {
    const std::string base = file.shards > 1 ? fmt::format("{}.shard-{}-of-{}", file.file_rel(),
                                                           file.shard + 1, file.shards)
                                             : file.rel_path;
    spec.log_path = logs_dir / (base + ".log");
    spec.junit_path = logs_dir / (base + ".xml");
    adjust_environment(spec.env);
    if (file.shards > 1) {
      spec.env["GTEST_TOTAL_SHARDS"] = std::to_string(file.shards);
      spec.env["GTEST_SHARD_INDEX"] = std::to_string(file.shard);
    }
    spec.argv = command(suite, python, file, spec.junit_path);  // the binary itself
  }

  std::optional<FileStatus> exit_status(int /*code*/) const override { return std::nullopt; }

  // GoogleTest's XML when the binary ended normally (refined by the console output: failures
  // outside tests, closing counts), else the console output alone.
  ParsedFile parse(const Suite& suite, const TestFile& file, const std::string& /*test_file*/,
                   const ProcessSpec& spec, std::string& parsed_from) const override {
    GtestContext ctx;
    ctx.classname_prefix = classname_prefix(file);
    ctx.project_root = suite.project_root.string();
    std::error_code ec;
    const bool xml = !spec.junit_path.empty() && fs::exists(spec.junit_path, ec) &&
                     parse_gtest_xml(spec.junit_path, ctx).has_value();
    if (!xml && !fs::exists(spec.log_path, ec)) return {};
    ParsedFile parsed = parse_gtest_results(spec.junit_path, spec.log_path, ctx);
    parsed_from = xml ? "junit" : "log";
    return parsed;
  }

  bool records_test_cut_short_by_exit() const override { return true; }

  // The named tests, unsharded.
  void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    spec.env.erase("GTEST_TOTAL_SHARDS");
    spec.env.erase("GTEST_SHARD_INDEX");
    spec.argv.insert(spec.argv.end(), selectors.begin(), selectors.end());
  }

  // "--gtest_filter=Suite.Test:Other.*": each test as given (GoogleTest's own patterns work).
  std::vector<std::string> test_selectors(const Suite& /*suite*/,
                                          const TestFile& file) const override {
    std::string filter(kFilterFlag);
    for (std::size_t i = 0; i < file.tests.size(); ++i) {
      filter += (i == 0 ? "" : ":") + file.tests[i];
    }
    return {filter};
  }

  // GoogleTest has no keywords: tests whose full name holds it. A later --gtest_filter (named
  // tests) wins.
  void add_keyword(ProcessSpec& spec, const std::string& keyword) const override {
    spec.argv.push_back(std::string(kFilterFlag) + "*" + keyword + "*");
  }

  // The filter the process runs under (its last --gtest_filter, else GTEST_FILTER, else every
  // test) with the selectors' tests added as negative patterns, as a last --gtest_filter. A shard
  // declines: GoogleTest shards the filtered list, so the shard would hold other shards' tests.
  bool deselect(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    if (spec.env.count("GTEST_TOTAL_SHARDS") > 0) return false;
    std::string names;
    for (const std::string& s : selectors) {
      if (s.rfind(kFilterFlag, 0) != 0 || s.size() == kFilterFlag.size()) return false;
      names += (names.empty() ? "" : ":") + s.substr(kFilterFlag.size());
    }
    if (names.empty()) return false;
    std::string filter = "*";
    const auto last = std::find_if(spec.argv.rbegin(), spec.argv.rend(), [](const std::string& a) {
      return a.rfind(kFilterFlag, 0) == 0;
    });
    if (last != spec.argv.rend()) {
      filter = last->substr(kFilterFlag.size());
    } else if (const auto env = spec.env.find("GTEST_FILTER"); env != spec.env.end()) {
      filter = env->second;
    }
    // "POSITIVE-NEGATIVE": the first '-' begins the patterns left out.
    filter += (filter.find('-') == std::string::npos ? "-" : ":") + names;
    spec.argv.push_back(std::string(kFilterFlag) + filter);
    return true;
  }
};

}  // namespace

const FrameworkTraits& gtest_traits() {
  static const GtestTraits traits;
  return traits;
}

}  // namespace devshim
