// `runner merge A.db B.db … -o ALL.db`: the shard databases of one run become one run
// (docs/cli.md, docs/nightly.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace devshim {

class Store;

struct MergeOptions {
  std::vector<std::filesystem::path> inputs;     ///< shard databases; each one's newest run
  std::filesystem::path output;                  ///< -o: the database the merged run goes to
  std::optional<std::filesystem::path> out_dir;  ///< --out; default: default_out_root(env)/<suite>/
                                                 ///< <stamp>-merged
  std::vector<std::string> command_line;         ///< argv, stored as the run's command line
  /// Called once the merged run is recorded (writes its reports); returns the files written.
  std::function<std::vector<std::filesystem::path>(Store&, std::int64_t run_id,
                                                   const std::filesystem::path& out_dir)>
      on_recorded;
};

struct MergeResult {
  std::int64_t run_id = 0;
  std::string status;  ///< the merged run's: passed, failed or interrupted
};

/// Takes the newest run of each input database and records them as one run in the output
/// database (created when missing; it may hold other runs): the union of their files, with
/// every case, attempt and redirection; started at the earliest start, finished at the latest
/// end; failed when a file failed, interrupted when an input was. Shard runs of a differential
/// run bring their baseline runs, merged the same way. Logs are copied into <out>/logs when the
/// input's output folder is found: beside the input database (a folder holding logs/), else at
/// the path the run recorded.
///
/// Throws UsageError (exit 2) when an input is missing or is the output, when the runs do not
/// belong together (another suite, framework, mode or targets; shards of different counts or
/// plans, the same shard twice) or two of them ran the same file. Missing shards are a warning.
MergeResult merge_command(const MergeOptions& options);

}  // namespace devshim
