// A results header that includes only what its layer may (base, parsers, its own layer).
#include "base/error.h"
#include "parsers/result.h"
#include "runner/results/status.h"
