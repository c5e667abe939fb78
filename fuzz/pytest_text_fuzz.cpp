// libFuzzer target: `pytest -v -ra`/`-rA` output and its longrepr helpers (parse_pytest_text,
// summarize_pytest_failure). The checks live in fuzz/fuzz_checks.h, shared with the regression
// test.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  devshim::fuzz::run_pytest_text({reinterpret_cast<const char*>(data), size});
  return 0;
}
