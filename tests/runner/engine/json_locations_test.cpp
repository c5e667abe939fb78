#include "runner/engine/json_locations.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(JsonMembers, MapsPointersToTheLineOfTheirKey) {
  const std::string text =
      "{\n"
      "  \"a\": 1,\n"
      "  \"b\": {\"c\": \"x\",\n"
      "        \"d/e\": [10,\n"
      "                20]},\n"
      "  \"s\": \"has \\\" quote and : colon\"\n"
      "}\n";
  const JsonMembers members = json_members(text);
  const auto& lines = members.lines;
  EXPECT_EQ(lines.at("/a"), 2);
  EXPECT_EQ(lines.at("/b"), 3);
  EXPECT_EQ(lines.at("/b/c"), 3);
  EXPECT_EQ(lines.at("/b/d~1e"), 4);
  EXPECT_EQ(lines.at("/b/d~1e/0"), 4);
  EXPECT_EQ(lines.at("/b/d~1e/1"), 5);
  EXPECT_EQ(lines.at("/s"), 6);
  EXPECT_TRUE(members.duplicates.empty());
}

TEST(JsonMembers, FindsKeysGivenTwiceInOneObjectOnly) {
  const std::string text =
      "{\"env\": {\"A\": \"1\"},\n"
      " \"list\": [{\"k\": 1}, {\"k\": 2}],\n"
      " \"name\": \"x\",\n"
      " \"name\": \"y\"}\n";
  const JsonMembers members = json_members(text);
  ASSERT_EQ(members.duplicates.size(), 1U);
  EXPECT_EQ(members.duplicates[0].first, "/name");
  EXPECT_EQ(members.duplicates[0].second, 4);
  EXPECT_EQ(members.lines.at("/name"), 3);
}

TEST(JsonMembers, NeverThrowsOnGarbage) {
  EXPECT_NO_THROW(json_members("{\"a\": [}}}]]\"unterminated"));
}

TEST(PositionOfOffset, CountsLinesAndColumns) {
  auto p = position_of_offset("ab\ncd\nef", 4);
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.column, 2);
}

}  // namespace
}  // namespace devshim
