// A program with one deliberate bug per mode, for SanitizerBuildTest: the sanitizer build
// (DEVSHIM_SANITIZE=ON) must report each one and end the program with exit code 86
// (cmake/sanitizers/default_options.cpp). Built only in that build.
//
//   sanitizer_canary clean | heap-buffer-overflow | use-after-free | signed-overflow | leak
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// volatile: the compiler cannot prove the bugs away, nor the index in range.
volatile int g_index = 4;
volatile int g_one = 1;
void* volatile g_pointer = nullptr;

int heap_buffer_overflow() {
  int* a = new int[4]();
  const int v = a[g_index];  // NOLINT: the bug under test
  delete[] a;
  return v;
}

int use_after_free() {
  int* a = new int[4]();
  delete[] a;
  return a[0];  // NOLINT: the bug under test
}

int signed_overflow() {
  const int big = INT_MAX;
  return big + g_one;  // the bug under test (UBSan: signed-integer-overflow)
}

int leak() {
  g_pointer = std::malloc(1024);  // NOLINT: the bug under test
  g_pointer = nullptr;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer_canary MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  int v = 0;
  if (std::strcmp(mode, "clean") == 0) {
    v = 0;
  } else if (std::strcmp(mode, "heap-buffer-overflow") == 0) {
    v = heap_buffer_overflow();
  } else if (std::strcmp(mode, "use-after-free") == 0) {
    v = use_after_free();
  } else if (std::strcmp(mode, "signed-overflow") == 0) {
    v = signed_overflow();
  } else if (std::strcmp(mode, "leak") == 0) {
    v = leak();
  } else {
    std::fprintf(stderr, "sanitizer_canary: no mode '%s'\n", mode);
    return 2;
  }
  std::printf("survived %s (%d)\n", mode, v);
  return 0;
}
