#include "parsers/signature.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(NormalizeMessage, AbstractsVolatileParts) {
  EXPECT_EQ(normalize_message("0.79 not less than or equal to 1e-05"),
            "<n> not less than or equal to <n>");
  EXPECT_EQ(normalize_message("tensor at 0x7f3a2b1c on cuda:1 vs mps:0"),
            "tensor at <hex> on cuda:<i> vs mps:<i>");
  EXPECT_EQ(normalize_message("shape torch.Size([2, 3]) != [4, 5, 6]"),
            "shape torch.Size([<shape>]) != [<shape>]");
  EXPECT_EQ(normalize_message("No such file: /tmp/abc123/model.bin"), "No such file: <path>");
  EXPECT_EQ(normalize_message("got -3.5 and 42"), "got <n> and <n>");
  EXPECT_EQ(normalize_message("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
            "mat1 and mat2 shapes cannot be multiplied (<n>x<n> and <n>x<n>)");
  EXPECT_EQ(normalize_message("tried to allocate 16GB after 3s"),
            "tried to allocate <n>GB after <n>s");
  EXPECT_EQ(normalize_message("  many   spaces\n here "), "many spaces here");
  EXPECT_EQ(normalize_message("'" + std::string(50, 'a') + "' vs 'short'"), "'<str>' vs 'short'");
}

TEST(NormalizeMessage, KeepsDigitsInsideIdentifiers) {
  EXPECT_EQ(normalize_message("The operator 'aten::conv2d' is not implemented for float16"),
            "The operator 'aten::conv2d' is not implemented for float16");
  EXPECT_EQ(normalize_message("module 'torch._C' has no attribute '_cuda_getDevice'"),
            "module 'torch._C' has no attribute '_cuda_getDevice'");
}

TEST(FailureSignature, SameProblemSameSignature) {
  EXPECT_EQ(failure_signature("AssertionError", "0.79 not less than or equal to 1e-05"),
            failure_signature("AssertionError", "0.0123 not less than or equal to 1e-05"));
  EXPECT_NE(
      failure_signature("NotImplementedError", "The operator 'aten::foo' is not implemented"),
      failure_signature("NotImplementedError", "The operator 'aten::bar' is not implemented"));
  EXPECT_NE(failure_signature("ValueError", "x"), failure_signature("TypeError", "x"));
  // Stable across releases: stored in databases.
  EXPECT_EQ(failure_signature("AssertionError", "1 != 2"),
            failure_signature("AssertionError", "3 != 4"));
  EXPECT_EQ(failure_signature("", "").size(), 16U);
  EXPECT_EQ(failure_signature("AssertionError", "<n> != <n>"), "4df7db1c9091fd45");
}

}  // namespace
}  // namespace devshim
