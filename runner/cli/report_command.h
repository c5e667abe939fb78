// `runner report [RUN]`: a recorded run's reports rendered again, on demand (docs/cli.md).
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// `runner report [RUN] [--format md,json,junit,html] [-o DIR] [--against OTHER]`: dir defaults
/// to the run's own output folder. Prints the paths written. RUN and OTHER are what
/// Store::resolve_run takes. With against, the run-to-run section compares with OTHER, the
/// reports go to <run's folder>/against-<OTHER's id> unless dir is given, and the run's stored
/// summary is left as it is (it describes the run against its previous run).
int report_command(const std::filesystem::path& db_path, const std::string& run,
                   const std::string& formats, const std::string& dir,
                   const std::string& against = "");

}  // namespace devshim
