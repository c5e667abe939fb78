// libFuzzer target: GoogleTest's XML, alone and with a log (parse_gtest_xml, parse_gtest_results).
// The checks live in fuzz/fuzz_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_gtest_xml({reinterpret_cast<const char*>(data), size});
  return 0;
}
