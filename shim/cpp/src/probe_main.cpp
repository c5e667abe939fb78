// devshim-probe: prints what LibTorch sees on this machine (devshim/probe.h).
//
//   devshim-probe [--json]   JSON (the default), format devshim-probe/1
//   devshim-probe --text     a short table for people
//
// Exit 0, or 2 for a bad command line.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "devshim/probe.h"

int main(int argc, char** argv) {
  bool text = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      text = false;
    } else if (arg == "--text") {
      text = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs("usage: devshim-probe [--json | --text]\n", stdout);
      return 0;
    } else {
      std::fprintf(stderr, "devshim-probe: error: unknown argument '%s' (use --json or --text)\n",
                   arg.c_str());
      return 2;
    }
  }
  try {
    const devshim::Probe probe = devshim::probe();
    const std::string out = text ? devshim::to_text(probe) : devshim::to_json(probe);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "devshim-probe: internal error: %s\n", e.what());
    return 70;
  }
}
