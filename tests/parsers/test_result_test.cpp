// The one-line failure text and its inverse (parsers/test_result.h).
#include "parsers/test_result.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(FailureText, ExceptionAndMessageOrWhicheverIsThere) {
  TestCase c;
  c.exception = "AssertionError";
  c.message = "1 != 2";
  EXPECT_EQ(failure_text(c), "AssertionError: 1 != 2");
  c.message.clear();
  EXPECT_EQ(failure_text(c), "AssertionError");
  c.exception.clear();
  c.message = "boom";
  EXPECT_EQ(failure_text(c), "boom");
}

TEST(ExceptionPrefix, ADottedCapitalisedNameBeforeColonSpace) {
  EXPECT_EQ(exception_prefix("AssertionError: 1 != 2"), "AssertionError");
  EXPECT_EQ(exception_prefix("torch.cuda.OutOfMemoryError: CUDA out of memory"), "");  // lower-case
  EXPECT_EQ(exception_prefix("Module.Error: x"), "Module.Error");
  EXPECT_EQ(exception_prefix("OutOfMemoryError: a: b"), "OutOfMemoryError");
  EXPECT_EQ(exception_prefix("Value of: x"), "");  // a space in the head: not a name
  EXPECT_EQ(exception_prefix("value: x"), "");     // not capitalised
  EXPECT_EQ(exception_prefix(": x"), "");
  EXPECT_EQ(exception_prefix("AssertionError"), "");  // no message after it
  EXPECT_EQ(exception_prefix(""), "");
}

}  // namespace
}  // namespace devshim
