// Fuzz target: the reader stage on one input file, plain or zstd (told by its magic bytes), cut
// into chunks of whole lines. The first byte chooses the chunk size, --max-line-size and whether
// the file is still open for writing (read with read()) or not (read in place); the rest is the
// file. The chunks, one after another, must give back the file's bytes exactly
// (for zstd, what libzstd decompresses from it), every chunk must end with a newline but the
// last line of the input, and a line longer than --max-line-size must stop the reader after
// the whole lines before it. A zstd file that libzstd cannot decompress to its end must be an
// error, never a short input. One that starts as another compressor's output, an archive or
// UTF-16 does is refused before any line.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "input/chunk_reader.h"
#include "input/in_place_probe.h"
#include "input/line_index.h"

namespace {

using namespace keyshard;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

bool is_zstd(std::string_view file) {
  if (file.size() < 4) return false;
  const auto* magic = reinterpret_cast<const unsigned char*>(file.data());
  const bool skippable =
      (magic[0] & 0xf0) == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18;
  return skippable || std::memcmp(magic, "\x28\xb5\x2f\xfd", 4) == 0;
}

// Whether the file starts as gzip, xz, lz4, bzip2 output, a zip archive or UTF-16 text does.
bool starts_as_no_text(std::string_view file) {
  if (file.size() < 4) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(file.data());
  return (b[0] == 0x1f && b[1] == 0x8b && b[2] == 0x08) || file.starts_with("\xFD" "7zX") ||
         file.starts_with("\x04\x22\x4D\x18") ||
         (file.starts_with("BZh") && b[3] >= '1' && b[3] <= '9') ||
         file.starts_with("PK\x03\x04") || (b[0] == 0xff && b[1] == 0xfe) ||
         (b[0] == 0xfe && b[1] == 0xff);
}

// What `zstd -dc` makes of the file: false when it cannot decompress it to its end.
bool decompress(std::string_view file, std::string& out) {
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_inBuffer input{file.data(), file.size(), 0};
  char buffer[4096];
  size_t hint = 1;
  bool ok = true;
  while (ok) {
    ZSTD_outBuffer output{buffer, sizeof buffer, 0};
    hint = ZSTD_decompressStream(stream, &output, &input);
    if (ZSTD_isError(hint)) {
      ok = false;
      break;
    }
    out.append(buffer, output.pos);
    if (input.pos == input.size && output.pos < output.size) break;
    ok = out.size() <= (64u << 20);  // (more is beyond what a fuzz input should make)
  }
  ZSTD_freeDStream(stream);
  return ok && hint == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  set_in_place_policy(InPlacePolicy::always);  // (bit 16 below chooses, not the machine)
  static constexpr size_t kChunkSizes[] = {64, 1000, 8192, 65536};
  static constexpr size_t kMaxLineSizes[] = {100, 5000, 1u << 20, 60};
  const size_t chunk_size = kChunkSizes[data[0] & 3];
  const size_t max_line_size = kMaxLineSizes[(data[0] >> 2) & 3];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::string expected;
  bool expected_whole = true;
  if (is_zstd(file)) {
    expected_whole = decompress(file, expected);
    if (!expected_whole && expected.size() > (64u << 20)) return 0;
  } else {
    expected.assign(file);
  }

  int fd = memfd_create("keyshard-fuzz", 0);
  if (fd < 0) fail("memfd_create failed");
  if (!file.empty() && write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) {
    fail("write to the memfd failed");
  }
  if ((data[0] & 16) != 0) {
    // Opened for reading only, the file is no longer open for writing: it is read in place.
    const int read_only = open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY);
    if (read_only < 0) fail("cannot open the memfd for reading");
    close(fd);
    fd = read_only;
  }
  ChunkReader reader({"/proc/self/fd/" + std::to_string(fd)}, chunk_size, max_line_size);
  Chunk chunk;
  Status status;
  std::string delivered;
  std::vector<uint32_t> starts;
  bool last_unterminated = false;
  while (reader.next(chunk, status)) {
    if (last_unterminated) fail("a chunk came after a line without its newline");
    const std::string_view text(chunk.text(), chunk.size);
    // The promised bytes after the text can be read (ASan sees a short buffer), and the line
    // starts are those of the text delivered.
    if (chunk.readable_end() < chunk.size + kLinePadding) fail("less padding than promised");
    unsigned padding_sum = 0;
    for (size_t i = chunk.size; i < chunk.readable_end(); ++i) {
      padding_sum += static_cast<unsigned char>(chunk.text()[i]);
    }
    (void)padding_sum;
    index_lines(text.data(), text.size(), starts);
    if (starts != chunk.line_starts) fail("the line starts are not those of the text");
    if (!text.empty() && text.back() != '\n') last_unterminated = true;
    if (chunk.final_fragment != last_unterminated) fail("final_fragment is wrong");
    delivered.append(text);
  }
  close(fd);

  // (Of a zstd input that cannot be decompressed, libzstd hands out more or less before the
  // error depending on the room it is given: the reader may have had more, or less.)
  const size_t common = expected_whole ? delivered.size()
                                       : std::min(delivered.size(), expected.size());
  if (delivered.size() > expected.size() && expected_whole) {
    fail("the chunks hold more than the input");
  }
  if (delivered.compare(0, common, expected, 0, common) != 0) {
    fail("the chunks are not the input's bytes");
  }
  if (status) {
    if (!expected_whole) fail("a zstd input that cannot be decompressed read as a whole one");
    if (delivered.size() != expected.size()) fail("the chunks end before the input");
    return 0;
  }
  // An error: every line delivered is whole, and if it is a line too long, the next line is.
  if (!delivered.empty() && delivered.back() != '\n') fail("a cut line before an error");
  if (status.cause() == Cause::kNotText) {
    if (!delivered.empty()) fail("an input refused as no text after some of its lines");
    if (!starts_as_no_text(file)) fail("an input refused as no text that starts as text can");
    return 0;
  }
  if (!expected_whole) return 0;
  if (status.cause() != Cause::kLineTooLong) fail("an error on an input that reads to its end");
  const std::string_view rest = std::string_view(expected).substr(delivered.size());
  const size_t newline = rest.find('\n');
  if ((newline == std::string_view::npos ? rest.size() : newline) <= max_line_size) {
    fail("a line within the limit called too long");
  }
  return 0;
}
