// A LibTorch program that asks devshim for CUDA devices, for the RecordAtExit tests: with
// ACTIVATE_TORCH_DEVICE=1 and TORCHDEVICE_RECORD set, its record is written when it exits.
// Exit 0; 3 for a ShimConfigError; 4 when the device it got is CUDA (which this LibTorch lacks).
#include <cstdio>

#include "devshim/devshim.h"

int main() {
  try {
    c10::Device used(c10::kCPU);
    for (int i = 0; i < 5; ++i) used = devshim::device("cuda");
    for (int i = 0; i < 3; ++i) (void)devshim::options("cuda:1");
    (void)devshim::options("cpu");  // stands: not recorded
    if (used.is_cuda()) {
      std::fputs("record_child: got a CUDA device\n", stderr);
      return 4;
    }
    return 0;
  } catch (const devshim::ShimConfigError& e) {
    std::fprintf(stderr, "record_child: error: %s\n", e.what());
    return 3;
  }
}
