// The second test never ends: the runner kills the binary at its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

TEST(Hang, First) {}

TEST(Hang, Forever) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
