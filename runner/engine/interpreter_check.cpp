#include "runner/engine/interpreter_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "base/printable.h"
#include "parsers/text.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/process_pool.h"

namespace devshim {

namespace {

constexpr std::string_view kMarker = "devshim-python ";
constexpr std::size_t kShownBytes = 300;  // of what a wrong interpreter printed
constexpr std::chrono::seconds kTimeout{60};

// What the process did, in words: "exited with 0 and printed nothing".
std::string what_it_did(const CapturedProcess& r) {
  std::string ended = r.timed_out ? fmt::format("did not answer within {} s", kTimeout.count())
                      : r.signal  ? "was killed by " + signal_name(*r.signal)
                                  : fmt::format("exited with {}", r.exit_code.value_or(-1));
  const std::string_view all = trim(r.output);
  if (all.empty()) return ended + " and printed nothing";
  std::string said(cut_utf8(all, kShownBytes));
  if (said.size() < all.size()) said += "...";
  return fmt::format("{} and printed \"{}\"", ended, printable(said));
}

}  // namespace

std::string check_python_interpreter(const std::string& interpreter, const std::string& origin,
                                     const Environment& env, const std::filesystem::path& cwd) {
  const std::string program =
      "import sys; print('" + std::string(kMarker) + "%d.%d.%d' % sys.version_info[:3])";
  const CapturedProcess r = capture_process({interpreter, "-I", "-S", "-c", program}, cwd, kTimeout,
                                            env, /*with_stderr=*/true);
  if (r.started && r.exit_code == 0) {
    if (auto at = r.output.find(kMarker); at != std::string::npos) {
      return std::string(trim(std::string_view(r.output).substr(at + kMarker.size())));
    }
  }
  // A signal stopped the check (capture_process kills the process then): the run is
  // interrupted, which says nothing of the interpreter.
  throw_if_interrupted();
  const std::string did =
      r.started ? what_it_did(r) : fmt::format("could not be started ({})", r.error);
  throw UsageError(fmt::format(
      "{} is no Python interpreter ({}): asked for its version ({} -I -S -c ...), it {}; give "
      "{} a Python 3 interpreter (e.g. .venv/bin/python)",
      interpreter, origin, interpreter, did, origin));
}

std::optional<std::vector<std::string>> missing_modules(const std::string& interpreter,
                                                        const std::vector<std::string>& modules,
                                                        const Environment& env,
                                                        const std::filesystem::path& cwd) {
  if (modules.empty()) return std::vector<std::string>{};
  const std::string program =
      "import importlib.util, sys\n"
      "for name in sys.argv[1:]:\n"
      "    try:\n"
      "        found = importlib.util.find_spec(name) is not None\n"
      "    except (ImportError, ValueError):\n"
      "        found = False\n"
      "    if not found:\n"
      "        print('" +
      std::string(kMarker) + "missing', name)\n";
  std::vector<std::string> argv{interpreter, "-c", program};
  argv.insert(argv.end(), modules.begin(), modules.end());
  const CapturedProcess r = capture_process(argv, cwd, kTimeout, env);
  throw_if_interrupted();
  if (!r.started || r.exit_code != 0) return std::nullopt;
  std::vector<std::string> missing;
  const std::string prefix = std::string(kMarker) + "missing ";
  for (const std::string_view line : lines_of(r.output)) {
    if (line.starts_with(prefix)) missing.emplace_back(trim(line.substr(prefix.size())));
  }
  return missing;
}

void require_modules(const std::string& interpreter, const std::string& origin,
                     const std::vector<RequiredModule>& required, const Environment& env,
                     const std::filesystem::path& cwd) {
  std::vector<std::string> names;
  names.reserve(required.size());
  for (const RequiredModule& m : required) names.push_back(m.module);
  const std::vector<std::string> missing =
      missing_modules(interpreter, names, env, cwd).value_or(std::vector<std::string>{});
  if (missing.empty()) return;
  std::vector<std::string> reasons;
  for (const RequiredModule& m : required) {
    if (std::find(missing.begin(), missing.end(), m.module) != missing.end()) {
      reasons.push_back(fmt::format("{} ({})", m.module, m.why));
    }
  }
  throw UsageError(fmt::format(
      "{} ({}) cannot import {}: install {} with `{} -m pip install {}`, or give another "
      "interpreter",
      interpreter, origin, fmt::join(reasons, " nor "), missing.size() == 1 ? "it" : "them",
      interpreter, fmt::join(missing, " ")));
}

}  // namespace devshim
