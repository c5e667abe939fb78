#include "parsers/traceback.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

// Captured from a real Python 3.11 run (torch 2.13, no CUDA).
constexpr const char* kTorchCudaTraceback = R"(Traceback (most recent call last):
  File "/work/proj/tests/test_tensors.py", line 6, in test_zeros_on_cuda_match_cpu
    x = torch.zeros(4, 3, device="cuda")
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 417, in _lazy_init
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
)";

TEST(ParseTraceback, FramesAndTheFinalException) {
  ParsedTraceback tb = parse_traceback(kTorchCudaTraceback);
  ASSERT_EQ(tb.frames.size(), 2U);
  EXPECT_EQ(tb.frames[0].file, "/work/proj/tests/test_tensors.py");
  EXPECT_EQ(tb.frames[0].line, 6);
  EXPECT_EQ(tb.frames[0].function, "test_zeros_on_cuda_match_cpu");
  EXPECT_EQ(tb.frames[1].function, "_lazy_init");
  EXPECT_EQ(tb.exception, "AssertionError");
  EXPECT_EQ(tb.message, "Torch not compiled with CUDA enabled");
  auto loc = location_in_file(tb, "tests/test_tensors.py");
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc->path, "tests/test_tensors.py");
  EXPECT_EQ(loc->line, 6);
  EXPECT_FALSE(location_in_file(tb, "ests/test_tensors.py"));
}

TEST(ParseTraceback, ChainedExceptionsEndAtTheLastOne) {
  ParsedTraceback tb = parse_traceback(R"(Traceback (most recent call last):
  File "/a/x.py", line 3, in f
    raise KeyError("k")
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/a/x.py", line 5, in g
    raise torch.OutOfMemoryError("out of memory: 0x7f00")
torch.OutOfMemoryError: out of memory: 0x7f00
  more message lines
)");
  ASSERT_EQ(tb.frames.size(), 1U);
  EXPECT_EQ(tb.frames[0].line, 5);
  EXPECT_EQ(tb.exception, "torch.OutOfMemoryError");
  EXPECT_EQ(tb.message, "out of memory: 0x7f00");
}

TEST(ParseTraceback, ExceptionWithoutMessageAndWithoutTraceback) {
  EXPECT_EQ(parse_traceback("Traceback (most recent call last):\n  File \"a.py\", line 1, in "
                            "<module>\nKeyboardInterrupt\n")
                .exception,
            "KeyboardInterrupt");
  EXPECT_EQ(parse_traceback("ImportError: Failed to import test module: x\n").exception,
            "ImportError");
  EXPECT_EQ(parse_traceback("nothing here").exception, "");
}

TEST(FindDefLine, PrefersTheClassGiven) {
  testing::TempDir dir;
  testing::write_file(dir / "t.py",
                      "import x\n\nclass A:\n    def test_a(self):\n        pass\n\n"
                      "class B(Base):\n    async def test_a(self):\n        pass\n"
                      "def test_b():\n    pass\n");
  EXPECT_EQ(find_def_line((dir / "t.py").string(), "test_a", "B"), 8);
  EXPECT_EQ(find_def_line((dir / "t.py").string(), "test_a"), 4);
  EXPECT_EQ(find_def_line((dir / "t.py").string(), "test_b"), 10);
  EXPECT_FALSE(find_def_line((dir / "t.py").string(), "test_c"));
  EXPECT_FALSE(find_def_line((dir / "nope.py").string(), "test_a"));
}

}  // namespace
}  // namespace devshim
