#include "parsers/line_reader.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

std::vector<std::string> lines_of(LineReader r) {
  std::vector<std::string> out;
  std::string_view line;
  while (r.next(line)) out.emplace_back(line);
  return out;
}

TEST(LineReader, SplitsOnNewlinesAndKeepsALastLineWithoutOne) {
  EXPECT_EQ(lines_of(LineReader::from_string("a\r\nb\n\nc")),
            (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_TRUE(lines_of(LineReader::from_string("")).empty());
}

TEST(LineReader, ProgressBarsKeepWhatCameBeforeAndTheirFinalState) {
  EXPECT_EQ(
      lines_of(LineReader::from_string(
          "test_a (m.C.test_a) ... \r10%\r50%\r100% done\r\nnext\n\rStep 40/100FAIL\n")),
      (std::vector<std::string>{"test_a (m.C.test_a) ... 100% done", "next", "Step 40/100FAIL"}));
}

TEST(LineReader, RemovesAnsiEscapesAndNuls) {
  using namespace std::string_literals;
  EXPECT_EQ(lines_of(LineReader::from_string(
                "\x1b[1m\x1b[31mFAILED\x1b[0m x\n\x1b]0;title\x07ok\na\0b\n"s)),
            (std::vector<std::string>{"FAILED x", "ok", "ab"}));
}

TEST(LineReader, ReplacesInvalidUtf8AndKeepsValidUtf8) {
  EXPECT_EQ(lines_of(LineReader::from_string("caf\xc3\xa9 \xff\xfe end\n\xe2\x82\n")),
            (std::vector<std::string>{"caf\xc3\xa9 \xEF\xBF\xBD\xEF\xBF\xBD end",
                                      "\xEF\xBF\xBD\xEF\xBF\xBD"}));
}

TEST(LineReader, CutsLinesLongerThanTheLimitAndSaysSo) {
  LineReader r = LineReader::from_string(std::string(100, 'x') + "\nshort\n", 10);
  std::string_view line;
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line, std::string(10, 'x'));
  EXPECT_TRUE(r.truncated());
  ASSERT_TRUE(r.next(line));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.line_number(), 2U);
}

TEST(LineReader, ReadsFilesLargerThanItsBufferAndLongLinesAcrossReads) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "line " + std::to_string(i) + "\n";
  text += std::string(3 << 20, 'y') + "\nlast";
  testing::write_file(dir / "big.log", text);
  LineReader r(dir / "big.log");
  std::string_view line;
  std::size_t n = 0;
  std::string last;
  bool saw_truncated = false;
  while (r.next(line)) {
    if (n == 123456) {
      EXPECT_EQ(line, "line 123456");
    }
    saw_truncated = saw_truncated || r.truncated();
    last = std::string(line);
    ++n;
  }
  EXPECT_EQ(n, 200002U);
  EXPECT_TRUE(saw_truncated);
  EXPECT_EQ(last, "last");
  EXPECT_EQ(r.bytes_read(), text.size());
}

TEST(SanitizeText, KeepsNewlinesDropsControlsAndFixesUtf8) {
  EXPECT_EQ(sanitize_text("a\nb\x01\x1b[0m\xff"), "a\nb\xEF\xBF\xBD");
}

}  // namespace
}  // namespace devshim
