// The overall run log (<out>/run.log): one line per event, flushed as written, so that a runner
// killed at any point leaves everything up to its last event on disk.
//
// Line format (kept close to TorchDevice's run_transformer_tests.py so its readers still work):
//   2026-11-21T22:46:00Z Started test: pipelines/test_x.py
//   2026-11-21T22:46:03Z Finished test: pipelines/test_x.py - Status: passed (RC: 0)
//   Duration: 3.21s
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace devshim {

class RunLog {
 public:
  /// Creates (truncates) the file, or appends to it (a resumed run); throws RuntimeError when it
  /// cannot.
  explicit RunLog(const std::filesystem::path& path, bool append = false);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  /// Writes "<UTC timestamp> <message>\n" and flushes.
  void line(const std::string& message);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace devshim
