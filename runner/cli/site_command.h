// `runner site -o DIR`: a static site of a database's runs, built or updated in place (the site
// itself: reports/site.h).
#pragma once

#include <filesystem>

#include "reports/site.h"

namespace devshim {

/// `runner site -o DIR [--suite S] [--full] [--copy-files]`: build_site, then one line saying what
/// it did.
int site_command(const std::filesystem::path& db_path, const SiteOptions& options);

}  // namespace devshim
