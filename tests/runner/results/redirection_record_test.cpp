#include "runner/results/redirection_record.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

// The format both shims write (docs/shim.md), as the Python shim writes it.
constexpr const char* kRecord = R"({"format": "devshim-redirections/1", "shim": "python",
 "pid": 1234, "policy": "default",
 "hardware": {"accelerator": null, "mps": false, "cuda_device_count": 0},
 "redirections": [
  {"api": "torch.zeros", "requested": "cuda", "used": "cpu", "count": 12,
   "call_site": {"file": "/project/tests/test_x.py", "line": 42, "function": "test_foo"}},
  {"api": "torch.Tensor.to", "requested": "cuda:1", "used": "cpu", "count": 1,
   "call_site": {"file": "/elsewhere/lib.py", "line": 3, "function": "helper"}},
  {"api": "torch.cuda.synchronize", "requested": "cuda", "used": "cpu", "count": 2}
 ]})";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST(RedirectionRecord, ParsesEveryEntryWithItsCallSite) {
  auto entries = parse_redirection_record(kRecord);
  ASSERT_EQ(entries.size(), 3U);
  EXPECT_EQ(entries[0].api, "torch.zeros");
  EXPECT_EQ(entries[0].requested, "cuda");
  EXPECT_EQ(entries[0].used, "cpu");
  EXPECT_EQ(entries[0].count, 12);
  EXPECT_EQ(entries[0].shim, "python");
  EXPECT_EQ(entries[0].site_file, "/project/tests/test_x.py");
  EXPECT_EQ(entries[0].site_line, 42);
  EXPECT_EQ(entries[0].site_function, "test_foo");
  EXPECT_EQ(entries[2].site_file, "");
  EXPECT_EQ(entries[2].site_line, 0);
}

TEST(RedirectionRecord, RejectsWhatIsNotARecord) {
  EXPECT_THROW(parse_redirection_record("not json"), RuntimeError);
  EXPECT_THROW(parse_redirection_record("[]"), RuntimeError);
  EXPECT_THROW(parse_redirection_record(R"({"format": "other/1", "redirections": []})"),
               RuntimeError);
  EXPECT_THROW(parse_redirection_record(R"({"format": "devshim-redirections/1"})"), RuntimeError);
  try {
    parse_redirection_record(
        R"({"format": "devshim-redirections/1", "redirections": [{"api": "x"}]})");
    FAIL() << "an entry without requested/used/count was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("entry 0"), std::string::npos) << e.what();
  }
}

TEST(RedirectionRecord, AMissingFileIsNoRedirectionAndABrokenOneIsAnError) {
  TempDir dir;
  RecordRead none = read_redirection_record(dir.path() / "absent.json", "/project");
  EXPECT_TRUE(none.entries.empty());
  EXPECT_TRUE(none.error.empty());

  write(dir.path() / "broken.json", "{\"format\": ");
  RecordRead broken = read_redirection_record(dir.path() / "broken.json", "/project");
  EXPECT_TRUE(broken.entries.empty());
  EXPECT_NE(broken.error.find("broken.json"), std::string::npos) << broken.error;
}

TEST(RedirectionRecord, CallSitesInsideTheProjectBecomeRelative) {
  TempDir dir;
  write(dir.path() / "r.json", kRecord);
  RecordRead read = read_redirection_record(dir.path() / "r.json", "/project/");
  ASSERT_TRUE(read.error.empty()) << read.error;
  ASSERT_EQ(read.entries.size(), 3U);
  EXPECT_EQ(read.entries[0].site_file, "tests/test_x.py");
  EXPECT_EQ(read.entries[1].site_file, "/elsewhere/lib.py");
}

TEST(RedirectionRecord, TheStoreSumsARunsRedirectionsOverFilesAndCallSites) {
  TempDir dir;
  Store store(dir.path() / "results.db");
  RunRecord run;
  run.suite = "s";
  run.suite_file = "s/suite.json";
  run.framework = "pytest";
  run.started_at = iso8601_utc_now();
  run.project_root = "/project";
  run.out_dir = dir.path().string();
  const auto id = store.begin_run(run, {"a.py", "b.py"});
  auto entries = parse_redirection_record(kRecord);
  FileRecord a;
  a.path = "a.py";
  a.status = FileStatus::kPassed;
  store.record_file(id, a, {}, entries);
  FileRecord b = a;
  b.path = "b.py";
  entries[0].count = 3;
  entries[0].site_line = 7;  // another call site of the same kind
  store.record_file(id, b, {}, {entries[0]});
  // Recording a file again replaces its redirections rather than adding to them.
  store.record_file(id, b, {}, {entries[0]});

  auto summed = store.redirections(id);
  ASSERT_EQ(summed.size(), 3U);
  EXPECT_EQ(summed[0].first.api, "torch.zeros");
  EXPECT_EQ(summed[0].count, 15);
  EXPECT_EQ(summed[0].files, 2);
  EXPECT_EQ(summed[0].sites, 2);
  EXPECT_EQ(summed[0].first.site_line, 42);  // the first recorded call site
  EXPECT_EQ(summed[1].first.api, "torch.cuda.synchronize");
  EXPECT_EQ(summed[1].count, 2);
  EXPECT_EQ(summed[2].first.requested, "cuda:1");
}

// The tests a record names: device work ("cuda_path_tests") and only asked ("cuda_asked_tests");
// a record of a shim before the two were told apart has no second list.
TEST(RedirectionRecord, TheNamedTestsWithTheirContact) {
  const RecordRead read = parse_named_tests(R"({"format": "devshim-redirections/1",
   "redirections": [], "cuda_path_tests": ["TestA::test_moves", "test_b[cpu1]"],
   "cuda_asked_tests": ["TestA::test_seeds"]})");
  EXPECT_EQ(read.cuda_path_tests, (std::vector<std::string>{"TestA::test_moves", "test_b[cpu1]"}));
  EXPECT_EQ(read.cuda_asked_tests, std::vector<std::string>{"TestA::test_seeds"});
  EXPECT_TRUE(parse_named_tests(kRecord).cuda_asked_tests.empty()) << "an older record";
  EXPECT_THROW(parse_named_tests(R"({"format": "devshim-redirections/1", "redirections": [],
   "cuda_asked_tests": "test_x"})"),
               RuntimeError);
  EXPECT_THROW(parse_named_tests(R"({"format": "devshim-redirections/1", "redirections": [],
   "cuda_asked_tests": [1]})"),
               RuntimeError);

  std::vector<TestCase> cases(4);
  cases[0].classname = "tests.test_x.TestA";
  cases[0].name = "test_moves";
  cases[1].classname = "tests.test_x.TestA";
  cases[1].name = "test_seeds";
  cases[2].classname = "tests.test_x";
  cases[2].name = "test_b[cpu1]";
  cases[3].classname = "tests.test_x";
  cases[3].name = "test_c";
  EXPECT_EQ(mark_cuda_path("pytest", "tests", "test_x.py", read, cases), 3);
  EXPECT_EQ(cases[0].cuda_contact, CudaContact::kDeviceWork);
  EXPECT_EQ(cases[1].cuda_contact, CudaContact::kAsked);
  EXPECT_EQ(cases[2].cuda_contact, CudaContact::kDeviceWork);
  EXPECT_EQ(cases[3].cuda_contact, CudaContact::kNone);
}

}  // namespace
}  // namespace devshim
