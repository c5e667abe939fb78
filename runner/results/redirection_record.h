// The shims' redirection record (docs/shim.md, "Redirection record"): which device requests a
// test process had rewritten, counted per (call site, API, requested -> used). Both shims write
// it as JSON at exit to the path in TORCHDEVICE_RECORD; the runner reads it after each file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/test_result.h"

namespace devshim {

/// The environment variable naming the file a shim writes its record to.
inline constexpr const char* kRecordVar = "TORCHDEVICE_RECORD";
/// The record's "format" value this runner reads.
inline constexpr std::string_view kRecordFormat = "devshim-redirections/1";

/// One (call site, API, requested -> used) entry.
struct Redirection {
  std::string api;        ///< "torch.zeros", "torch.Tensor.to", "devshim::to", ...
  std::string requested;  ///< as requested: "cuda:1", "cuda", "(none)"
  std::string used;       ///< the device it landed on: "cpu", "mps", "cuda:0"
  long long count = 0;
  std::string shim;           ///< "python" or "cpp"
  std::string site_file;      ///< where it was first called; relative to the project when inside
  int site_line = 0;          ///< 0: unknown
  std::string site_function;  ///< may be empty
};

/// Parses a record's text. Throws RuntimeError naming what is wrong (not JSON, another format,
/// an entry without api/requested/used/count).
std::vector<Redirection> parse_redirection_record(std::string_view text);

/// What reading a record file gave: no file (the process made no redirection, or no shim ran)
/// is an empty list and no error.
struct RecordRead {
  std::vector<Redirection> entries;
  /// The tests the record names as having done device work ("cuda_path_tests") and those whose
  /// only contact with CUDA was asking ("cuda_asked_tests": a query, seeding, a stream; absent
  /// from a record of an older shim, whose "cuda_path_tests" name any contact). Each test of the
  /// file as "CLASS::TEST" or "TEST", the test target after the file's "::" (TestIds::target), in
  /// the record's order.
  std::vector<std::string> cuda_path_tests, cuda_asked_tests;
  std::string error;  ///< non-empty when the file exists but cannot be used
};

/// The tests a record's text names (RecordRead's cuda_path_tests and cuda_asked_tests; entries
/// left empty). Throws RuntimeError as parse_redirection_record does, and when a list holds
/// anything but strings.
RecordRead parse_named_tests(std::string_view text);

/// Reads and parses path; call-site paths under project_root are made relative to it.
RecordRead read_redirection_record(const std::filesystem::path& path,
                                   const std::filesystem::path& project_root);

/// Sets TestCase::cuda_contact on each case of one file whose test target (TestIds::target of
/// framework, tests_dir and file, after the file's "::") a record names: device work for those of
/// RecordRead::cuda_path_tests, asked for those of cuda_asked_tests. Returns how many cases it
/// marked.
int mark_cuda_path(std::string_view framework, std::string_view tests_dir, std::string_view file,
                   const RecordRead& record, std::vector<TestCase>& cases);

}  // namespace devshim
