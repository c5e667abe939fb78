#include "runner/engine/json_locations.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(JsonMemberLines, MapsPointersToTheLineOfTheirKey) {
  const std::string text =
      "{\n"
      "  \"a\": 1,\n"
      "  \"b\": {\"c\": \"x\",\n"
      "        \"d/e\": [10,\n"
      "                20]},\n"
      "  \"s\": \"has \\\" quote and : colon\"\n"
      "}\n";
  auto lines = json_member_lines(text);
  EXPECT_EQ(lines.at("/a"), 2);
  EXPECT_EQ(lines.at("/b"), 3);
  EXPECT_EQ(lines.at("/b/c"), 3);
  EXPECT_EQ(lines.at("/b/d~1e"), 4);
  EXPECT_EQ(lines.at("/b/d~1e/0"), 4);
  EXPECT_EQ(lines.at("/b/d~1e/1"), 5);
  EXPECT_EQ(lines.at("/s"), 6);
}

TEST(JsonMemberLines, NeverThrowsOnGarbage) {
  EXPECT_NO_THROW(json_member_lines("{\"a\": [}}}]]\"unterminated"));
}

TEST(PositionOfOffset, CountsLinesAndColumns) {
  auto p = position_of_offset("ab\ncd\nef", 4);
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.column, 2);
}

}  // namespace
}  // namespace devshim
