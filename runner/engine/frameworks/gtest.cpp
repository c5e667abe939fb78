// GoogleTest binaries: each file is a program (or GTEST_TOTAL_SHARDS processes of one); results
// from its XML refined by the console output, else the console output; reruns by
// --gtest_filter.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "parsers/gtest_xml.h"
#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

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

  // One "--gtest_filter=Suite.Name:Suite.Other" argument.
  std::optional<std::vector<std::string>> rerun_selectors(
      const Suite& /*suite*/, const TestFile& file,
      const std::vector<TestCase>& failing) const override {
    const std::string prefix = classname_prefix(file);
    std::string filter = "--gtest_filter=";
    std::set<std::string> seen;
    for (const TestCase& c : failing) {
      if (c.name.empty() || c.classname.rfind(prefix + ".", 0) != 0) return std::nullopt;
      const std::string test_suite = c.classname.substr(prefix.size() + 1);
      if (test_suite.empty() || c.name.find_first_of(":*?") != std::string::npos) {
        return std::nullopt;
      }
      std::string id = test_suite + "." + c.name;
      if (!seen.insert(id).second) continue;
      filter += (seen.size() == 1 ? "" : ":") + id;
    }
    return std::vector<std::string>{filter};
  }

  // The named tests, unsharded.
  void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    spec.env.erase("GTEST_TOTAL_SHARDS");
    spec.env.erase("GTEST_SHARD_INDEX");
    spec.argv.insert(spec.argv.end(), selectors.begin(), selectors.end());
  }
};

}  // namespace

const FrameworkTraits& gtest_traits() {
  static const GtestTraits traits;
  return traits;
}

}  // namespace devshim
