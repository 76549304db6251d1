// Pins the reader stage: chunks hold whole lines and, put back together, reproduce every input
// byte for byte, whatever the chunk size; offsets, input indices and sequence numbers say where
// each chunk came from; zstd inputs are found by their magic bytes and decoded, and a truncated
// or missing input is an error that names the file.
#include "input/chunk_reader.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "input/in_place_probe.h"
#include "input/input_source.h"
#include "input/line_index.h"
#include "input/mapped_window.h"
#include "keys/json_path_walker.h"
#include "unit/temp_dir.h"

namespace keyshard {
namespace {

// "prefix" followed by `number`, for file names.
std::string numbered(std::string_view prefix, size_t number) {
  std::string name(prefix);
  name += std::to_string(number);
  return name;
}

std::string zstd_compress(std::string_view text, int level = 3) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t size = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), level);
  REQUIRE_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

// A zstd skippable frame (magic 0x184D2A50..5F) carrying `payload`, as pzstd and seekable-zstd
// write them.
std::string skippable_frame(std::string_view payload) {
  std::string frame = "\x50\x2a\x4d\x18";
  const auto size = static_cast<uint32_t>(payload.size());
  for (int shift = 0; shift < 32; shift += 8) frame.push_back(static_cast<char>(size >> shift));
  frame.append(payload);
  return frame;
}

// What a streaming decoder gets out of `compressed` before it runs out of input.
std::string zstd_decodable_prefix(std::string_view compressed) {
  ZSTD_DStream* stream = ZSTD_createDStream();
  REQUIRE(stream != nullptr);
  std::string decoded;
  std::string buffer(1 << 16, '\0');
  ZSTD_inBuffer input{compressed.data(), compressed.size(), 0};
  for (;;) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    const size_t hint = ZSTD_decompressStream(stream, &output, &input);
    if (ZSTD_isError(hint)) break;
    decoded.append(buffer.data(), output.pos);
    if (output.pos == 0 && input.pos == input.size) break;
  }
  ZSTD_freeDStream(stream);
  return decoded;
}

// One chunk as delivered, copied out of the reused Chunk.
struct Delivered {
  std::string text;
  uint32_t input = 0;
  uint64_t input_offset = 0;
  uint64_t sequence = 0;
  bool final_fragment = false;
  size_t capacity = 0;
  bool in_place = false;  // a view of the input file, mapped
};

struct Reading {
  std::vector<Delivered> chunks;
  Status status;  // the error that ended the reading, or ok at the end of all inputs
  uint64_t bytes_read = 0;
  std::vector<std::string> names;
};

// Reads every chunk, recycling a small pool of Chunk objects as the pipeline does, and checks
// on the way that the promised padding after the text is readable (ASan builds catch a short
// allocation).
Reading read_all(const std::vector<std::string>& paths, size_t chunk_size,
                 size_t max_line_size = 64u << 20) {
  ChunkReader reader(paths, chunk_size, max_line_size);
  Reading reading;
  Chunk pool[3];
  for (size_t turn = 0;; ++turn) {
    Chunk& chunk = pool[turn % 3];
    if (!reader.next(chunk, reading.status)) break;
    REQUIRE(chunk.text() != nullptr);
    REQUIRE(chunk.size + kLinePadding <= chunk.readable_end());
    if (chunk.view == nullptr) REQUIRE(chunk.size <= chunk.capacity);
    unsigned padding_sum = 0;
    for (size_t i = chunk.size; i < chunk.readable_end(); ++i) {
      padding_sum += static_cast<unsigned char>(chunk.text()[i]);
    }
    (void)padding_sum;
    // The lines are found already, exactly as index_lines finds them in the text delivered.
    std::vector<uint32_t> starts;
    index_lines(chunk.text(), chunk.size, starts);
    REQUIRE(chunk.line_starts == starts);
    reading.chunks.push_back(Delivered{std::string(chunk.text(), chunk.size), chunk.input,
                                       chunk.input_offset, chunk.sequence, chunk.final_fragment,
                                       chunk.capacity, chunk.view != nullptr});
    REQUIRE(reading.chunks.size() < 50'000'000);  // a reader that never ends
  }
  // The end is sticky: another call still says there is nothing more.
  if (reading.status.ok()) {
    Status again;
    CHECK_FALSE(reader.next(pool[0], again));
    CHECK(again.ok());
  }
  reading.bytes_read = reader.bytes_read();
  reading.names = reader.input_names();
  return reading;
}

std::string shown_text(std::string_view text, size_t limit = 80) {
  std::string out;
  for (const char c : text.substr(0, limit)) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out.push_back(c);
  }
  if (text.size() > limit) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

// Checks every promise of a complete reading of `contents` (one entry per input, in order).
void check_reading(const Reading& reading, const std::vector<std::string>& contents) {
  INFO("status: ", reading.status.message());
  REQUIRE(reading.status.ok());
  std::vector<std::string> rebuilt(contents.size());
  uint64_t expected_sequence = 0;
  uint32_t previous_input = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < reading.chunks.size(); ++i) {
    const Delivered& chunk = reading.chunks[i];
    INFO("chunk ", i, " of ", reading.chunks.size(), ": input ", chunk.input, " offset ",
         chunk.input_offset, " text '", shown_text(chunk.text), "'");
    REQUIRE(chunk.input < contents.size());
    CHECK(chunk.sequence == expected_sequence++);
    CHECK(chunk.input >= previous_input);  // inputs in the order given
    previous_input = chunk.input;
    CHECK_FALSE(chunk.text.empty());
    // The offset is where this chunk's text starts in its (decompressed) input.
    CHECK(chunk.input_offset == rebuilt[chunk.input].size());
    rebuilt[chunk.input] += chunk.text;
    total += chunk.text.size();
    // Every chunk ends a line, except the last chunk of an input without a final newline.
    const bool last_of_input =
        i + 1 == reading.chunks.size() || reading.chunks[i + 1].input != chunk.input;
    if (!last_of_input) CHECK(chunk.text.back() == '\n');
    if (!chunk.text.empty()) CHECK(chunk.final_fragment == (chunk.text.back() != '\n'));
    if (chunk.final_fragment) CHECK(last_of_input);
  }
  for (size_t input = 0; input < contents.size(); ++input) {
    INFO("input ", input, ": expected '", shown_text(contents[input]), "', rebuilt '",
         shown_text(rebuilt[input]), "'");
    CHECK(rebuilt[input] == contents[input]);
  }
  CHECK(reading.bytes_read == total);
}

// Lines of many lengths (0 to 700 bytes, a few of 5000) from a fixed seed.
std::string random_lines(size_t count, bool final_newline, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t roll = random() % 100;
    const size_t length = roll < 5 ? 0 : roll < 98 ? random() % 700 : 5000;
    for (size_t k = 0; k < length; ++k) text.push_back(static_cast<char>('a' + random() % 26));
    if (random() % 10 == 0) text += "\r";
    if (i + 1 < count || final_newline) text += "\n";
  }
  return text;
}

const std::vector<size_t> kChunkSizes = {1, 2, 3, 7, 64, 100, 4096, 65536, 1 << 20};

}  // namespace

TEST_CASE("chunks put back together reproduce each input exactly, for many chunk sizes") {
  const TempDir dir;
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"one-line", "{\"k\":1}\n"},
      {"no-final-newline", "abc\ndef"},
      {"only-final-newline", "abc\ndef\n"},
      {"one-byte", "a"},
      {"one-newline", "\n"},
      {"only-newlines", "\n\n\n\n\n"},
      {"crlf", "l1\r\nl2\r\n\r\nlast\r\n"},
      {"crlf-no-final", "l1\r\nl2\r"},
      {"long-line", "short\n" + std::string(300, 'x') + "\nafter\n"},
      {"long-last-line", "short\n" + std::string(5000, 'y')},
      {"random", random_lines(2000, true, 1)},
      {"random-no-final", random_lines(1500, false, 2)},
      {"binary", std::string("\0\x01\xff\n\0\n\xfe", 7)},
  };
  for (const size_t chunk_size : kChunkSizes) {
    for (const auto& input : inputs) {
      const auto& [name, content] = input;
      const auto& shown = name;  // (clang 14 cannot capture a structured binding)
      CAPTURE(chunk_size);
      CAPTURE(shown);
      const std::string path = dir.write(name, content);
      const Reading reading = read_all({path}, chunk_size);
      check_reading(reading, {content});
      CHECK(reading.names == std::vector<std::string>{path});
    }
  }
}

// Sets the in-place policy for one test, and the default back after it.
class PolicyFor {
 public:
  explicit PolicyFor(InPlacePolicy policy) { set_in_place_policy(policy); }
  ~PolicyFor() { set_in_place_policy(InPlacePolicy::measured); }
  PolicyFor(const PolicyFor&) = delete;
  PolicyFor& operator=(const PolicyFor&) = delete;
};

size_t chunks_in_place(const Reading& reading) {
  return static_cast<size_t>(std::count_if(reading.chunks.begin(), reading.chunks.end(),
                                           [](const Delivered& c) { return c.in_place; }));
}

// Whether this system grants read leases: without them (NFS, fs.leases-enable=0) keyshard
// cannot tell that no program writes to a file, and reads it with read().
bool leases_granted(const std::string& path) {
  const int probe = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(probe >= 0);
  const bool leases = nobody_writes(probe);
  ::close(probe);
  return leases;
}

TEST_CASE("a file no program writes to is read in place, across windows, as read() reads it") {
  const PolicyFor always(InPlacePolicy::always);  // whatever the probe would find here
  const TempDir dir;
  const std::string content = random_lines(90000, false, 3);  // about 38 MiB: three windows
  REQUIRE(content.size() > (32u << 20));
  const std::string path = dir.write("windows", content);
  const bool leases = leases_granted(path);
  for (const size_t chunk_size : {size_t{4096}, size_t{1} << 20}) {
    CAPTURE(chunk_size);
    const Reading mapped = read_all({path}, chunk_size);
    check_reading(mapped, {content});
    const size_t in_place = chunks_in_place(mapped);
    // All but the chunks near the end and those holding a line longer than a chunk.
    if (leases) CHECK(in_place + 3 + (chunk_size < 5001 ? 2000 : 0) >= mapped.chunks.size());
    if (!leases) CHECK(in_place == 0);
    // Held open for writing (as a live log is), the file is read into the chunks instead.
    const int writer = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    REQUIRE(writer >= 0);
    const Reading read = read_all({path}, chunk_size);
    ::close(writer);
    check_reading(read, {content});
    CHECK(chunks_in_place(read) == 0);
  }
}

TEST_CASE("the in-place policy: never maps; measured maps every file or none, as read() reads") {
  const TempDir dir;
  const std::string first = random_lines(12000, false, 5);  // about 5 MiB each
  const std::string second = random_lines(12000, false, 6);
  const std::string first_path = dir.write("first", first);
  const std::string second_path = dir.write("second", second);
  const size_t chunk_size = 256u << 10;
  {
    const PolicyFor never(InPlacePolicy::never);
    const Reading reading = read_all({first_path, second_path}, chunk_size);
    check_reading(reading, {first, second});
    CHECK(chunks_in_place(reading) == 0);
  }
  // The probe's answer is machine's own, so either is right; but it is given once, for both
  // files and for a later reading alike.
  const Reading reading = read_all({first_path, second_path}, chunk_size);
  check_reading(reading, {first, second});
  const size_t in_place = chunks_in_place(reading);
  const bool mapped = in_place > 0;
  CAPTURE(in_place);
  CAPTURE(reading.chunks.size());
  if (!leases_granted(first_path)) CHECK(!mapped);
  if (mapped) CHECK(in_place + 6 >= reading.chunks.size());  // all but the ends of both files
  const Reading again = read_all({second_path}, chunk_size);
  check_reading(again, {second});
  CHECK((chunks_in_place(again) > 0) == mapped);
}

TEST_CASE("an empty input gives no chunk") {
  const TempDir dir;
  const std::string path = dir.write("empty", "");
  for (const size_t chunk_size : kChunkSizes) {
    CAPTURE(chunk_size);
    const Reading reading = read_all({path}, chunk_size);
    CHECK(reading.status.ok());
    CHECK(reading.chunks.empty());
    CHECK(reading.bytes_read == 0);
  }
}

TEST_CASE("at_end: once the last chunk of the last input is out, and not before") {
  // What tells a signal that stopped the reading from one that came once it was done.
  const TempDir dir;
  const std::string first = dir.write("first", random_lines(300, true, 5));
  const std::string empty = dir.write("empty", "");
  // The last input ends with a newline (most files do) or without one.
  for (const bool final_newline : {true, false}) {
    for (const size_t chunk_size : kChunkSizes) {
      CAPTURE(final_newline);
      CAPTURE(chunk_size);
      const std::vector<std::string> paths = {
          first, empty, dir.write(final_newline ? "last" : "last-unended",
                                  random_lines(200, final_newline, 6))};
      ChunkReader reader(paths, chunk_size, 64u << 20);
      CHECK_FALSE(reader.at_end());
      Chunk chunk;
      Status status;
      std::vector<bool> ends;  // at_end() after each chunk
      std::vector<uint32_t> inputs;
      while (reader.next(chunk, status)) {
        ends.push_back(reader.at_end());
        inputs.push_back(chunk.input);
      }
      REQUIRE(status.ok());
      REQUIRE_FALSE(ends.empty());
      // Only after the last chunk, which is one of the last input.
      CHECK(ends.back());
      CHECK(inputs.back() == 2);
      CHECK(std::count(ends.begin(), ends.end(), true) == 1);
      CHECK(reader.at_end());
    }
  }
  // A stream not yet at its end is not at its end, whatever was read of it.
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  REQUIRE(::write(pipe_ends[1], "a\nb\n", 4) == 4);
  const std::string stream = "/dev/fd/" + std::to_string(pipe_ends[0]);
  ChunkReader reader({stream}, 4096, 64u << 20);
  Chunk chunk;
  Status status;
  REQUIRE(reader.next(chunk, status));
  CHECK(chunk.line_count() == 2);
  CHECK_FALSE(reader.at_end());
  ::close(pipe_ends[1]);
  while (reader.next(chunk, status)) CHECK(chunk.line_count() == 0);  // (a quiet pipe's flush)
  CHECK(status.ok());
  CHECK(reader.at_end());
  ::close(pipe_ends[0]);
}

TEST_CASE("several inputs are read in order with their index, offsets and one sequence") {
  const TempDir dir;
  const std::vector<std::string> contents = {
      random_lines(300, true, 3), "", "x\ny", "\n", random_lines(500, false, 4), "", "last\n"};
  std::vector<std::string> paths;
  for (size_t i = 0; i < contents.size(); ++i) {
    paths.push_back(dir.write(numbered("input-", i), contents[i]));
  }
  for (const size_t chunk_size : kChunkSizes) {
    CAPTURE(chunk_size);
    const Reading reading = read_all(paths, chunk_size);
    check_reading(reading, contents);
    CHECK(reading.names == paths);
    // A chunk never mixes two inputs, and each input's first chunk starts at offset 0.
    for (size_t i = 0; i < reading.chunks.size(); ++i) {
      if (i == 0 || reading.chunks[i - 1].input != reading.chunks[i].input) {
        CHECK(reading.chunks[i].input_offset == 0);
      }
    }
    // The unterminated last line of input 2 stays apart from the next input's first line.
    bool saw_y = false;
    for (const auto& chunk : reading.chunks) {
      if (chunk.input == 2 && chunk.text.back() == 'y') {
        saw_y = true;
        CHECK(chunk.final_fragment);
      }
    }
    CHECK(saw_y);
  }
}

TEST_CASE("chunks stay near the chunk size and hold whole lines") {
  const TempDir dir;
  const std::string content = random_lines(3000, true, 5);
  const std::string path = dir.write("lines", content);
  for (const size_t chunk_size : {size_t{4096}, size_t{65536}}) {
    CAPTURE(chunk_size);
    const Reading reading = read_all({path}, chunk_size);
    check_reading(reading, {content});
    // No line here is longer than 5001 bytes, so no chunk needs to grow far.
    for (const auto& chunk : reading.chunks) CHECK(chunk.text.size() <= chunk_size + 5001);
    // And chunks are well filled: all but the last hold more than half a chunk minus a line.
    for (size_t i = 0; i + 1 < reading.chunks.size(); ++i) {
      CHECK(reading.chunks[i].text.size() + 5001 > chunk_size / 2);
    }
  }
}

TEST_CASE("a chunk holds at most max(4096, chunk size / 16) lines, and short lines stay whole") {
  // Empty and one-byte lines would otherwise put a million lines (and their routing tables) in
  // one chunk; the lines left over come in the next chunks, before more is read.
  const TempDir dir;
  std::string empty_lines(300000, '\n');
  std::string mixed;
  for (size_t i = 0; i < 200000; ++i) mixed += i % 1000 == 999 ? "a long line that ends it\n" : "x\n";
  mixed += "no newline at the end";
  const std::string empty_path = dir.write("empty", empty_lines);
  const std::string mixed_path = dir.write("mixed", mixed);
  for (const size_t chunk_size : {size_t{4096}, size_t{65536}, size_t{1} << 20}) {
    CAPTURE(chunk_size);
    const size_t most = std::max<size_t>(4096, chunk_size / 16);
    const Reading reading = read_all({empty_path, mixed_path, empty_path}, chunk_size);
    check_reading(reading, {empty_lines, mixed, empty_lines});
    size_t largest_capacity = 0;
    for (const auto& chunk : reading.chunks) {
      CHECK(static_cast<size_t>(std::count(chunk.text.begin(), chunk.text.end(), '\n')) <= most);
      largest_capacity = std::max(largest_capacity, chunk.capacity);
    }
    // The leftover lines do not pile up: a chunk grows at most to where it goes back to the
    // usual size (see "a chunk that grew for a long line goes back to the usual size").
    CHECK(largest_capacity <= 4 * chunk_size + chunk_size / 2 + 64);
  }
}

TEST_CASE("a line longer than the chunk size grows the chunk, even a 10 MiB line") {
  const TempDir dir;
  const std::string huge(10u << 20, 'h');
  const std::string content = "before\n" + huge + "\nafter\n" + huge;
  const std::string path = dir.write("huge", content);
  for (const size_t chunk_size : {size_t{4096}, size_t{1} << 16, size_t{1} << 20}) {
    CAPTURE(chunk_size);
    const Reading reading = read_all({path}, chunk_size);
    check_reading(reading, {content});
    size_t holding_huge = 0;
    for (const auto& chunk : reading.chunks) {
      if (chunk.text.size() >= huge.size()) ++holding_huge;
    }
    CHECK(holding_huge == 2);
  }
}

TEST_CASE("a chunk that grew for a long line goes back to the usual size") {
  const TempDir dir;
  // After the long line, more than the grown chunk holds, so that each chunk is reused.
  const std::string content = std::string(1u << 20, 'L') + "\n" + random_lines(12000, true, 6);
  const std::string path = dir.write("grow", content);
  const size_t chunk_size = 4096;
  const Reading reading = read_all({path}, chunk_size);
  check_reading(reading, {content});
  REQUIRE(reading.chunks.size() > 10);
  CHECK(reading.chunks[0].capacity >= (1u << 20) + 1);
  // The pool holds three chunks; from the first reuse on, none stays huge.
  for (size_t i = 3; i < reading.chunks.size(); ++i) {
    CAPTURE(i);
    CHECK(reading.chunks[i].capacity <= 4 * chunk_size);
  }
}

TEST_CASE("a chunk takes as much input as a fresh one would, whichever chunk it is read into") {
  // Which chunk of the pool the reader is given depends on timing, and one that grew for a long
  // line keeps up to 4 times the chunk size. Reused, it must not take more input than a fresh
  // chunk: the chunks' sizes decide where checkpoints fall, and so where the frames of a
  // compressed output end.
  const TempDir dir;
  const size_t chunk_size = 4096;
  const std::string content = std::string(3 * chunk_size, 'L') + "\n" +
                              random_lines(3000, true, 8) + std::string(3 * chunk_size, 'M') +
                              "\n" + random_lines(3000, true, 9);
  const std::string path = dir.write("grown", content);
  const PolicyFor never(InPlacePolicy::never);
  auto sizes = [&](bool reuse) {
    ChunkReader reader({path}, chunk_size, 64u << 20);
    std::vector<size_t> result;
    Chunk kept;
    Status status;
    for (;;) {
      Chunk fresh;
      Chunk& chunk = reuse ? kept : fresh;
      if (!reader.next(chunk, status)) break;
      result.push_back(chunk.size);
    }
    CHECK(status.ok());
    return result;
  };
  const std::vector<size_t> fresh = sizes(false);
  const std::vector<size_t> reused = sizes(true);
  REQUIRE(fresh.size() > 10);
  CHECK(fresh[0] > 3 * chunk_size);  // the long line
  CHECK(reused == fresh);
}

TEST_CASE("a line longer than --max-line-size is an error naming the file") {
  const TempDir dir;
  const std::string before = "first line\nsecond line\n";
  const std::string content = before + std::string(10000, 'z') + "\nafter\n";
  const std::string path = dir.write("too-long.ndjson", content);
  for (const size_t chunk_size : {size_t{16}, size_t{64}, size_t{1000}, size_t{4096}}) {
    CAPTURE(chunk_size);
    const Reading reading = read_all({path}, chunk_size, 4096);
    INFO("status: ", reading.status.message());
    REQUIRE_FALSE(reading.status.ok());
    CHECK(reading.status.where() == path);
    CHECK(reading.status.message().find(path) != std::string::npos);
    CHECK(reading.status.reason().find("--max-line-size") != std::string::npos);
    CHECK(reading.status.reason().find("4,096") != std::string::npos);
    CHECK(reading.status.exit_code() != kExitOk);
    // What was delivered before the error is whole lines from the start of the input, and
    // never the long line.
    std::string delivered;
    for (const auto& chunk : reading.chunks) delivered += chunk.text;
    CHECK(content.compare(0, delivered.size(), delivered) == 0);
    CHECK(delivered.size() <= before.size());
    if (!delivered.empty()) CHECK(delivered.back() == '\n');
  }
}

TEST_CASE("a long unterminated last line over --max-line-size is an error too") {
  const TempDir dir;
  const std::string path = dir.write("tail", "ok\n" + std::string(9000, 't'));
  const Reading reading = read_all({path}, 1024, 4096);
  REQUIRE_FALSE(reading.status.ok());
  CHECK(reading.status.where() == path);
}

TEST_CASE("lines up to --max-line-size are accepted") {
  const TempDir dir;
  const size_t max_line_size = 4096;
  // The longest accepted line, with its '\n', is max_line_size bytes.
  const std::string content =
      "a\n" + std::string(max_line_size - 1, 'm') + "\n" + std::string(max_line_size - 1, 'n');
  const std::string path = dir.write("at-limit", content);
  for (const size_t chunk_size : {size_t{1}, size_t{7}, size_t{1000}, size_t{4096}}) {
    CAPTURE(chunk_size);
    check_reading(read_all({path}, chunk_size, max_line_size), {content});
  }
}

TEST_CASE("a line longer than --max-line-size is refused wherever it starts") {
  // The limit is only checked when a chunk that holds no newline is full, and a chunk that
  // starts with carried-over text is sized carry + chunk_size / 2, which may exceed the limit:
  // then a line longer than --max-line-size is accepted or refused depending on where the
  // previous chunk happened to end.
  const TempDir dir;
  const size_t max_line_size = 4096;
  const std::string long_line(max_line_size + 500, 'q');
  for (size_t lead = 1; lead <= 4096; lead += 255) {
    const std::string content = std::string(lead - 1, 's') + "\n" + long_line + "\n";
    const std::string path = dir.write(numbered("lead-", lead), content);
    CAPTURE(lead);
    const Reading reading = read_all({path}, max_line_size, max_line_size);
    CHECK_FALSE(reading.status.ok());
  }
}

TEST_CASE("a zstd input is decoded, found by its magic bytes and not by its name") {
  const TempDir dir;
  const std::string content = random_lines(4000, true, 7);
  const std::string compressed = zstd_compress(content);
  REQUIRE(compressed.size() < content.size());
  const std::string misnamed = dir.write("events.ndjson", compressed);
  const std::string named = dir.write("events.ndjson.zst", compressed);
  // And a plain file called .zst is read as it is.
  const std::string plain_zst = dir.write("plain.zst", "not compressed\n");
  for (const size_t chunk_size : {size_t{1}, size_t{64}, size_t{4096}, size_t{1} << 20}) {
    CAPTURE(chunk_size);
    check_reading(read_all({misnamed}, chunk_size), {content});
    check_reading(read_all({named, plain_zst}, chunk_size), {content, "not compressed\n"});
  }
}

TEST_CASE("a zstd input without a final newline, and with CRLF lines, is reproduced exactly") {
  const TempDir dir;
  const std::vector<std::string> contents = {"a\r\nb\r\nc", random_lines(100, false, 8), "\n",
                                             std::string(100000, 'w') + "\nend"};
  std::vector<std::string> paths;
  for (size_t i = 0; i < contents.size(); ++i) {
    paths.push_back(dir.write(numbered("z", i), zstd_compress(contents[i])));
  }
  for (const size_t chunk_size : {size_t{1}, size_t{3}, size_t{64}, size_t{65536}}) {
    CAPTURE(chunk_size);
    check_reading(read_all(paths, chunk_size), contents);
  }
}

TEST_CASE("concatenated zstd frames are one stream, as with zstd -dc") {
  const TempDir dir;
  const std::string first = random_lines(1000, true, 9);
  const std::string second = random_lines(1000, false, 10);
  // The first frame ends mid-line: the line continues in the second frame.
  const std::string cut_first = first + "half of a li";
  const std::string cut_second = "ne\n" + second;
  const std::string frames = zstd_compress(cut_first) + zstd_compress(cut_second, 19);
  const std::string path = dir.write("two-frames", frames);
  const std::string empty_frames =
      dir.write("empty-frames", zstd_compress("") + zstd_compress("x\n") + zstd_compress(""));
  for (const size_t chunk_size : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    CAPTURE(chunk_size);
    check_reading(read_all({path}, chunk_size), {cut_first + cut_second});
    check_reading(read_all({empty_frames}, chunk_size), {"x\n"});
  }
}

TEST_CASE("a zstd input holding only an empty frame gives no chunk and no error") {
  const TempDir dir;
  const std::string path = dir.write("empty.zst", zstd_compress(""));
  const Reading reading = read_all({path}, 4096);
  CHECK(reading.status.ok());
  CHECK(reading.chunks.empty());
}

TEST_CASE("a skippable frame between zstd frames is skipped") {
  const TempDir dir;
  const std::string path = dir.write(
      "skippable", zstd_compress("one\n") + skippable_frame("metadata") + zstd_compress("two\n"));
  check_reading(read_all({path}, 64), {"one\ntwo\n"});
}

TEST_CASE("a zstd input that starts with a skippable frame is decoded") {
  // pzstd and the seekable format write a skippable frame first; its magic number is
  // 0x184D2A5?, not the frame magic the sniffing looks for, so the compressed bytes are read
  // as plain text. `zstd -dc` decodes such a file.
  const TempDir dir;
  const std::string path =
      dir.write("pzstd-like", skippable_frame("size hint") + zstd_compress("one\ntwo\n"));
  check_reading(read_all({path}, 64), {"one\ntwo\n"});
}

TEST_CASE("a truncated zstd input is an error, after only bytes of the original input") {
  const TempDir dir;
  const std::string content = random_lines(3000, true, 11);
  const std::string compressed = zstd_compress(content);
  std::vector<size_t> lengths = {4, 5, 6, 9, 12, 20, compressed.size() - 1, compressed.size() - 4};
  for (size_t length = 100; length < compressed.size(); length += compressed.size() / 37) {
    lengths.push_back(length);
  }
  for (const size_t length : lengths) {
    const std::string path = dir.write(numbered("cut-", length), compressed.substr(0, length));
    for (const size_t chunk_size : {size_t{1}, size_t{64}, size_t{4096}, size_t{1} << 20}) {
      CAPTURE(length);
      CAPTURE(chunk_size);
      const Reading reading = read_all({path}, chunk_size);
      INFO("status: ", reading.status.message());
      REQUIRE_FALSE(reading.status.ok());
      CHECK(reading.status.reason().find("truncated") != std::string::npos);
      CHECK(reading.status.where() == path);
      std::string delivered;
      for (const auto& chunk : reading.chunks) {
        CHECK(chunk.input_offset == delivered.size());
        delivered += chunk.text;
      }
      // Only bytes of the original input, from its start, in whole lines.
      CHECK(delivered.size() < content.size());
      CHECK(content.compare(0, delivered.size(), delivered) == 0);
      if (!delivered.empty()) CHECK(delivered.back() == '\n');
    }
  }
}

TEST_CASE("the lines decoded before a zstd input turns out truncated are delivered") {
  // ChunkReader::next promises "lines before the failure were all delivered". For a zstd input
  // it keeps reading until the chunk is full; when the read that hits the truncation fails, the
  // whole lines already in that chunk are dropped with it.
  const TempDir dir;
  const std::string content = random_lines(3000, true, 12);
  const std::string compressed = zstd_compress(content);
  for (size_t length = compressed.size() / 3; length < compressed.size();
       length += compressed.size() / 5) {
    const std::string truncated = compressed.substr(0, length);
    const std::string decodable = zstd_decodable_prefix(truncated);
    const std::string whole_lines = decodable.substr(0, decodable.rfind('\n') + 1);
    REQUIRE_FALSE(whole_lines.empty());
    const std::string path = dir.write(numbered("cut-", length), truncated);
    for (const size_t chunk_size : {size_t{64}, size_t{1} << 20}) {
      CAPTURE(length);
      CAPTURE(chunk_size);
      const Reading reading = read_all({path}, chunk_size);
      REQUIRE_FALSE(reading.status.ok());
      std::string delivered;
      for (const auto& chunk : reading.chunks) delivered += chunk.text;
      CHECK(delivered.size() == whole_lines.size());
    }
  }
}

TEST_CASE("a file holding only the zstd magic number is a truncated zstd input") {
  const TempDir dir;
  const std::string path = dir.write("magic-only", "\x28\xb5\x2f\xfd");
  const Reading reading = read_all({path}, 4096);
  REQUIRE_FALSE(reading.status.ok());
  CHECK(reading.status.reason().find("truncated") != std::string::npos);
  CHECK(reading.chunks.empty());
}

TEST_CASE("a corrupt zstd input is an error naming the file") {
  const TempDir dir;
  std::string compressed = zstd_compress(random_lines(500, true, 13));
  REQUIRE(compressed.size() > 40);
  for (size_t i = 12; i < compressed.size(); i += 7) compressed[i] = static_cast<char>(~compressed[i]);
  const std::string path = dir.write("corrupt", compressed);
  const Reading reading = read_all({path}, 4096);
  INFO("status: ", reading.status.message());
  REQUIRE_FALSE(reading.status.ok());
  CHECK(reading.status.where() == path);
}

TEST_CASE("short files that are not zstd are read as plain text") {
  // Fewer than four bytes, or a partial magic number, cannot be zstd.
  const TempDir dir;
  for (const std::string_view content :
       {std::string_view("\x28"), std::string_view("\x28\xb5"), std::string_view("\x28\xb5\x2f"),
        std::string_view("\x28\xb5\x2f\xfe\n"), std::string_view("ab\n")}) {
    const std::string path = dir.write("short", content);
    check_reading(read_all({path}, 2), {std::string(content)});
  }
}

TEST_CASE("a missing input is an error naming it, after the inputs before it") {
  const TempDir dir;
  const std::string good = dir.write("good", "one\ntwo\n");
  const std::string missing = dir.path() + "/does-not-exist.ndjson";
  const Reading reading = read_all({good, missing, good}, 4096);
  INFO("status: ", reading.status.message());
  REQUIRE_FALSE(reading.status.ok());
  CHECK(reading.status.where() == missing);
  CHECK(reading.status.message().find("does-not-exist.ndjson") != std::string::npos);
  CHECK(reading.status.exit_code() == kExitFailure);
  std::string delivered;
  for (const auto& chunk : reading.chunks) {
    CHECK(chunk.input == 0);
    delivered += chunk.text;
  }
  CHECK(delivered == "one\ntwo\n");
}

// A reader of `path` in chunks of 4 KiB that puts its warnings in `warnings`.
ChunkReader reader_noting(const std::string& path, std::vector<std::string>& warnings) {
  return ChunkReader({path}, 4096, 64u << 20,
                     [&warnings](const std::string& warning) { warnings.push_back(warning); });
}

// Reads a 10,000-line input whose file is cut to `cut` bytes after its first chunk was read:
// what was delivered, and the warnings.
struct Truncated {
  std::string text;       // the input before the cut
  std::string path;
  std::string delivered;  // every chunk's bytes, in order
  std::vector<std::string> warnings;
};
Truncated read_truncated_to(const TempDir& dir, size_t cut) {
  Truncated result;
  for (int i = 0; i < 10000; ++i) result.text += "{\"n\":" + std::to_string(i) + "}\n";
  result.path = dir.write("shrinking.ndjson", result.text);
  ChunkReader reader = reader_noting(result.path, result.warnings);
  Chunk chunk;
  Status status;
  REQUIRE(reader.next(chunk, status));
  result.delivered.assign(chunk.text(), chunk.size);
  std::filesystem::resize_file(result.path, cut);
  while (reader.next(chunk, status)) result.delivered.append(chunk.text(), chunk.size);
  CHECK(status.ok());
  return result;
}

std::string truncation_warning(const Truncated& read, size_t cut, size_t had_read) {
  return read.path + ": truncated from " + std::to_string(read.text.size()) + " to " +
         std::to_string(cut) + " bytes while it was read, after its first " +
         std::to_string(had_read) + " bytes were read: their lines were used, and the last of "
         "them may be cut short";
}

TEST_CASE("an input truncated while it is read is read to its new end, with a warning") {
  const TempDir dir;
  const size_t cut = 50003;  // about half way, inside a line
  const Truncated read = read_truncated_to(dir, cut);
  CHECK(read.delivered == read.text.substr(0, cut));
  REQUIRE(read.warnings.size() == 1);
  CHECK(read.warnings[0] == truncation_warning(read, cut, cut));
}

TEST_CASE("an input truncated below what was read already: the warning says how much was read") {
  const TempDir dir;
  const Truncated read = read_truncated_to(dir, 100);
  REQUIRE(read.delivered.size() > 100);
  CHECK(read.delivered == read.text.substr(0, read.delivered.size()));
  REQUIRE(read.warnings.size() == 1);
  CHECK(read.warnings[0] == truncation_warning(read, 100, read.delivered.size()));
}

TEST_CASE("an input that grows while it is read gives no warning") {
  const TempDir dir;
  const std::string path = dir.write("growing.ndjson", std::string(8192, 'a') + "\n");
  std::vector<std::string> warnings;
  ChunkReader reader = reader_noting(path, warnings);
  Chunk chunk;
  Status status;
  REQUIRE(reader.next(chunk, status));
  std::ofstream(path, std::ios::app) << "more\n";
  while (reader.next(chunk, status)) {
  }
  CHECK(status.ok());
  CHECK(warnings.empty());
}

TEST_CASE("a directory given as an input is an error naming it") {
  const TempDir dir;
  const Reading reading = read_all({dir.path()}, 4096);
  INFO("status: ", reading.status.message());
  REQUIRE_FALSE(reading.status.ok());
  CHECK(reading.status.where() == dir.path());
}

TEST_CASE("open_input sniffs zstd and names its source") {
  const TempDir dir;
  const std::string plain = dir.write("plain", "hello\n");
  const std::string packed = dir.write("packed", zstd_compress("hello\n"));
  std::unique_ptr<InputSource> source;
  REQUIRE(open_input(plain, source).ok());
  CHECK_FALSE(source->compressed());
  CHECK(source->name() == plain);
  REQUIRE(open_input(packed, source).ok());
  CHECK(source->compressed());
  CHECK(source->name() == packed);
  // Reading the whole source in tiny reads gives the decoded text; 0 only at the end.
  std::string text;
  char buffer[3];
  for (;;) {
    size_t got = 0;
    REQUIRE(source->read(buffer, sizeof buffer, got).ok());
    if (got == 0) break;
    CHECK(got <= sizeof buffer);
    text.append(buffer, got);
  }
  CHECK(text == "hello\n");
  const Status missing = open_input(dir.path() + "/nope", source);
  CHECK_FALSE(missing.ok());
  CHECK(missing.where() == dir.path() + "/nope");
}

}  // namespace keyshard
