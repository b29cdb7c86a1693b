#include "report/interrupt.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace attn::report {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// A slot's state. Registering writes the path while the slot is `writing` (which the handler
// skips: nothing is on disk yet), then publishes its kind; forgetting frees it first.
enum : int { kFree = 0, kWriting = 1, kTree = 2, kEmptyDirs = 3 };

// The table lives in static storage, zero at start, so the handler reads only memory that exists
// and allocates nothing.
struct Slot {
  std::atomic<int> state{kFree};
  unsigned long order = 0;   // when it was registered: the newest is removed first
  std::size_t outermost = 0; // kEmptyDirs: the length of the outermost directory's path
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free, "the handler reads the slots' states");

Slot g_slots[kMaxRemovedOnSignal];
unsigned long g_next_order = 1;
pid_t g_owner = 0;  // the process that installed the handler (a forked child removes nothing)

int register_slot(int kind, const std::string& path, std::size_t outermost) {
  if (path.empty() || path.size() >= PATH_MAX) throw std::runtime_error("the path is too long: " + path.substr(0, 80) + "...");
  for (std::size_t i = 0; i < kMaxRemovedOnSignal; ++i) {
    Slot& s = g_slots[i];
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kWriting)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.outermost = outermost;
    s.order = g_next_order++;
    s.state.store(kind, std::memory_order_release);
    return static_cast<int>(i);
  }
  throw std::runtime_error("more than " + std::to_string(kMaxRemovedOnSignal) + " temporary files at once");
}

// --- the handler's side: async-signal-safe calls only -------------------------------------------

// Removes `name` under the directory `dir_fd`: a file at once, a directory after its entries
// (directories `depth` deep at most; a staged dump is one level of files).
void remove_tree_at(int dir_fd, const char* name, int depth) {
  if (::unlinkat(dir_fd, name, 0) == 0) return;
  if (errno != EISDIR && errno != EPERM) return;  // gone already, or cannot go
  if (depth > 0) {
    const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      // Reads the directory from the start again after a pass that found entries, so one the
      // reading position skipped after an unlink is still found (a few passes at most).
      alignas(8) char buf[4096];
      bool found = true;
      for (int pass = 0; found && pass < 4; ++pass) {
        found = false;
        ::lseek(fd, 0, SEEK_SET);
        for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
          // struct linux_dirent64: u64 d_ino, s64 d_off, u16 d_reclen, u8 d_type, char d_name[].
          for (long off = 0; off < n;) {
            std::uint16_t reclen = 0;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            if (reclen == 0) break;
            const char* entry = buf + off + 19;
            off += reclen;
            if (entry[0] == '.' && (entry[1] == '\0' || (entry[1] == '.' && entry[2] == '\0'))) continue;
            found = true;
            remove_tree_at(fd, entry, depth - 1);
          }
        }
      }
      ::close(fd);
    }
  }
  ::unlinkat(dir_fd, name, AT_REMOVEDIR);
}

// rmdir from the innermost directory up to the outermost, stopping at the first that is not empty.
void remove_empty_dirs(const Slot& s) {
  char p[PATH_MAX];
  std::size_t n = 0;
  while (n + 1 < sizeof p && s.path[n] != '\0') p[n] = s.path[n], ++n;
  p[n] = '\0';
  while (n >= s.outermost && n > 1) {
    if (::rmdir(p) != 0 && errno != ENOENT) return;
    if (n == s.outermost) return;
    while (n > 0 && p[n - 1] != '/') --n;  // up one: drop the last component and its '/'
    while (n > 1 && p[n - 1] == '/') --n;
    p[n] = '\0';
  }
}

void remove_registered() {
  unsigned long below = static_cast<unsigned long>(-1);
  for (;;) {
    const Slot* newest = nullptr;
    for (const Slot& s : g_slots) {
      const int state = s.state.load(std::memory_order_acquire);
      if ((state == kTree || state == kEmptyDirs) && s.order < below && (!newest || s.order > newest->order)) newest = &s;
    }
    if (!newest) return;
    below = newest->order;
    if (newest->state.load(std::memory_order_acquire) == kTree) remove_tree_at(AT_FDCWD, newest->path, 3);
    else remove_empty_dirs(*newest);
  }
}

void on_signal(int sig) {
  const int saved_errno = errno;
  const pid_t pid = ::getpid();
  if (static_cast<pid_t>(::syscall(SYS_gettid)) != pid) {
    // One of OpenBLAS's threads: the main thread is the one that writes, so it removes. It gets
    // the signal now, or (holding signals while outputs move into place) once they have moved.
    ::syscall(SYS_tgkill, pid, pid, sig);
    errno = saved_errno;
    return;
  }
  if (pid == g_owner) remove_registered();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // pending until this handler returns; then the default action ends attn
  errno = saved_errno;
}

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kSignals) sigaddset(&set, sig);
  return set;
}

}  // namespace

void remove_staging_on_signals() {
  g_owner = ::getpid();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_mask = handled_signals();  // one cleanup at a time, whichever signals come
  sa.sa_flags = SA_RESTART;
  for (const int sig : kSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

RemovedOnSignal RemovedOnSignal::tree(const std::string& path) { return RemovedOnSignal(register_slot(kTree, path, 0)); }

RemovedOnSignal RemovedOnSignal::empty_dirs(const std::string& outermost, const std::string& innermost) {
  if (innermost.compare(0, outermost.size(), outermost) != 0)
    throw std::logic_error("empty_dirs: " + outermost + " does not contain " + innermost);
  return RemovedOnSignal(register_slot(kEmptyDirs, innermost, outermost.size()));
}

RemovedOnSignal& RemovedOnSignal::operator=(RemovedOnSignal&& other) noexcept {
  if (this != &other) {
    forget();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void RemovedOnSignal::forget() {
  if (slot_ < 0) return;
  g_slots[slot_].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

SignalsHeld::SignalsHeld() {
  const sigset_t set = handled_signals();
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

SignalsHeld::~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace attn::report
