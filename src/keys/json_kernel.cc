#include "keys/json_kernel.h"

#include <simdjson.h>

#include <cstdlib>
#include <string>

namespace keyshard {

Status check_json_kernel() {
  const simdjson::implementation* active = simdjson::get_active_implementation();
  if (active->name() != "unsupported" && active->supported_by_runtime_system()) return {};
  std::string runnable;
  for (const simdjson::implementation* kernel : simdjson::get_available_implementations()) {
    if (!kernel->supported_by_runtime_system()) continue;
    if (!runnable.empty()) runnable += ", ";
    runnable += kernel->name();
  }
  const char* forced = std::getenv("SIMDJSON_FORCE_IMPLEMENTATION");
  const std::string named = forced == nullptr ? "" : forced;
  const std::string problem = active->name() == "unsupported"
                                  ? "names no kernel simdjson has"
                                  : "names a kernel this CPU cannot run";
  return Status::error("SIMDJSON_FORCE_IMPLEMENTATION is '" + named + "', which " + problem +
                           ": use one of " + runnable + ", or unset it",
                       {}, kExitUsage);
}

}  // namespace keyshard
