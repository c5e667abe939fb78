// libFuzzer target: Python tracebacks, signatures and gap attribution (parse_traceback,
// attribute_failure). The checks live in fuzz/fuzz_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_traceback({reinterpret_cast<const char*>(data), size});
  return 0;
}
