// Validators for the command line's numeric options. CLI11's own ranges print DBL_MAX in full
// ("not in range 0.000000 to 1797693...") and let "nan" through; these say what was expected, in
// one line, and refuse what is not a finite number (docs/cli.md, "Exit codes": exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace devshim::cli {

/// A whole number from `min` to `max`: "--jobs: expected a whole number from 0 to 4096, not
/// "-1"".
CLI::Validator whole_number(long long min, long long max);

/// A finite amount of `unit` ("seconds", "MiB", "days"), above 0 or, with `zero_allowed`, 0 or
/// more, and at most `max` (a whole number): "--timeout: expected a number of seconds above 0,
/// up to 10000000, not "nan"".
CLI::Validator amount(const std::string& unit, bool zero_allowed, double max);

}  // namespace devshim::cli
