// A parser header that reaches up into the engine: ctest's layers_check_finds_violations expects
// cmake/check_layers.cmake to reject line 6 and to accept the other includes.
#include <string>

#include "base/error.h"
#include "runner/engine/suite.h"
