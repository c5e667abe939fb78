// A RunSink for the tests: it keeps every event and every progress call, in order, so that a test
// asserts on what the run reported instead of on the text a terminal would show.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runner/engine/run_events.h"

namespace devshim::testing {

class RecordingSink final : public RunSink {
 public:
  /// One call of a FileProgress, as text: "started a.py", "finished a.py failed", "note ...",
  /// "preparing ...", "close".
  std::vector<std::string> progress_calls;
  std::vector<RunEvent> events;

  void report(const RunEvent& event) override { events.push_back(event); }
  std::unique_ptr<FileProgress> progress(std::size_t /*files*/,
                                         const ProgressPlan& /*plan*/) override {
    return std::make_unique<Recorder>(progress_calls);
  }

  /// The events of type E, in order.
  template <typename E>
  std::vector<E> all() const {
    std::vector<E> out;
    for (const RunEvent& e : events) {
      if (const E* one = std::get_if<E>(&e)) out.push_back(*one);
    }
    return out;
  }

 private:
  class Recorder final : public FileProgress {
   public:
    explicit Recorder(std::vector<std::string>& calls) : calls_(calls) {}
    void preparing(const std::string& what) override { calls_.push_back("preparing " + what); }
    void note(const std::string& line) override { calls_.push_back("note " + line); }
    void started(const std::string& file) override { calls_.push_back("started " + file); }
    void finished(const std::string& file, FileStatus status, double /*duration_s*/,
                  const std::string& /*log*/, const std::string& /*detail*/) override {
      calls_.push_back("finished " + file + " " + std::string(to_string(status)));
    }
    void tick() override {}
    void close() override { calls_.push_back("close"); }

   private:
    std::vector<std::string>& calls_;
  };
};

}  // namespace devshim::testing
