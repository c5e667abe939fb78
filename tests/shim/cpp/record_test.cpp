// The redirection record: rows, call sites, JSON, and merging into a file under a lock.
#include "devshim/record.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::source_location here(std::source_location site = std::source_location::current()) {
  return site;
}

TEST(BareFunctionName, KeepsOnlyTheName) {
  EXPECT_EQ(bare_function_name("virtual void Suite_Name_Test::TestBody()"), "TestBody");
  EXPECT_EQ(bare_function_name("int main(int, char**)"), "main");
  EXPECT_EQ(bare_function_name("void devshim::{anonymous}::f(const std::string&)"), "f");
  EXPECT_EQ(bare_function_name("void {anonymous}::g<T>(T) [with T = int]"), "g");
  EXPECT_EQ(bare_function_name("std::vector<int> ns::C<std::pair<int, int> >::h() const"), "h");
  EXPECT_EQ(bare_function_name("bool X::operator()(int) const"), "operator()");
  EXPECT_EQ(bare_function_name("main()::<lambda()>"), "main");
  EXPECT_EQ(bare_function_name(""), "");
  EXPECT_EQ(bare_function_name(here().function_name()), "TestBody");
}

TEST(Recorder, CountsOncePerCallSiteApiAndRequest) {
  Recorder r;
  const auto a = here();
  const auto b = here();
  EXPECT_TRUE(r.hit("devshim::to", "cuda", "cpu", a));
  EXPECT_FALSE(r.hit("devshim::to", "cuda", "cpu", a));
  EXPECT_TRUE(r.hit("devshim::to", "cuda:1", "cpu", a));
  EXPECT_TRUE(r.hit("devshim::options", "cuda", "cpu", a));
  EXPECT_TRUE(r.hit("devshim::to", "cuda", "cpu", b));
  const auto rows = r.entries();
  ASSERT_EQ(rows.size(), 4U);
  // Sorted by (api, requested, used, file, line).
  EXPECT_EQ(rows[0].api, "devshim::options");
  EXPECT_EQ(rows[1].api, "devshim::to");
  EXPECT_EQ(rows[1].requested, "cuda");
  EXPECT_EQ(rows[1].count, 2);
  EXPECT_EQ(rows[1].call_site.line, static_cast<int>(a.line()));
  EXPECT_EQ(rows[1].call_site.file, a.file_name());
  EXPECT_EQ(rows[1].call_site.function, "TestBody");
  EXPECT_EQ(rows[2].call_site.line, static_cast<int>(b.line()));
  EXPECT_EQ(rows[3].requested, "cuda:1");
  r.clear();
  EXPECT_TRUE(r.entries().empty());
}

TEST(Recorder, CountsExactlyFromManyThreads) {
  Recorder r;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&r] {
      for (int i = 0; i < 10000; ++i) r.hit("devshim::to", "cuda", "cpu", here());
    });
  }
  for (auto& t : threads) t.join();
  const auto rows = r.entries();
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].count, 40000);
}

RecordEntry entry(std::string api, std::string req, std::string used, long long count, int line,
                  std::string function = "f") {
  return {std::move(api),
          std::move(req),
          std::move(used),
          count,
          {"/src/x.cpp", line, std::move(function)}};
}

TEST(RecordJson, TheFormatBothShimsWrite) {
  RecordHeader header;
  header.pid = 1234;
  header.hardware = Hardware{false, 0};
  const std::string text =
      record_json(header, {entry("devshim::to", "cuda", "cpu", 12, 42, "TestBody")});
  const json doc = json::parse(text);
  EXPECT_EQ(doc, json::parse(R"({"format": "devshim-redirections/1", "shim": "cpp", "pid": 1234,
    "policy": "default", "hardware": {"accelerator": null, "mps": false, "cuda_device_count": 0},
    "redirections": [{"api": "devshim::to", "requested": "cuda", "used": "cpu", "count": 12,
      "call_site": {"file": "/src/x.cpp", "line": 42, "function": "TestBody"}}]})"));
  // Keys in the documented order.
  EXPECT_LT(text.find("\"format\""), text.find("\"shim\""));
  EXPECT_LT(text.find("\"pid\""), text.find("\"redirections\""));
  header.hardware = Hardware{true, 2};
  header.policy = Policy::kAcceleratorOnly;
  const json doc2 = json::parse(record_json(header, {}));
  EXPECT_EQ(doc2["hardware"]["accelerator"], "mps");
  EXPECT_EQ(doc2["policy"], "accelerator-only");
  EXPECT_EQ(doc2["redirections"], json::array());
}

TEST(RecordJson, ParsesWhatItWritesAndRejectsOtherDocuments) {
  const std::vector<RecordEntry> rows = {entry("a", "cuda", "cpu", 1, 1),
                                         entry("b", "(none)", "mps", 3, 2)};
  EXPECT_EQ(parse_record(record_json({}, rows)), rows);
  EXPECT_EQ(parse_record("not json"), std::nullopt);
  EXPECT_EQ(parse_record(R"({"format": "other/1", "redirections": []})"), std::nullopt);
  EXPECT_EQ(parse_record(R"({"format": "devshim-redirections/1"})"), std::nullopt);
  EXPECT_EQ(parse_record(R"({"format": "devshim-redirections/1", "redirections": [
    {"api": "a", "requested": "cuda", "used": "cpu", "count": 0}]})"),
            std::nullopt);
  EXPECT_EQ(parse_record(R"({"format": "devshim-redirections/1", "redirections": [
    {"api": "", "requested": "cuda", "used": "cpu", "count": 1}]})"),
            std::nullopt);
  // A Python shim's record merges too (no call site is fine).
  const auto python = parse_record(R"({"format": "devshim-redirections/1", "shim": "python",
    "redirections": [{"api": "torch.zeros", "requested": "cuda", "used": "cpu", "count": 2}]})");
  ASSERT_TRUE(python);
  EXPECT_EQ(python->at(0).count, 2);
}

TEST(MergeEntries, SumsCountsPerRowAndKeepsTheFirstFunction) {
  const auto merged =
      merge_entries({entry("a", "cuda", "cpu", 2, 10, "first"), entry("b", "cuda", "cpu", 1, 5)},
                    {entry("a", "cuda", "cpu", 3, 10, "second"), entry("a", "cuda", "cpu", 1, 11)});
  ASSERT_EQ(merged.size(), 3U);
  EXPECT_EQ(merged[0].count, 5);
  EXPECT_EQ(merged[0].call_site.function, "first");
  EXPECT_EQ(merged[1].call_site.line, 11);
  EXPECT_EQ(merged[2].api, "b");
}

TEST(WriteRecord, MergesWithWhatIsThere) {
  TempDir dir;
  const auto path = dir / "deep/folder/record.json";
  RecordHeader header;
  header.pid = 1;
  write_record(path, header, {entry("devshim::to", "cuda", "cpu", 2, 7)});
  header.pid = 2;
  write_record(
      path, header,
      {entry("devshim::to", "cuda", "cpu", 3, 7), entry("devshim::device", "cuda:1", "cpu", 1, 9)});
  const json doc = json::parse(read_file(path));
  EXPECT_EQ(doc["pid"], 2);
  ASSERT_EQ(doc["redirections"].size(), 2U);
  EXPECT_EQ(doc["redirections"][1]["api"], "devshim::to");
  EXPECT_EQ(doc["redirections"][1]["count"], 5);
  EXPECT_TRUE(std::filesystem::exists(path.string() + ".lock"));
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path())) {
    files += 1;
    EXPECT_EQ(e.path().extension() == ".tmp", false) << e.path();
  }
  EXPECT_EQ(files, 2);
}

TEST(WriteRecord, ReplacesAFileThatIsNotARecordAndSaysSo) {
  TempDir dir;
  const auto path = dir / "record.json";
  write_file(path, "{ half a file");
  std::string warning;
  write_record(path, {}, {entry("a", "cuda", "cpu", 1, 1)},
               [&](const std::string& w) { warning = w; });
  EXPECT_NE(warning.find("is not a devshim-redirections/1 record; replacing it"),
            std::string::npos);
  EXPECT_EQ(json::parse(read_file(path))["redirections"].size(), 1U);
}

TEST(WriteRecord, ConcurrentWritersLoseNothing) {
  TempDir dir;
  const auto path = dir / "record.json";
  std::vector<pid_t> children;
  for (int c = 0; c < 8; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      RecordHeader header;
      header.pid = ::getpid();
      for (int i = 0; i < 10; ++i)
        write_record(path, header, {entry("devshim::to", "cuda", "cpu", 1, 1)});
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(json::parse(read_file(path))["redirections"][0]["count"], 80);
}

TEST(WriteRecord, ThrowsWhenTheFolderCannotBeWritten) {
  TempDir dir;
  write_file(dir / "file", "x");
  EXPECT_THROW(write_record(dir / "file/record.json", {}, {}), std::exception);
}

}  // namespace
}  // namespace devshim
