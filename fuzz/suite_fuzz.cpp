// libFuzzer target: suite.json (load_suite on the input written to a temporary suite folder).
// The checks live in fuzz/runner_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/runner_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_suite({reinterpret_cast<const char*>(data), size});
  return 0;
}
