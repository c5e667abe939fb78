// libFuzzer target: GoogleTest's console output and failure text (parse_gtest_text, gtest_message).
// The checks live in fuzz/fuzz_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_gtest_text({reinterpret_cast<const char*>(data), size});
  return 0;
}
