// A results header that includes only what its layer may (base, parsers, its own layer).
#include "parsers/result.h"
#include "runner/base/error.h"
#include "runner/results/status.h"
