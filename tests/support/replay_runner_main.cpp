// `replay_runner`: the runner's command line (runner/cli/runner_main.h) whose runs record or
// replay their test processes (tests/support/replay_services.h). Told by the environment:
//   DEVSHIM_RECORD_TO=DIR    real processes, each one's files and end recorded into DIR
//   DEVSHIM_REPLAY_FROM=DIR  no process: DIR's recording replayed
//   DEVSHIM_REPLAY_OUT=OUT   the run's --out folder (the recording's paths are relative to it)
// Commands that start no test process (show, runs, gaps, --list, ...) need none of them; a run
// without them fails at its first test process.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runner/cli/runner_main.h"
#include "tests/support/replay_services.h"

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread
  return value ? value : "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string record = variable("DEVSHIM_RECORD_TO");
  const std::string replay = variable("DEVSHIM_REPLAY_FROM");
  const std::string out = variable("DEVSHIM_REPLAY_OUT");
  return devshim::runner_main(
      argc, argv, [&](const devshim::Environment& env) -> std::unique_ptr<devshim::ServiceSet> {
        if (!record.empty() && !replay.empty()) {
          throw std::logic_error(
              "replay_runner: DEVSHIM_RECORD_TO or DEVSHIM_REPLAY_FROM, not both");
        }
        if (!record.empty()) return devshim::testing::recording_services(env, record, out);
        return devshim::testing::replay_services(replay, out);
      });
}
