// Enough tests of several kinds to spread over shards.
#include <gtest/gtest.h>

TEST(Many, A) {}
TEST(Many, B) {}
TEST(Many, C) { EXPECT_EQ(1, 2); }
TEST(Many, D) { GTEST_SKIP() << "skip"; }
TEST(Many, DISABLED_E) {}
TEST(Other, A) {}
TEST(Other, B) {}

class Param : public ::testing::TestWithParam<int> {};
TEST_P(Param, Small) { EXPECT_LT(GetParam(), 3); }
INSTANTIATE_TEST_SUITE_P(Values, Param, ::testing::Range(0, 5));

template <typename T>
class Typed : public ::testing::Test {};
using TypedTypes = ::testing::Types<int, long, char>;
TYPED_TEST_SUITE(Typed, TypedTypes);
TYPED_TEST(Typed, Zero) { EXPECT_EQ(TypeParam(), TypeParam(0)); }
