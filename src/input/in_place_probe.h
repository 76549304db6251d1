// Whether to read a file in place (mapped, see mapped_window.h) or copy it out with read().
//
// Reading in place saves the copy, but the first touch of each newly mapped page has a cost of
// its own, and that cost differs by machine: on some virtual machines it is over a microsecond
// a page, several times what read() takes to copy the page. So by default keyshard measures
// both, once per process, on the first file it could map, and maps only where that pays.
// KEYSHARD_READ_IN_PLACE sets the choice instead (`auto`, `yes`, `no`).
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace keyshard {

enum class InPlacePolicy {
  measured,  // map when the probe finds it costs no more than the copy (the default)
  always,    // map whenever the file allows it (no program writes to it)
  never,     // always read()
};

/// The policy that KEYSHARD_READ_IN_PLACE names: `auto` (or unset, or empty), `yes`, `no`;
/// any other value is an error naming the variable and the values it takes.
Status in_place_policy_from_environment(InPlacePolicy& policy);

/// Sets the policy for the rest of the process (before any input is read).
void set_in_place_policy(InPlacePolicy policy);

/// Whether `fd`, the regular file `name` of `file_size` bytes that no program writes to, is to
/// be read in place. With the measured policy the first call on a file of 384 KiB or more
/// probes (under a millisecond once the file is in memory): three times, it maps, touches and
/// unmaps up to 256 KiB of the file and reads as many other bytes of it, each region its own
/// (the first 1.5 MiB in all, less in a smaller file), and it keeps the answer for every later
/// file. A smaller file, or one that shrank since it was opened, is read in place unmeasured.
bool read_in_place_pays(int fd, const std::string& name, uint64_t file_size);

}  // namespace keyshard
