// simdjson picks the fastest kernel this CPU runs, unless SIMDJSON_FORCE_IMPLEMENTATION names
// one. A name it does not know (or an empty one) leaves it no kernel at all, and a kernel that
// needs instructions this CPU lacks would stop keyshard with SIGILL; either way every JSON
// line would fail. keyshard checks before it runs a command.
#pragma once

#include "util/status.h"

namespace keyshard {

/// An error naming SIMDJSON_FORCE_IMPLEMENTATION and the kernels this CPU runs when simdjson has
/// no kernel it can run here; success otherwise.
Status check_json_kernel();

}  // namespace keyshard
