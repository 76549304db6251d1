// The dead-letter record written a piece at a time (a long line in bounded memory) is byte for
// byte the record written whole, and its text is the line as one JSON string (or base64) would
// give it: for text cut inside a UTF-8 sequence, and for base64 cut anywhere.
#include "sinks/dead_letter.h"

#include <doctest/doctest.h>

#include <string>

#include "util/json_text.h"

namespace keyshard {
namespace {

std::string whole_record(const DeadLetter& letter) {
  std::string out;
  append_dead_letter(out, letter);
  return out;
}

// The record as the pieces `spill` received, and the largest piece.
std::string spilled_record(const DeadLetter& letter, size_t spill_at, size_t& largest) {
  std::string written, out;
  largest = 0;
  const Status status = append_dead_letter(out, letter, spill_at, [&](std::string& block) {
    largest = std::max(largest, block.size());
    written += block;
    block.clear();
    return Status{};
  });
  REQUIRE(status.ok());
  return written + out;
}

TEST_CASE("a dead letter spilled in pieces is the record written whole") {
  // 3 << 14 bytes make one piece: lines just around it, and far longer, with a two-byte UTF-8
  // character across the cut, control characters, quotes and invalid bytes.
  for (const size_t length : {size_t{0}, size_t{1}, size_t{(3 << 14) - 1}, size_t{3 << 14},
                              size_t{(3 << 14) + 1}, size_t{1 << 20}}) {
    for (const char* kind : {"control", "utf8", "binary"}) {
      std::string text;
      if (std::string(kind) == "utf8") {
        // One ASCII byte, then "é" repeated: each starts at an odd index, so the even piece
        // size cuts one in two.
        if (length > 0) text += 'x';
        while (text.size() + 2 <= length) text += "\xc3\xa9";
      }
      for (size_t i = 0; i < length; ++i) {
        if (std::string(kind) == "control") text += static_cast<char>(i % 3 == 0 ? 1 : '"');
        if (std::string(kind) == "binary") text += static_cast<char>(0xff - i % 7);
      }
      const DeadLetter letter{"in.ndjson", 7, 1234, BadReason::kInvalidJson, "unclosed string",
                              text};
      size_t largest = 0;
      CAPTURE(length);
      CAPTURE(kind);
      const std::string record = spilled_record(letter, 1 << 16, largest);
      CHECK(record == whole_record(letter));
      std::string text_member = ",";
      append_json_bytes_member(text_member, "text", text);
      CHECK(record.ends_with(text_member + "}\n"));
      CHECK(largest < (1 << 16) + 6 * (3 << 14));  // a spill holds at most one piece more
    }
  }
}

TEST_CASE("a failed spill stops the record and is returned") {
  const std::string line(1 << 20, '\1');
  const DeadLetter letter{"in", 1, 0, BadReason::kInvalidJson, "", line};
  std::string out;
  const Status status = append_dead_letter(out, letter, 1 << 16, [](std::string&) {
    return Status::error("disk full", "dead-letter.ndjson");
  });
  CHECK_FALSE(status.ok());
  CHECK(status.message() == "dead-letter.ndjson: disk full");
}

}  // namespace
}  // namespace keyshard
