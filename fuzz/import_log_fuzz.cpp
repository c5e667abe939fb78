// libFuzzer target: the overall log of a TorchDevice log folder (parse_finished_line per line,
// read_overall_log). The checks live in fuzz/fuzz_checks.h, shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_import_log({reinterpret_cast<const char*>(data), size});
  return 0;
}
