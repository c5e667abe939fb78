// The redirection record: what the shim rewrote, counted per (call site, API, requested -> used),
// in the JSON format both shims write (docs/shim.md, "The redirection record"; docs/shim-cpp.md).
//
//   {"format": "devshim-redirections/1", "shim": "cpp", "pid": 1234, "policy": "default",
//    "hardware": {"accelerator": null, "mps": false, "cuda_device_count": 0},
//    "redirections": [{"api": "devshim::to", "requested": "cuda", "used": "cpu", "count": 12,
//                      "call_site": {"file": "/abs/x_test.cpp", "line": 42,
//                                    "function": "TestBody"}}]}
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "devshim/policy.h"

namespace devshim {

/// The record's "format" value.
inline constexpr std::string_view kRecordFormat = "devshim-redirections/1";

/// How a "no device given" request is written in the record.
inline constexpr std::string_view kNoDeviceRequested = "(none)";

struct CallSite {
  std::string file;      ///< as the compiler named it (CMake passes absolute paths)
  int line = 0;          ///< 0: unknown
  std::string function;  ///< the bare name: "TestBody", not "virtual void X_Test::TestBody()"
  friend bool operator==(const CallSite&, const CallSite&) = default;
};

/// One row of the record.
struct RecordEntry {
  std::string api;        ///< "devshim::to", "devshim::options", ...
  std::string requested;  ///< "cuda:1", "cuda", "(none)"
  std::string used;       ///< "cpu", "mps", "cuda:0"
  long long count = 0;    ///< > 0
  CallSite call_site;     ///< the first one seen for the row
  friend bool operator==(const RecordEntry&, const RecordEntry&) = default;
};

/// The top of a record besides its rows ("format" and "shim": "cpp" are fixed).
struct RecordHeader {
  long long pid = 0;
  Policy policy = Policy::kDefault;
  Hardware hardware;
};

/// The bare function name of a std::source_location::function_name():
/// "virtual void Suite_Test::TestBody()" -> "TestBody", "int main()" -> "main".
std::string bare_function_name(std::string_view pretty);

/// Counts redirections. Thread-safe; the hot path (a row already seen from the same call site)
/// is one mutex and one hash lookup, with no string built from the call site.
class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Counts one call of `api` from `site` whose request (written as in the record: "cuda:1",
  /// "(none)") was rewritten to `used`. `api` must have static storage (a string literal).
  /// Returns true when this created a new row (the caller logs those at INFO).
  bool hit(const char* api, std::string_view requested, std::string_view used,
           const std::source_location& site);

  /// The rows, sorted by (api, requested, used, file, line).
  std::vector<RecordEntry> entries() const;

  /// Forgets every row.
  void clear();

  /// For pthread_atfork: before_fork() takes the lock; after_fork_in_parent() releases it;
  /// after_fork_in_child() zeroes every count, then releases it, so that a forked child's record
  /// holds only its own calls (its parent writes the rest), as in the Python shim.
  void before_fork();
  void after_fork_in_parent();
  void after_fork_in_child();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Rows of both, counts summed per (api, requested, used, file, line), the first call site's
/// function kept; sorted as Recorder::entries().
std::vector<RecordEntry> merge_entries(const std::vector<RecordEntry>& existing,
                                       const std::vector<RecordEntry>& added);

/// The whole record as JSON text (keys in the order shown above, indented by 1).
std::string record_json(const RecordHeader& header, const std::vector<RecordEntry>& entries);

/// The rows of a record's text, or nullopt when the text is not a record of kRecordFormat whose
/// every row has a non-empty api, requested and used and a positive integer count.
std::optional<std::vector<RecordEntry>> parse_record(std::string_view text);

/// Merges `entries` into the record file at `path` (parent folders created): under an exclusive
/// flock on path + ".lock" (left in place), reads what is there, sums counts with merge_entries,
/// writes a temporary file beside it and renames it over `path`, so readers never see half a
/// file. A file there that is not a record (parse_record gives nullopt) is replaced and `warn`
/// is called with a sentence saying so. Throws std::system_error when a file cannot be opened,
/// locked, written or renamed.
void write_record(const std::filesystem::path& path, const RecordHeader& header,
                  const std::vector<RecordEntry>& entries,
                  const std::function<void(const std::string&)>& warn = {});

}  // namespace devshim
