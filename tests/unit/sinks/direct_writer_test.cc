// Direct writes (--commit sync): whole blocks of a partition file go to the disk from
// DirectWriter's threads, past the page cache, while the owner goes on. Every byte must land in its
// place whatever the mix of direct and ordinary writes, settle() must leave the file holding
// everything written, and a write that fails must be reported, naming the file. The direct path is
// taken where the file system of /tmp says it takes direct writes (ext4, xfs); elsewhere
// (tmpfs) the same checks hold for ordinary writes.
#include "sinks/direct_writer.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sinks/file_sink.h"
#include "unit/sinks/file_blocks.h"
#include "unit/temp_dir.h"
#include "util/files.h"

namespace keyshard {
namespace {

bool dir_takes_direct_writes(const TempDir& dir) {
  const std::string path = dir.write("probe", "");
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() && takes_direct_writes(fd.get());
}

// "the file system of DIR takes direct writes[: WHAT]", for the test's log.
std::string about_direct_writes(const TempDir& dir, std::string_view takes, std::string_view what) {
  std::string note =
      "the file system of " + dir.path() + " " + std::string(takes) + " direct writes";
  if (!what.empty()) note.append(": ").append(what);
  return note;
}

// How many of the file's pages are in the page cache.
size_t cached_pages(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  const off_t size = ::lseek(fd.get(), 0, SEEK_END);
  REQUIRE(size > 0);
  void* mapping = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd.get(), 0);
  REQUIRE(mapping != MAP_FAILED);
  const size_t pages = (static_cast<size_t>(size) + 4095) / 4096;
  std::vector<unsigned char> resident(pages);
  REQUIRE(::mincore(mapping, static_cast<size_t>(size), resident.data()) == 0);
  ::munmap(mapping, static_cast<size_t>(size));
  size_t cached = 0;
  for (const unsigned char page : resident) cached += page & 1;
  return cached;
}

// The sizes of the blocks each file is given: whole aligned blocks (written direct, one in pieces),
// blocks too small or out of line (written as usual, after the direct ones), and back.
const std::vector<size_t> kBlockSizes = {
    1 << 20, 1 << 20,                   // direct
    5000,                               // out of line
    (1 << 20) - 5000,                   // to the next page as usual, then direct to 3 MiB
    3 << 19,                            // 1.5 MiB, direct
    256 << 10,                          // the smallest direct block
    4096,                               // too small for direct
    1 << 20,                            // direct
    777, 1 << 20, (5 << 20) / 2, 100,  // out of line from here on
};

}  // namespace

TEST_CASE("files written direct from several threads, mixed with ordinary writes, hold every "
          "byte in order") {
  const TempDir dir;
  const bool direct = dir_takes_direct_writes(dir);
  MESSAGE(about_direct_writes(dir, direct ? "takes" : "does not take", ""));
  constexpr int kThreads = 3, kFilesPerThread = 4;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<Sink>> sinks(kFilesPerThread);
      std::vector<std::string> written(kFilesPerThread);
      for (int f = 0; f < kFilesPerThread; ++f) {
        const std::string path = dir.path() + "/part-" + std::to_string(t * kFilesPerThread + f);
        if (!open_file_sink(path, sinks[f], true, true, true)) failures[t] += "open; ";
      }
      for (size_t b = 0; b < kBlockSizes.size() && failures[t].empty(); ++b) {
        for (int f = 0; f < kFilesPerThread; ++f) {
          const int file = t * kFilesPerThread + f;
          const std::string bytes = block_bytes(file, static_cast<int>(b), kBlockSizes[b]);
          if (!sinks[f]->write(bytes)) failures[t] += "write; ";
          written[f] += bytes;
          if (sinks[f]->state().size != written[f].size()) failures[t] += "size; ";
          if (b == 4 || b == 8) {
            // As before a checkpoint: once settled, the file holds all that was written.
            if (!sinks[f]->settle()) failures[t] += "settle; ";
            const std::string path = dir.path() + "/part-" + std::to_string(file);
            if (read_all(path) != written[f]) failures[t] += "not in the file once settled; ";
          }
          if (b == 6 && !sinks[f]->sync()) failures[t] += "sync; ";
        }
      }
      // Half the files are finished (closed), the other half only destroyed.
      for (int f = 0; f < kFilesPerThread; f += 2) {
        if (!sinks[f]->finish()) failures[t] += "finish; ";
      }
      sinks.clear();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& failure : failures) CHECK(failure.empty());
  for (int file = 0; file < kThreads * kFilesPerThread; ++file) {
    std::string expected;
    for (size_t b = 0; b < kBlockSizes.size(); ++b) {
      expected += block_bytes(file, static_cast<int>(b), kBlockSizes[b]);
    }
    CAPTURE(file);
    CHECK(read_all(dir.path() + "/part-" + std::to_string(file)) == expected);
  }
}

TEST_CASE("blocks written direct are not left in the page cache; ordinary writes are") {
  const TempDir dir;
  const bool takes_direct = dir_takes_direct_writes(dir);
  if (!takes_direct) {
    MESSAGE(
        about_direct_writes(dir, "does not take", "both files are written through the page cache"));
  }
  const std::string block = block_bytes(0, 0, 4 << 20);
  for (const bool direct : {true, false}) {
    const std::string path = dir.path() + (direct ? "/direct" : "/ordinary");
    std::unique_ptr<Sink> sink;
    REQUIRE(open_file_sink(path, sink, true, true, direct));
    REQUIRE(sink->write(block));
    REQUIRE(sink->finish());
    CAPTURE(direct);
    // (Counted before anything reads the file, which would bring it into the cache.)
    CHECK(cached_pages(path) == (direct && takes_direct ? 0 : block.size() / 4096));
    CHECK(read_all(path) == block);
  }
}

TEST_CASE("a block that starts part way through a page goes direct from the next page on") {
  const TempDir dir;
  const bool takes_direct = dir_takes_direct_writes(dir);
  if (!takes_direct) {
    MESSAGE(about_direct_writes(dir, "does not take", "the file is written through the page cache"));
  }
  // As after a checkpoint: the file ends part way through its second page, and the next block
  // ends on a page, 1 MiB on. Its first 3,192 bytes fill that page through the page cache.
  const std::string first = block_bytes(0, 0, 5000);
  const std::string second = block_bytes(0, 1, (1 << 20) - 5000 + 8192);
  const std::string path = dir.path() + "/part";
  std::unique_ptr<Sink> sink;
  REQUIRE(open_file_sink(path, sink, true, true, true));
  REQUIRE(sink->write(first));
  REQUIRE(sink->write(second));
  REQUIRE(sink->finish());
  CHECK(cached_pages(path) == (takes_direct ? 2 : (1 << 20) / 4096 + 2));
  CHECK(read_all(path) == first + second);
}

TEST_CASE("a direct write that fails is reported, naming the file") {
  const TempDir dir;
  if (!dir_takes_direct_writes(dir)) {
    MESSAGE(about_direct_writes(dir, "does not take", "the failure is that of an ordinary write"));
  }
  // A file-size limit of 2 MiB, and SIGXFSZ ignored, as keyshard does: the write past it fails with
  // EFBIG.
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = 2 << 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  const std::string path = dir.path() + "/part-0";
  std::unique_ptr<Sink> sink;
  REQUIRE(open_file_sink(path, sink, true, true, true));
  Status status = sink->write(block_bytes(0, 0, 1 << 20));
  for (int b = 1; b < 4 && status; ++b) status = sink->write(block_bytes(0, b, 1 << 20));
  if (status) status = sink->settle();
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(status);
  CHECK(status.message().find(path) != std::string::npos);
  CHECK(status.message().find("write failed: File too large") != std::string::npos);
  // Reported again by whatever comes next, not lost.
  CHECK_FALSE(sink->finish());
}

TEST_CASE("a write the file system refuses as direct is made as an ordinary one") {
  const TempDir dir;
  const std::string path = dir.write("part-0", "");
  if (!dir_takes_direct_writes(dir)) {
    MESSAGE(about_direct_writes(dir, "does not take", "nothing to refuse"));
    return;
  }
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC));
  REQUIRE(fd.valid());
  DirectWriter* writer = DirectWriter::instance();
  REQUIRE(writer != nullptr);
  auto file = std::make_shared<DirectWriter::File>(fd.get());
  // Out of line for direct I/O (offset 3, 10 bytes): EINVAL, then written as usual.
  writer->submit(file, 3, "0123456789");
  CHECK(writer->settle(*file) == 0);
  CHECK(read_all(path) == std::string(3, '\0') + "0123456789");
  CHECK((::fcntl(fd.get(), F_GETFL) & O_DIRECT) == 0);
}

TEST_CASE("a block lent to a file sink is written from where it stands, once settled") {
  const TempDir dir;
  const bool direct = dir_takes_direct_writes(dir);
  const std::string path = dir.path() + "/part-0";
  std::unique_ptr<Sink> sink;
  REQUIRE(open_file_sink(path, sink, true, true, true));
  constexpr size_t kBlock = 1 << 20;
  std::unique_ptr<char, void (*)(void*)> memory(
      static_cast<char*>(std::aligned_alloc(4096, kBlock + 4096)), std::free);
  REQUIRE(memory != nullptr);
  const std::string first = block_bytes(0, 0, kBlock);
  std::memcpy(memory.get(), first.data(), kBlock);
  bool lent = false;
  REQUIRE(sink->write_lent({memory.get(), kBlock}, lent));
  CHECK(lent == direct);
  REQUIRE(sink->settle());
  // Once settled, the memory is the caller's again: what it holds now is not written.
  std::memset(memory.get(), 'x', kBlock);
  // Memory that is not on a page is copied, not lent.
  const std::string second = block_bytes(0, 1, kBlock);
  std::memcpy(memory.get() + 1, second.data(), kBlock);
  REQUIRE(sink->write_lent({memory.get() + 1, kBlock}, lent));
  CHECK_FALSE(lent);
  std::memset(memory.get() + 1, 'y', kBlock);
  REQUIRE(sink->finish());
  CHECK(read_all(path) == first + second);
}

}  // namespace keyshard
