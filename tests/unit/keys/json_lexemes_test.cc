// The number and \u-digit readers that the plain-object scan and the strict grammar check
// share (keys/json_lexemes.h).
#include "keys/json_lexemes.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string_view>

namespace keyshard {
namespace {

// The size of the number at the start of `text`, or -1 when none is there.
long number_size(std::string_view text) {
  const char* end = json_number_end(text.data(), text.data() + text.size());
  return end == nullptr ? -1 : end - text.data();
}

TEST_CASE("a JSON number ends after its last digit") {
  CHECK(number_size("0") == 1);
  CHECK(number_size("7,") == 1);
  CHECK(number_size("-12}") == 3);
  CHECK(number_size("3.25 ") == 4);
  CHECK(number_size("1e9]") == 3);
  CHECK(number_size("-0.5E+10,") == 8);
  CHECK(number_size("6.02e-23") == 8);
  CHECK(number_size("12345678901234567890123") == 23);  // any size: past 64 bits too
}

TEST_CASE("a leading zero ends the integer part; what follows is the caller's to judge") {
  CHECK(number_size("01") == 1);
  CHECK(number_size("-00") == 2);
  CHECK(number_size("0x1f") == 1);
  CHECK(number_size("1.5.5") == 3);
  CHECK(number_size("2e5e5") == 3);
}

TEST_CASE("no JSON number: no digit where one must be") {
  for (const std::string_view text :
       {"", "-", "+1", ".5", "-.5", "1.", "1.e5", "1e", "1e+", "1E-,", "-x", "Infinity", "NaN",
        "-Infinity", "\"1\"", " 1"}) {
    CAPTURE(text);
    CHECK(number_size(text) == -1);
  }
}

TEST_CASE("a number never reads past its limit") {
  const std::string_view text = "123.5e7";
  // Cut at each place: the digits before the cut, or nothing where the cut leaves a '.' or
  // an exponent without digits. Each cut is copied to a buffer of exactly its size, so that
  // AddressSanitizer (make test-asan) sees a read past it.
  const long expected[] = {-1, 1, 2, 3, -1, 5, -1, 7};
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    CAPTURE(cut);
    const std::unique_ptr<char[]> piece(new char[cut]);
    std::copy_n(text.data(), cut, piece.get());
    CHECK(number_size(std::string_view(piece.get(), cut)) == expected[cut]);
  }
}

TEST_CASE("four hex digits, in either case") {
  auto hex4 = [](std::string_view text) {
    return json_hex4(text.data(), text.data() + text.size());
  };
  CHECK(hex4("0000") == 0u);
  CHECK(hex4("00e9") == 0xe9u);
  CHECK(hex4("D83D") == 0xd83du);
  CHECK(hex4("dE0aXYZ") == 0xde0au);  // only four are read
  CHECK(hex4("ffff") == 0xffffu);
  CHECK_FALSE(hex4("123").has_value());  // too few before the limit
  CHECK_FALSE(hex4("").has_value());
  CHECK_FALSE(hex4("12g4").has_value());
  CHECK_FALSE(hex4("-123").has_value());
  CHECK_FALSE(hex4("12 4").has_value());
  CHECK_FALSE(hex4("G000").has_value());
  CHECK_FALSE(hex4("/000").has_value());  // the bytes next to '0'..'9', 'a'..'f', 'A'..'F'
  CHECK_FALSE(hex4(":000").has_value());
  CHECK_FALSE(hex4("@000").has_value());
  CHECK_FALSE(hex4("`000").has_value());
  CHECK_FALSE(hex4("g000").has_value());
}

}  // namespace
}  // namespace keyshard
