// Reading a regular file in place: a stretch of it mapped read-only, so that its lines reach
// the routers and owners without the copy a read() makes. Chunks that view a window hold it
// (shared_ptr), and it is unmapped when the last of them is done, which bounds the memory the
// mappings hold to the windows of the chunks in flight.
//
// A mapped file that shrinks while it is read (or a page of it that the disk fails to deliver)
// raises SIGBUS where a read() would have returned less. keyshard maps only files that no
// program has open for writing when they are opened (a live log being rotated is read as
// before), and turns such a fault into a message that names the file and an exit, before the
// faulting access could hand on a byte: what the outputs hold came from the file as it was.
// The writes under way finish first (close_writes), so that a pipe gets whole lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace keyshard {

/// How much of a file read in place one mapping covers (unless a line is longer).
inline constexpr uint64_t kMappedWindowBytes = 16u << 20;

class MappedWindow {
 public:
  /// Maps `length` bytes of `fd` (the file `name`) from `offset`, a multiple of the page size.
  /// Null when the mapping fails or too many windows are alive.
  static std::shared_ptr<const MappedWindow> map(int fd, const std::string& name, uint64_t offset,
                                                 size_t length);
  ~MappedWindow();
  MappedWindow(const MappedWindow&) = delete;
  MappedWindow& operator=(const MappedWindow&) = delete;

  /// Fills in the mapping's page tables from the page cache in one call (reading from the disk
  /// what is not there), where the first touch of each 64 KiB would otherwise fault: a fault
  /// costs far more than its share of one call (in a VM, a trap to the host). Best effort: a
  /// kernel before 5.14 leaves the faults, and what the file no longer holds is left to fault.
  void populate() const;

  /// The file's bytes [offset(), offset() + length()).
  const char* data() const { return data_; }
  uint64_t offset() const { return offset_; }
  size_t length() const { return length_; }

 private:
  MappedWindow(const char* data, uint64_t offset, size_t length, int slot)
      : data_(data), offset_(offset), length_(length), slot_(slot) {}

  const char* data_;
  uint64_t offset_;
  size_t length_;
  int slot_;  // its entry among the windows the SIGBUS handler knows
};

/// Whether `fd`, a regular file, may be read in place: no program (this one included) has it
/// open for writing now. Asked by taking a read lease and giving it back at once; without the
/// right to leases (another user's file, without CAP_LEASE) or support for them (some network
/// filesystems), the answer is no.
bool nobody_writes(int fd);

}  // namespace keyshard
