#include "runner/results/run_folder.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "base/error.h"

namespace devshim {

namespace fs = std::filesystem;

void claim_run_folder(const fs::path& dir, const fs::path& db) {
  const fs::path marker = dir / kRunFolderMarker;
  std::ofstream out(marker, std::ios::trunc);
  out << fs::absolute(db).lexically_normal().string() << '\n';
  out.close();
  if (!out) {
    throw RuntimeError(fmt::format("{}: cannot write the run folder's marker: {}", marker.string(),
                                   std::strerror(errno)));
  }
}

std::vector<fs::path> file_outputs(const FileRecord& file) {
  if (file.log_path.empty()) return {};
  fs::path xml = file.log_path;
  xml.replace_extension(".xml");
  return {file.log_path, xml, file.log_path + ".redirections.json"};
}

std::optional<fs::path> foreign_owner(const fs::path& dir, const fs::path& db) {
  std::ifstream in(dir / kRunFolderMarker);
  std::string owner;
  if (!in || !std::getline(in, owner) || owner.empty()) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(owner, ec)) return std::nullopt;
  // The same file under another name (a symlink, a relative path) is the same database.
  if (fs::equivalent(owner, db, ec) || ec) return std::nullopt;
  return fs::path(owner);
}

}  // namespace devshim
