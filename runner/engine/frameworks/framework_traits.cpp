#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

// Defined in unittest.cpp, pytest.cpp and gtest.cpp.
const FrameworkTraits& unittest_traits();
const FrameworkTraits& pytest_traits();
const FrameworkTraits& gtest_traits();

const FrameworkTraits& framework_traits(Framework f) {
  switch (f) {
    case Framework::kPytest:
      return pytest_traits();
    case Framework::kGtest:
      return gtest_traits();
    case Framework::kUnittest:
      break;
  }
  return unittest_traits();
}

}  // namespace devshim
