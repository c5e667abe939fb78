// Where the runner finds the files it ships with: the shim folder, the warm-start server and the
// device probe. One layout, relative to the runner executable, serves every way it is installed:
//
//   <prefix>/bin/runner                              the program (build tree: build/runner/runner)
//   <prefix>/bin/devshim-probe                       the probe (build tree: build/shim/cpp/)
//   <prefix>/share/devshim/shim/                     sitecustomize.py and the devshim package
//   <prefix>/share/devshim/zygote/devshim_zygote.py  the warm-start server
//
// `cmake --install build --prefix P` and the wheel (pip: <venv>/bin, <venv>/share) install it; the
// build tree holds the same share/devshim/ as links into the source tree (runner/CMakeLists.txt),
// so edits to the shim take effect without a build. An environment variable names each file
// instead (DEVSHIM_SHIM_DIR, DEVSHIM_ZYGOTE, DEVSHIM_PROBE).
#pragma once

#include <filesystem>

#include "runner/engine/environment.h"

namespace devshim {

/// The running program's own file, symbolic links resolved; empty when the system does not say.
std::filesystem::path executable_path();

/// <the runner's folder>/../share/devshim, lexically normal; empty when executable_path() is.
std::filesystem::path installed_data_dir();

/// env's DEVSHIM_SHIM_DIR, else installed_data_dir()/shim. Not checked for existence: the run
/// checks the folder it is given (it must hold sitecustomize.py) and names it when it is missing.
std::filesystem::path default_shim_dir(const Environment& env);

/// env's DEVSHIM_ZYGOTE, else installed_data_dir()/zygote/devshim_zygote.py.
std::filesystem::path zygote_script(const Environment& env);

/// devshim-probe: env's DEVSHIM_PROBE when set; else beside the runner; else in the build tree
/// (<runner's folder>/../shim/cpp/); else on env's PATH. Empty when there is none.
std::filesystem::path find_device_probe(const Environment& env);

}  // namespace devshim
