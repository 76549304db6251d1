// File sinks with write-behind (--commit sync): the writeback of each MiB is started by
// WriteBehind's thread while the owners go on writing. Whatever that thread does, or has still
// to do, every byte must land in its file, a file must be closable at any time, and a resumed
// file must carry on from its recorded state.
#include "sinks/file_sink.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/content_hash.h"
#include "sinks/write_behind.h"
#include "unit/sinks/file_blocks.h"
#include "unit/temp_dir.h"

namespace keyshard {

TEST_CASE("files written with write-behind from several threads hold every byte") {
  const TempDir dir;
  constexpr int kThreads = 4, kFilesPerThread = 8, kBlocks = 40;
  constexpr size_t kBlock = 96 * 1024;  // 40 blocks: 3.75 MiB a file, three write-behinds
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<Sink>> sinks(kFilesPerThread);
      for (int f = 0; f < kFilesPerThread; ++f) {
        const int file = t * kFilesPerThread + f;
        const std::string path = dir.path() + "/part-" + std::to_string(file);
        if (!open_file_sink(path, sinks[f], true, true)) failures[t] += "open " + path + "; ";
      }
      for (int b = 0; b < kBlocks; ++b) {
        for (int f = 0; f < kFilesPerThread && failures[t].empty(); ++f) {
          const int file = t * kFilesPerThread + f;
          if (!sinks[f]->write(block_bytes(file, b, kBlock))) failures[t] += "write; ";
          if (b == kBlocks / 2 && !sinks[f]->sync()) failures[t] += "sync; ";
        }
      }
      // Half the files are finished (closed), the other half only destroyed.
      for (int f = 0; f < kFilesPerThread; f += 2) {
        if (sinks[f] && !sinks[f]->finish()) failures[t] += "finish; ";
      }
      sinks.clear();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& failure : failures) CHECK(failure.empty());
  for (int file = 0; file < kThreads * kFilesPerThread; ++file) {
    std::string expected;
    for (int b = 0; b < kBlocks; ++b) expected += block_bytes(file, b, kBlock);
    const std::string held = read_all(dir.path() + "/part-" + std::to_string(file));
    CAPTURE(file);
    CHECK(held.size() == expected.size());
    CHECK(held == expected);
  }
}

TEST_CASE("a reopened file with write-behind goes on from its recorded state") {
  const TempDir dir;
  const std::string path = dir.path() + "/part-0";
  std::unique_ptr<Sink> sink;
  REQUIRE(open_file_sink(path, sink, true, true));
  const std::string first = block_bytes(0, 0, 3 << 20);
  REQUIRE(sink->write(first));
  const OutputState recorded = sink->state();
  REQUIRE(sink->write("not committed\n"));  // written after the checkpoint: cut on reopening
  REQUIRE(sink->finish());
  sink.reset();
  REQUIRE(reopen_file_sink(path, recorded, false, sink, true));
  const std::string second = block_bytes(0, 1, 3 << 20);
  REQUIRE(sink->write(second));
  REQUIRE(sink->sync());
  REQUIRE(sink->finish());
  CHECK(read_all(path) == first + second);
}

TEST_CASE("a reopened file keeps the bytes after its checkpoint until it is cut back") {
  const TempDir dir;
  const std::string path = dir.path() + "/part-0";
  const std::string committed = block_bytes(0, 0, 100'000);
  const std::string later = "written after the checkpoint\n";
  OutputState recorded;
  {
    std::unique_ptr<Sink> sink;
    REQUIRE(open_file_sink(path, sink, true));
    REQUIRE(sink->write(committed));
    recorded = sink->state();
    REQUIRE(sink->write(later));
    REQUIRE(sink->finish());
  }
  SUBCASE("cut_back() cuts them, once, and writes go on from the checkpoint") {
    std::unique_ptr<Sink> sink;
    REQUIRE(reopen_file_sink(path, recorded, false, sink));
    CHECK(read_all(path) == committed + later);  // checked, not yet cut
    REQUIRE(sink->cut_back());
    CHECK(read_all(path) == committed);
    REQUIRE(sink->cut_back());  // (nothing more to do)
    REQUIRE(sink->write("next\n"));
    REQUIRE(sink->finish());
    CHECK(read_all(path) == committed + "next\n");
  }
  SUBCASE("without cut_back(), the first write cuts them") {
    std::unique_ptr<Sink> sink;
    REQUIRE(reopen_file_sink(path, recorded, false, sink));
    REQUIRE(sink->write("next\n"));
    REQUIRE(sink->finish());
    CHECK(read_all(path) == committed + "next\n");
  }
  SUBCASE("without a write, finishing cuts them") {
    std::unique_ptr<Sink> sink;
    REQUIRE(reopen_file_sink(path, recorded, false, sink));
    REQUIRE(sink->finish());
    CHECK(read_all(path) == committed);
  }
}

TEST_CASE("bytes seen ahead are hashed once, whatever blocks they are then written in") {
  const TempDir dir;
  // Seen ahead in three pieces; written in blocks that end before, at and past what was seen
  // (the last ones not seen at all), through the page cache or direct.
  const std::string bytes = block_bytes(0, 0, 3 << 20);
  const std::vector<size_t> seen_to = {100'000, 1 << 20, (2 << 20) + 5000};
  const std::vector<size_t> written_to = {4096, 100'000, 700'000, (1 << 20) + 4096,
                                          (2 << 20) + 5000, (2 << 20) + 9000, 3 << 20};
  ContentHash whole;
  whole.update(bytes);
  for (const bool direct : {false, true}) {
    CAPTURE(direct);
    const std::string path = dir.path() + (direct ? "/direct" : "/cached");
    std::unique_ptr<Sink> sink;
    REQUIRE(open_file_sink(path, sink, true, true, direct));
    size_t seen = 0, written = 0;
    for (size_t i = 0; i < written_to.size(); ++i) {
      if (i < seen_to.size()) {
        sink->see_ahead(std::string_view(bytes).substr(seen, seen_to[i] - seen));
        seen = seen_to[i];
      }
      REQUIRE(sink->write(std::string_view(bytes).substr(written, written_to[i] - written)));
      written = written_to[i];
    }
    REQUIRE(sink->settle());
    const OutputState state = sink->state();
    CHECK(state.size == bytes.size());
    CHECK(state.chain == whole.chain());
    CHECK(state.digest == whole.digest());
    REQUIRE(sink->finish());
    CHECK(read_all(path) == bytes);
  }
  // A sink that tracks nothing takes no note of them.
  std::unique_ptr<Sink> untracked;
  REQUIRE(open_file_sink(dir.path() + "/untracked", untracked));
  untracked->see_ahead(bytes);
  CHECK(untracked->state().size == 0);
  REQUIRE(untracked->finish());
}

TEST_CASE("a file sink knows its file's size only for a regular file it writes in order") {
  const TempDir dir;
  const std::string path = dir.path() + "/part-0";
  std::unique_ptr<Sink> sink;
  REQUIRE(open_file_sink(path, sink, true, false));
  CHECK(sink->file_size() == uint64_t{0});
  REQUIRE(sink->write("{\"a\":1}\n{\"a\""));  // a block may end part way through a line
  CHECK(sink->file_size() == uint64_t{12});
  REQUIRE(sink->write(":2}\n"));
  const OutputState recorded = sink->state();
  REQUIRE(sink->write("after the checkpoint\n"));
  REQUIRE(sink->finish());
  sink.reset();
  // Reopened: the size it was cut back to.
  REQUIRE(reopen_file_sink(path, recorded, false, sink, false));
  CHECK(sink->file_size() == uint64_t{16});
  REQUIRE(sink->finish());
  CHECK(read_all(path) == "{\"a\":1}\n{\"a\":2}\n");
  // Not a regular file, or one written through another descriptor: none.
  std::unique_ptr<Sink> device;
  REQUIRE(open_file_sink("/dev/null", device));
  CHECK_FALSE(device->file_size().has_value());
  CHECK_FALSE(make_stdout_sink()->file_size().has_value());
}

TEST_CASE("forgetting a file drops what was asked for it; other files are still served") {
  const TempDir dir;
  std::vector<int> fds;
  for (int i = 0; i < 64; ++i) {
    const std::string path = dir.write(std::to_string(i), block_bytes(i, 0, 256 << 10));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    fds.push_back(fd);
  }
  WriteBehind& write_behind = WriteBehind::instance();
  for (int round = 0; round < 20; ++round) {
    for (const int fd : fds) write_behind.request(fd, 0, 256 * 1024);
  }
  // Each file is forgotten, then closed, while requests for the others may be pending.
  for (const int fd : fds) {
    write_behind.forget(fd);
    CHECK(::close(fd) == 0);
  }
  write_behind.forget(-1);  // never asked for: returns at once
  // The thread still serves files opened after (numbers that may be the closed ones').
  const std::string path = dir.write("after", block_bytes(99, 0, 1 << 20));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  write_behind.request(fd, 0, 1 << 20);
  write_behind.forget(fd);
  CHECK(::close(fd) == 0);
  CHECK(read_all(path) == block_bytes(99, 0, 1 << 20));
}

}  // namespace keyshard
