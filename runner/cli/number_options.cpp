#include "runner/cli/number_options.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace devshim::cli {

CLI::Validator whole_number(long long min, long long max) {
  const std::string expected = fmt::format("a whole number from {} to {}", min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end || value < min || value > max) {
          return fmt::format("expected {}, not \"{}\"", expected, text);
        }
        return "";
      },
      fmt::format("INT in [{} - {}]", min, max));
}

CLI::Validator amount(const std::string& unit, bool zero_allowed, double max) {
  const std::string expected = zero_allowed
                                   ? fmt::format("a number of {} from 0 to {:.0f}", unit, max)
                                   : fmt::format("a number of {} above 0, up to {:.0f}", unit, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
        const bool whole_text = end != nullptr && *end == '\0';
        if (!whole_text || !std::isfinite(value) || value < 0 || (value == 0 && !zero_allowed) ||
            value > max) {
          return fmt::format("expected {}, not \"{}\"", expected, text);
        }
        return "";
      },
      fmt::format("{} {}", zero_allowed ? "NUMBER >= 0" : "NUMBER > 0", unit));
}

}  // namespace devshim::cli
