// The `runner` executable: the command line (runner/cli/runner_main.h) with real processes.
#include "runner/cli/runner_main.h"

int main(int argc, char** argv) {
  return devshim::runner_main(argc, argv, devshim::system_services);
}
