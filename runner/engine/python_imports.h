// What a Python test file imports, read from its text: the warm start preloads torch only for
// files that import it, and lets the files that do not import a preload start cold while the
// zygote is still importing it (docs/cli.md, "Warm start").
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace devshim {

/// The top-level packages `file` imports: `import a.b as c, d` gives a and d, `from e.f import g`
/// gives e, at any indentation (under `if`, `try`, in a function); relative imports are skipped.
/// The text is read line by line, not parsed: an import built at run time (`importlib`) or one
/// made by another module is not seen. Empty when the file cannot be read.
std::set<std::string> imported_packages(const std::filesystem::path& file);

/// The top-level package of a module name ("torch" of "torch._dynamo"; "?" of optional
/// preloads dropped).
std::string top_level_package(const std::string& module);

}  // namespace devshim
