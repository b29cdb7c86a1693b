#include "cli/subprocess.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string_view>
#include <thread>

namespace attn::cli {

namespace {

// ---- child processes ---------------------------------------------------------------------

// What a child printed, kept within bounds: the first `head` bytes (passed on at once to `live`
// when given) and the last `tail` bytes; what lies between is only counted.
class BoundedOutput {
 public:
  BoundedOutput(std::size_t head, std::size_t tail, std::ostream* live) : head_(head), tail_(tail), live_(live) {}

  // False once `live` refused a write (the reader of a pipe went away).
  bool add(const char* data, std::size_t n) {
    total_ += n;
    const std::size_t to_head = std::min(n, head_ - kept_.size());
    if (to_head) {
      kept_.append(data, to_head);
      if (live_ && !(*live_ << std::string_view(data, to_head) << std::flush)) return false;
    }
    if (to_head == n) return true;
    ring_.append(data + to_head, n - to_head);
    if (ring_.size() > 2 * tail_) ring_.erase(0, ring_.size() - tail_);  // amortised: trim in blocks
    return true;
  }

  std::size_t total() const { return total_; }
  bool cut() const { return total_ > kept_.size() + tail_text().size(); }
  const std::string& head_text() const { return kept_; }
  // The end, from a line start when one is near, so the last lines read whole.
  std::string tail_text() const {
    std::string t = ring_.size() > tail_ ? ring_.substr(ring_.size() - tail_) : ring_;
    if (total_ > kept_.size() + t.size()) {
      const auto nl = t.find('\n');
      if (nl != std::string::npos && nl + 1 < t.size()) t.erase(0, nl + 1);
    }
    return t;
  }
  // "[... 12,582,912 bytes cut: the program printed 12,595,200 bytes in all ...]", or "".
  std::string marker(const std::string& who) const {
    if (!cut()) return "";
    const std::size_t shown = kept_.size() + tail_text().size();
    return "[... " + std::to_string(total_ - shown) + " bytes cut: " + who + " printed " + std::to_string(total_) +
           " bytes in all; the first " + std::to_string(kept_.size()) + " and the last " + std::to_string(tail_text().size()) +
           " are shown ...]";
  }
  // Everything kept, with the marker between the beginning and the end.
  std::string text(const std::string& who) const {
    if (!cut()) return kept_ + ring_;
    return kept_ + (kept_.empty() || kept_.back() == '\n' ? "" : "\n") + marker(who) + "\n" + tail_text();
  }

 private:
  std::size_t head_, tail_;
  std::ostream* live_;
  std::string kept_, ring_;
  std::size_t total_ = 0;
};

// Bytes kept of a child's output: enough for any doctest report or compiler error a learner
// reads; a program printing in a loop is cut to its beginning and end.
constexpr std::size_t kHeadBytes = 16 * 1024;
constexpr std::size_t kTailBytes = 4 * 1024;

// How long output is still read after the child has ended: what it wrote just before is in the
// pipe already; a process it left behind that keeps the pipe open is not waited for.
constexpr auto kDrainGrace = std::chrono::milliseconds(200);
// How often the processes the child started are counted.
constexpr auto kCountEvery = std::chrono::milliseconds(100);
// Threads the child may add to its user's count (RLIMIT_NPROC counts threads of the real user).
constexpr rlim_t kExtraThreads = 1024;

// ---- the processes a check started ----------------------------------------------------------
//
// A child that calls setsid() leaves the process group, and one whose parent ends is handed to
// init: neither a group kill nor waitpid sees it. While a check runs, attn is a child subreaper
// (prctl), so every orphan below it is handed to attn instead, and /proc lists each process with
// its parent: the processes a check started are exactly those below attn that were not there
// before it.

struct ProcessEntry {
  pid_t pid = 0, parent = 0;
  bool zombie = false;  // ended, not yet reaped by its parent
};

// Every process in /proc with its parent.
std::vector<ProcessEntry> process_parents() {
  std::vector<ProcessEntry> parents;
  DIR* dir = opendir("/proc");
  if (!dir) return parents;
  while (const dirent* entry = readdir(dir)) {
    const char* name = entry->d_name;
    if (name[0] < '1' || name[0] > '9') continue;
    char path[sizeof entry->d_name + 16];
    std::snprintf(path, sizeof path, "/proc/%s/stat", name);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and ')', so the last ')' ends it.
    const char* close_paren = std::strrchr(buf, ')');
    if (!close_paren) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
    parents.push_back({static_cast<pid_t>(std::atoi(name)), static_cast<pid_t>(ppid), state == 'Z'});
  }
  closedir(dir);
  return parents;
}

// attn's own children now, before a check starts one.
std::vector<pid_t> own_children() {
  std::vector<pid_t> kids;
  const pid_t self = getpid();
  for (const auto& p : process_parents())
    if (p.parent == self) kids.push_back(p.pid);
  return kids;
}

// Every process below attn, except the subtrees of `before` (children it had before the check),
// and without the zombies (ended, not yet reaped) unless asked for.
std::vector<pid_t> started_processes(const std::vector<pid_t>& before, bool zombies = false) {
  const auto all = process_parents();
  std::vector<pid_t> found;
  std::vector<pid_t> frontier = {getpid()};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    for (const auto& p : all) {
      if (p.parent != parent) continue;
      if (parent == getpid() && std::find(before.begin(), before.end(), p.pid) != before.end()) continue;
      if (zombies || !p.zombie) found.push_back(p.pid);
      frontier.push_back(p.pid);
    }
  }
  return found;
}

// SIGKILLs every process the check started and reaps those handed to attn, until none is left
// (a process forking while it is killed leaves children, found on the next round). Gives up
// after 5 s, which only a process stuck in the kernel takes.
void kill_started(const std::vector<pid_t>& before) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const auto found = started_processes(before, true);
    if (found.empty() || std::chrono::steady_clock::now() > give_up) return;
    for (pid_t p : found) kill(p, SIGKILL);
    bool reaped = false;
    for (pid_t p : found)
      if (waitpid(p, nullptr, WNOHANG) == p) reaped = true;  // only attn's own children; others fail
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The largest address space `pid` has had (VmPeak in /proc/<pid>/status), in bytes; 0 when unknown.
std::uint64_t peak_address_space(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmPeak:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;  // "VmPeak: 123 kB"
  return 0;
}

// Threads of the real user `uid` now, as the kernel counts them for RLIMIT_NPROC.
rlim_t user_threads(uid_t uid) {
  rlim_t threads = 0;
  DIR* dir = opendir("/proc");
  if (!dir) return 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + entry->d_name + "/status");
    bool mine = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) mine = std::strtoul(line.c_str() + 4, nullptr, 10) == uid;
      if (line.rfind("Threads:", 0) == 0) {
        if (mine) threads += std::strtoul(line.c_str() + 8, nullptr, 10);
        break;
      }
    }
  }
  closedir(dir);
  return threads;
}

// Stops the child's whole process group (a build runs make and compilers). A gentle stop sends
// SIGTERM first, so make deletes a half-written target and the build tree stays as it was, and
// SIGKILL after a grace; otherwise SIGKILL at once. Returns the child's wait status.
int stop_group(pid_t pid, bool gentle) {
  int wstatus = 0;
  if (gentle) {
    kill(-pid, SIGTERM);
    for (int i = 0; i < 200; ++i) {  // up to 2 s
      if (waitpid(pid, &wstatus, WNOHANG) == pid) {
        kill(-pid, SIGKILL);  // anything of the group still left
        return wstatus;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &wstatus, 0);
  return wstatus;
}

// The child runs in its own process group, out of reach of the terminal's Ctrl-C: while it runs,
// a signal that ends attn kills the child's group at once and is noted; run_child then stops
// everything else the child started, and attn dies of the signal as it would have.
volatile std::sig_atomic_t g_child_group = 0;
volatile std::sig_atomic_t g_child_signal = 0;
extern "C" void stop_child_note_signal(int sig) {
  if (g_child_group > 0) kill(-static_cast<pid_t>(g_child_group), SIGKILL);
  g_child_signal = sig;
}

// The handlers above, for the length of one child.
struct ChildGuard {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  void (*old[4])(int) = {};
  explicit ChildGuard(pid_t group) {
    g_child_group = group;
    g_child_signal = 0;
    for (int i = 0; i < 4; ++i) old[i] = std::signal(kSignals[i], stop_child_note_signal);
  }
  ~ChildGuard() {
    for (int i = 0; i < 4; ++i) std::signal(kSignals[i], old[i]);
    g_child_group = 0;
  }
};

// attn as the child subreaper, for the length of one child: the orphans below it come to it.
struct Subreaper {
  int old = 0;
  Subreaper() {
    prctl(PR_GET_CHILD_SUBREAPER, &old);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  ~Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, old); }
  Subreaper(const Subreaper&) = delete;
  Subreaper& operator=(const Subreaper&) = delete;
};

}  // namespace

Child run_child(const std::vector<std::string>& argv, Output mode, const RunLimits& limits, std::ostream* live,
                const std::string& who) {
  const Subreaper subreaper;
  const std::vector<pid_t> before = own_children();
  // RLIMIT_NPROC counts every thread of the user, so the child's is what the user has now plus a
  // margin. The kernel does not enforce it for root; the count below covers that case.
  rlim_t nproc = RLIM_INFINITY;
  if (limits.max_processes && getuid() != 0) {
    rlimit current{};
    getrlimit(RLIMIT_NPROC, &current);
    nproc = std::min<rlim_t>(current.rlim_cur, user_threads(getuid()) + kExtraThreads);
  }
  int pipe_fd[2] = {-1, -1};
  if (mode == Output::Capture && pipe2(pipe_fd, O_CLOEXEC) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a signal to attn stops it and the processes in its group at once
    // A crash leaves no core file behind (in the learner's working directory), and does not
    // spend seconds writing one.
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (nproc != RLIM_INFINITY) {
      const rlimit np{nproc, nproc};
      setrlimit(RLIMIT_NPROC, &np);
    }
    // main() ignores SIGPIPE for its own quiet exit; a child must not inherit that.
    std::signal(SIGPIPE, SIG_DFL);
    if (limits.memory_bytes) {
      const rlimit as{static_cast<rlim_t>(limits.memory_bytes), static_cast<rlim_t>(limits.memory_bytes)};
      setrlimit(RLIMIT_AS, &as);
      // OpenBLAS reserves buffers per thread; one thread keeps a small exercise's address space small.
      setenv("OPENBLAS_NUM_THREADS", "1", 0);
    }
    const int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) dup2(devnull, 0);  // nothing here reads the terminal
    if (mode == Output::Capture) {
      dup2(pipe_fd[1], 1);  // dup2 clears O_CLOEXEC on the copies
      dup2(pipe_fd[1], 2);
    } else if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    const std::string msg = "attn: error: cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before either side goes on
  const ChildGuard guard(pid);
  if (mode == Output::Capture) {
    close(pipe_fd[1]);
    fcntl(pipe_fd[0], F_SETFL, fcntl(pipe_fd[0], F_GETFL) | O_NONBLOCK);
  }

  Child child;
  BoundedOutput out(kHeadBytes, kTailBytes, live);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(limits.timeout_s);
  auto next_count = start + kCountEvery;
  int wstatus = 0;
  bool ended = false;                       // the child itself has ended and been reaped
  Clock::time_point ended_at;
  bool pipe_open = mode == Output::Capture;
  char buf[1 << 16];
  // Reads what the pipe holds now; false once `live` refused it.
  auto read_pipe = [&] {
    for (;;) {
      const ssize_t n = read(pipe_fd[0], buf, sizeof buf);
      if (n == 0) pipe_open = false;  // every writer closed
      if (n <= 0) return true;        // EOF, EAGAIN (nothing more now) or an error
      if (!out.add(buf, static_cast<std::size_t>(n))) return false;
    }
  };
  for (;;) {
    if (!ended && waitpid(pid, &wstatus, WNOHANG) == pid) {
      ended = true;
      ended_at = Clock::now();
    }
    if (ended && (!pipe_open || Clock::now() - ended_at >= kDrainGrace)) break;
    if (g_child_signal) break;
    if (pipe_open) {
      pollfd p{pipe_fd[0], POLLIN, 0};
      poll(&p, 1, 20);
      if (!read_pipe()) {
        child.reader_gone = true;
        if (!ended) wstatus = stop_group(pid, limits.gentle_stop);
        ended = true;
        break;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (ended) continue;
    const auto now = Clock::now();
    if (limits.timeout_s > 0 && now >= deadline) {
      child.timed_out = true;
      child.peak_bytes = peak_address_space(pid);
      wstatus = stop_group(pid, limits.gentle_stop);
      ended = true;
      break;
    }
    if (limits.max_processes && now >= next_count) {
      next_count = now + kCountEvery;
      if (started_processes(before).size() > limits.max_processes) {
        child.too_many = true;
        wstatus = stop_group(pid, false);
        ended = true;
        break;
      }
    }
  }
  // Whatever the child left behind: a server it started, a process holding its output open.
  if (ended && !child.timed_out && !child.too_many && !child.reader_gone)
    child.left_running = started_processes(before).size();
  if (!ended) {  // a signal to attn: its handler has killed the child's group already
    kill(-pid, SIGKILL);
    waitpid(pid, &wstatus, 0);
  }
  kill_started(before);
  if (pipe_open) {
    // Every writer is gone now, so this reaches the end at once, unless a process was passed the
    // pipe by other means: then at most a second more.
    const auto limit = Clock::now() + std::chrono::seconds(1);
    while (pipe_open && !child.reader_gone && Clock::now() < limit) {
      pollfd p{pipe_fd[0], POLLIN, 0};
      poll(&p, 1, 50);
      if (!read_pipe()) child.reader_gone = true;
    }
  }
  if (mode == Output::Capture) close(pipe_fd[0]);
  if (g_child_signal) {
    const int sig = g_child_signal;
    std::signal(sig, SIG_DFL);
    raise(sig);
  }
  child.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  child.output = out.text(who);
  child.marker = out.marker(who);
  if (live && !child.reader_gone) {
    // The beginning went out live; the rest (after the marker, when something was cut) now.
    const std::string rest = out.text(who).substr(out.head_text().size());
    if (!(*live << rest << std::flush)) child.reader_gone = true;
  }
  return child;
}

}  // namespace attn::cli
