// libFuzzer target: Markdown and HTML rendering of a Report holding the input's text (tables,
// tags). The checks live in fuzz/report_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/report_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_report({reinterpret_cast<const char*>(data), size});
  return 0;
}
