#include "input/mapped_window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

#include "util/files.h"
#include "util/status.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older C libraries do not name it
#endif

namespace keyshard {
namespace {

// The windows alive, as the SIGBUS handler sees them: a slot is taken (`taken`), its name
// written, then its range published; the handler reads only the range and, within one, the
// name. Plain atomics, lock-free, so safe in a handler.
constexpr int kSlots = 64;
constexpr size_t kNameBytes = 512;
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  char name[kNameBytes] = {};
};
Slot slots[kSlots];
static_assert(std::atomic<uintptr_t>::is_always_lock_free);

struct sigaction before_sigbus {};

// How long a fault waits for the writes under way (kCut below says it).
constexpr int kWritePatienceMs = 10'000;

void say(const char* text, size_t size) {
  while (size > 0) {
    const ssize_t wrote = ::write(STDERR_FILENO, text, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return;
    text += wrote;
    size -= static_cast<size_t>(wrote);
  }
}

void on_sigbus(int signal_number, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Slot& slot : slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= slot.end.load(std::memory_order_acquire)) {
      continue;
    }
    // (Only async-signal-safe calls: write, nanosleep, pause and _exit.) A fault in another
    // thread meanwhile waits here for this one to end the process.
    static std::atomic<bool> ending{false};
    if (ending.exchange(true)) {
      for (;;) ::pause();
    }
    // The writes under way finish first, so that a pipe (standard output, an --exec child)
    // gets whole lines; as no other write starts, the outputs hold only bytes of lines read
    // before the fault.
    const bool writes_finished = close_writes(kWritePatienceMs);
    static constexpr char kStart[] = "keyshard: ";
    static constexpr char kEnd[] =
        ": the file shrank while it was read (truncated by another program?), or part of it "
        "could not be read from its disk; the run stops here, as after a crash";
    static constexpr char kCut[] =
        " (a write to an output was still blocked after 10 s: that output may end part way "
        "through a line)";
    // One write, so that no other thread's message comes in between.
    static char message[sizeof kStart + kNameBytes + sizeof kEnd + sizeof kCut];
    size_t size = 0;
    const auto add = [&](const char* text, size_t length) {
      for (size_t i = 0; i < length; ++i) message[size++] = text[i];
    };
    add(kStart, sizeof kStart - 1);
    add(slot.name, ::strnlen(slot.name, kNameBytes));
    add(kEnd, sizeof kEnd - 1);
    if (!writes_finished) add(kCut, sizeof kCut - 1);
    add("\n", 1);
    say(message, size);
    ::_exit(kExitFailure);
  }
  // Not a mapped input: whatever handled SIGBUS before does (returning re-runs the access).
  if ((before_sigbus.sa_flags & SA_SIGINFO) != 0) {
    before_sigbus.sa_sigaction(signal_number, info, context);
  } else if (before_sigbus.sa_handler != SIG_DFL && before_sigbus.sa_handler != SIG_IGN) {
    before_sigbus.sa_handler(signal_number);
  } else {
    ::signal(SIGBUS, SIG_DFL);
  }
}

// A lease given back at once may still be broken in between; its signal (SIGIO) would end
// keyshard by default.
void on_lease_break(int) {}

void install_handlers() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &before_sigbus);
  struct sigaction lease {};
  if (::sigaction(SIGIO, nullptr, &lease) == 0 && lease.sa_handler == SIG_DFL) {
    lease.sa_handler = on_lease_break;
    lease.sa_flags = SA_RESTART;
    sigemptyset(&lease.sa_mask);
    ::sigaction(SIGIO, &lease, nullptr);
  }
}

std::once_flag handlers_installed;

}  // namespace

std::shared_ptr<const MappedWindow> MappedWindow::map(int fd, const std::string& name,
                                                      uint64_t offset, size_t length) {
  std::call_once(handlers_installed, install_handlers);
  int slot = 0;
  for (bool expected = false; slot < kSlots; ++slot, expected = false) {
    if (slots[slot].taken.compare_exchange_strong(expected, true)) break;
  }
  if (slot == kSlots) return nullptr;
  void* data =
      ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (data == MAP_FAILED) {
    slots[slot].taken.store(false);
    return nullptr;
  }
  (void)::madvise(data, length, MADV_SEQUENTIAL);  // a hint: read ahead further
  Slot& entry = slots[slot];
  const size_t name_size = std::min(name.size(), kNameBytes - 1);
  std::memcpy(entry.name, name.data(), name_size);
  entry.name[name_size] = '\0';
  entry.end.store(reinterpret_cast<uintptr_t>(data) + length, std::memory_order_release);
  entry.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
  return std::shared_ptr<const MappedWindow>(
      new MappedWindow(static_cast<const char*>(data), offset, length, slot));
}

void MappedWindow::populate() const {
  // (Past the end of a file that shrank, the call fails rather than raise SIGBUS.)
  (void)::madvise(const_cast<char*>(data_), length_, MADV_POPULATE_READ);
}

MappedWindow::~MappedWindow() {
  Slot& entry = slots[slot_];
  entry.begin.store(0, std::memory_order_release);
  entry.end.store(0, std::memory_order_release);
  ::munmap(const_cast<char*>(data_), length_);
  entry.taken.store(false, std::memory_order_release);
}

bool nobody_writes(int fd) {
  std::call_once(handlers_installed, install_handlers);
  if (::fcntl(fd, F_SETLEASE, F_RDLCK) != 0) return false;
  ::fcntl(fd, F_SETLEASE, F_UNLCK);
  return true;
}

}  // namespace keyshard
