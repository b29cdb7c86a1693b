#include "cli/exercises.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
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
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "cli/compile_hints.hpp"
#include "lesson_kit/options.hpp"
#include "lesson_kit/registry.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

// A problem with the setup (no table, no build tree), not with what the learner typed: one
// line on stderr and status 1, where a bad name is a UsageError and status 2.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kListTimeoutS = 10;    // attn exercises: per exercise, for a quick overview

// Programs built with AddressSanitizer reserve terabytes of address space for its shadow memory,
// so an address-space limit would stop them before main(): none is set in such a build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCanLimitMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCanLimitMemory = false;
#else
constexpr bool kCanLimitMemory = true;
#endif
#else
constexpr bool kCanLimitMemory = true;
#endif

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

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

enum class Output { Capture, Discard };

struct RunLimits {
  int timeout_s = 0;                // wall-clock seconds; 0: none
  std::uint64_t memory_bytes = 0;   // address space of each process (RLIMIT_AS); 0: none
  std::size_t max_processes = 0;    // the child and what it started, running at once; 0: no limit
  bool gentle_stop = false;         // SIGTERM first, then SIGKILL (a build: make deletes half-written files)
};

struct Child {
  int status = -1;             // exit status, or 128 + signal
  bool timed_out = false;
  bool reader_gone = false;    // `live` stopped taking output: the child was stopped
  bool too_many = false;       // more than max_processes at once: everything was stopped
  std::size_t left_running = 0;  // processes still running after the child itself ended (all stopped)
  std::uint64_t peak_bytes = 0;  // the child's largest address space (VmPeak), read when the clock stopped it
  std::string output;          // stdout and stderr together (Capture), cut to its beginning and end
  std::string marker;          // the cut marker, "" when nothing was cut
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

// Runs argv[0] (an absolute path) without a shell, so paths with spaces need no quoting, in its
// own process group, within `limits`. Its output is cut to its beginning and end; with `live`,
// the beginning is passed on as it arrives. When it returns, nothing the child started is
// running any more.
Child run_child(const std::vector<std::string>& argv, Output mode, const RunLimits& limits, std::ostream* live = nullptr,
                const std::string& who = "the program") {
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

// ---- names -------------------------------------------------------------------------------

// The exercise the learner named, or a UsageError with a suggestion (exit status 2).
const Exercise& lookup(const std::vector<Exercise>& all, const std::string& name) {
  if (const Exercise* e = find_exercise(all, name)) return *e;
  const std::string near = closest_exercise(all, name);
  if (!near.empty()) throw UsageError("unknown exercise '" + name + "' (did you mean '" + near + "'?)");
  throw UsageError("unknown exercise '" + name + "' (see attn exercises for the list)");
}

bool newer(const fs::path& a, const fs::path& b) {
  std::error_code ec1, ec2;
  const auto ta = fs::last_write_time(a, ec1), tb = fs::last_write_time(b, ec2);
  return !ec1 && !ec2 && ta > tb;
}

// "lessons/exercises/rnn_step.cpp": paths as a learner at the repository root types them.
std::string relative(const ExercisePaths& paths, const std::string& path) {
  const std::string prefix = paths.source_dir + "/";
  return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
}

// A command the wrap must not break: keep() turns its spaces into a byte wrap() does not split
// at, and wrap_keeping() turns them back after wrapping.
constexpr char kKeep = '\x01';
std::string keep(std::string text) {
  std::replace(text.begin(), text.end(), ' ', kKeep);
  return text;
}
std::string wrap_keeping(const std::string& text, const std::string& first, const std::string& rest) {
  std::string out = report::wrap(text, 80, first, rest);
  std::replace(out.begin(), out.end(), kKeep, ' ');
  return out;
}

// The build tree must exist (attn check builds in it) and have exercise programs configured.
void require_build(const ExercisePaths& paths) {
  if (paths.bin_dir.empty())
    throw SetupError("this build has no exercise programs (BUILD_TESTING: ON vs OFF); reconfigure with "
                     "cmake -S " + paths.source_dir + " -B " + paths.build_dir + " -DBUILD_TESTING=ON");
  if (!fs::exists(fs::path(paths.build_dir) / "CMakeCache.txt"))
    throw SetupError("the build directory is missing (" + paths.build_dir +
                     ": a configured build tree vs not found); create it again with cmake -S " + paths.source_dir +
                     " -B " + paths.build_dir);
}

// Runs a top-level command, turning SetupError into one line on stderr and status 1.
template <class F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const SetupError& e) {
    std::cout.flush();
    std::cerr << "attn: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

std::uint64_t CheckLimits::memory_bytes() const { return kCanLimitMemory ? memory_mib << 20 : 0; }

// ---- the table ---------------------------------------------------------------------------

std::string Exercise::stem() const { return file.size() > 4 ? file.substr(0, file.size() - 4) : file; }
std::string Exercise::target() const { return "exercise_" + stem(); }

ExercisePaths ExercisePaths::configured() {
  ExercisePaths p;
  p.source_dir = ATTN_SOURCE_DIR;
  p.build_dir = ATTN_BUILD_DIR;
  p.cmake = ATTN_CMAKE_COMMAND;
#ifdef ATTN_EXERCISE_BIN_DIR
  p.bin_dir = ATTN_EXERCISE_BIN_DIR;  // set by tests/exercises/CMakeLists.txt, absent without tests
#endif
  return p;
}

ExercisePaths ExercisePaths::for_binary_in(const std::string& running_from) {
  ExercisePaths p = configured();
  std::error_code ec;
  const fs::path here = fs::weakly_canonical(running_from, ec);
  const fs::path built = fs::weakly_canonical(p.build_dir, ec);
  if (here.empty() || here == built) return p;
  // Elsewhere is fine for an installed attn (cmake --install: ~/.local/bin), which follows the
  // clone it was built for. A binary in another build tree (its CMakeCache.txt) or inside another
  // clone was copied or moved with a repository.
  const fs::path beside = here.parent_path();
  const bool clone_here = fs::exists(beside / "lessons" / "exercises" / "exercises.txt", ec);
  if (!clone_here && !fs::exists(here / "CMakeCache.txt", ec)) return p;
  throw UsageError("this attn was built in " + built.string() + " for the exercises of " + p.source_dir +
                   ", but runs from " + here.string() + ": it would build and check " + p.source_dir + "'s files" +
                   (clone_here ? ", not " + beside.string() + "'s. Build this clone's own: cmake -S " + beside.string() +
                                     " -B " + (beside / "build").string() + " && cmake --build " +
                                     (beside / "build").string() + " -j2."
                               : ". Run the attn in " + built.string() + "."));
}

std::string ExercisePaths::table() const { return source_dir + "/lessons/exercises/exercises.txt"; }
std::string ExercisePaths::learner(const Exercise& e) const { return source_dir + "/lessons/exercises/" + e.file; }
std::string ExercisePaths::solution(const Exercise& e) const {
  return source_dir + "/lessons/exercises/solutions/" + e.file;
}
std::string ExercisePaths::shipped(const Exercise& e) const {
  return source_dir + "/lessons/exercises/shipped/" + e.file;
}
std::string ExercisePaths::test(const Exercise& e) const { return source_dir + "/tests/exercises/test_" + e.file; }
std::string ExercisePaths::program(const Exercise& e) const { return bin_dir + "/" + e.target(); }

std::vector<Exercise> parse_exercises(std::istream& in, const std::string& origin) {
  std::vector<Exercise> all;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(t);
    for (std::string f; std::getline(ss, f, '|');) fields.push_back(trim(f));
    const auto where = origin + ":" + std::to_string(number) + ": ";
    if (fields.size() != 5)
      throw std::runtime_error(where + "expected 5 fields separated by '|' (name | lesson | file | what you write | "
                               "hint), got " + std::to_string(fields.size()));
    for (const auto& f : fields)
      if (f.empty()) throw std::runtime_error(where + "a field is empty");
    Exercise e;
    e.number = all.size() + 1;
    e.name = fields[0];
    e.lesson = fields[1];
    e.file = fields[2];
    e.writes = fields[3];
    e.hint = fields[4];
    if (e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      throw std::runtime_error(where + "name '" + e.name + "' may hold only a-z, 0-9 and '-'");
    if (e.file.size() <= 4 || e.file.substr(e.file.size() - 4) != ".cpp" ||
        e.stem().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw std::runtime_error(where + "file '" + e.file + "' must be <a-z, 0-9, _>.cpp");
    if (find_exercise(all, e.name)) throw std::runtime_error(where + "exercise '" + e.name + "' appears twice");
    all.push_back(std::move(e));
  }
  return all;
}

std::vector<Exercise> load_exercises(const ExercisePaths& paths) {
  std::ifstream in(paths.table());
  if (!in) throw SetupError("the exercise table is missing (" + paths.table() + ": the table vs not found)");
  try {
    return parse_exercises(in, paths.table());
  } catch (const std::runtime_error& e) {
    throw SetupError(e.what());
  }
}

const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name) {
  for (const auto& e : all)
    if (e.name == name) return &e;
  return nullptr;
}

std::string closest_exercise(const std::vector<Exercise>& all, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& e : all) names.push_back(e.name);
  return closest_name(name, names);
}

// ---- progress ----------------------------------------------------------------------------

Progress progress(const ExercisePaths& paths, const Exercise& e) {
  const fs::path program = paths.program(e);
  if (paths.bin_dir.empty() || !fs::exists(program)) return Progress::NotBuilt;
  // A program older than its sources says nothing about them: do not run it, say so.
  if (newer(paths.learner(e), program) || newer(paths.test(e), program)) return Progress::Stale;
  const Child run =
      run_child({program.string()}, Output::Discard, {kListTimeoutS, CheckLimits{}.memory_bytes(), CheckLimits{}.max_processes});
  if (run.timed_out) return Progress::TimedOut;
  if (run.status == 0) return Progress::Passes;
  return run.status > 128 ? Progress::Crashes : Progress::Fails;
}

const char* progress_text(Progress p) {
  switch (p) {
    case Progress::NotBuilt: return "not checked yet";
    case Progress::Stale: return "edited: recheck";
    case Progress::Passes: return "passes";
    case Progress::Fails: return "fails";
    case Progress::Crashes: return "crashes";
    case Progress::TimedOut: return "times out";
  }
  return "?";
}

// ---- the commands ------------------------------------------------------------------------

int list_exercises(const ExercisePaths& paths, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    std::size_t w_name = 4, w_lesson = 6, w_file = 4;
    for (const auto& e : all) {
      w_name = std::max(w_name, e.name.size());
      w_lesson = std::max(w_lesson, e.lesson.size());
      w_file = std::max(w_file, e.file.size());
    }
    auto pad = [](std::string s, std::size_t w) {
      s.resize(std::max(w, s.size()), ' ');
      return s;
    };
    out << wrap_keeping("Exercises, in teaching order. Edit the file, then run " + keep("attn check NAME") + "; " +
                            keep("attn hint NAME") + " gives a hint. The files are in " + paths.source_dir +
                            "/lessons/exercises/.",
                        "", "")
        << "\n";
    const std::string indent(6, ' ');
    out << "   #  " << pad("name", w_name) << "  " << pad("lesson", w_lesson) << "  " << pad("file", w_file)
        << "  now\n";
    std::size_t passing = 0;
    const Exercise* next = nullptr;
    for (const auto& e : all) {
      const Progress p = progress(paths, e);
      if (p == Progress::Passes) ++passing;
      else if (!next) next = &e;
      std::string number = std::to_string(e.number);
      out << std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') << number << "  " << pad(e.name, w_name)
          << "  " << pad(e.lesson, w_lesson) << "  " << pad(e.file, w_file) << "  " << progress_text(p) << "\n"
          << report::wrap(e.writes, 80, indent, indent);
    }
    out << "\n" << passing << " of " << all.size() << " pass.";
    if (next) out << " Next: attn check " << next->name;
    out << "\n";
    out << wrap_keeping("\"passes\" and \"fails\" come from running each exercise's last build just now; "
                        "\"not checked yet\" means it was never built, \"edited: recheck\" that the file "
                        "changed since. " + keep("attn check NAME") + " builds and runs one.",
                        "", "");
    return 0;
  });
}

namespace {

enum class Outcome { Passed, Failed, BuildFailed, ReaderGone };

// The next exercise to work on after `from` (0-based), in teaching order and wrapping round to
// the beginning: the first that does not pass. nullptr when every one passes. `passes[i]` is
// what is known of exercise i.
const Exercise* next_unsolved(const std::vector<Exercise>& all, const std::vector<bool>& passes, std::size_t from) {
  for (std::size_t k = 1; k <= all.size(); ++k) {
    const std::size_t i = (from + k) % all.size();
    if (!passes[i]) return &all[i];
  }
  return nullptr;
}

// Which exercises pass now, as attn exercises sees them (up-to-date programs run just now).
std::vector<bool> passing(const ExercisePaths& paths, const std::vector<Exercise>& all) {
  std::vector<bool> passes(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) passes[i] = progress(paths, all[i]) == Progress::Passes;
  return passes;
}

enum class Mode { Check, Watch };

// True when the compiler reported an error in `file` ("<file>:<line>:<col>: error:"): the
// learner's own mistake, which a full build would only repeat.
bool error_in_file(const std::string& output, const std::string& file) {
  std::istringstream lines(strip_colors(output));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(file + ":", 0) == 0 && line.find(": error:") != std::string::npos) return true;
  return false;
}

// True when a compiler (or linker) of the build stopped because a memory allocation was refused,
// as g++ ("virtual memory exhausted", "cc1plus: out of memory allocating ...") and clang ("LLVM
// ERROR: out of memory") say it.
bool compiler_out_of_memory(const std::string& output) {
  std::istringstream lines(strip_colors(output));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("virtual memory exhausted", 0) == 0 || line.find(": out of memory allocating ") != std::string::npos ||
        line.rfind("LLVM ERROR: out of memory", 0) == 0)
      return true;
  return false;
}

// Builds and runs one exercise, printing what attn check prints; the verdict's last words differ
// between attn check (run it again) and attn watch (save the file again). `passes` is updated for
// this exercise and read for "Next:"; when it is empty, the other exercises' progress is found
// (by running their up-to-date programs) only once this one passes, and only up to the first
// that does not pass.
Outcome check_one(const ExercisePaths& paths, const std::vector<Exercise>& all, const Exercise& e, std::ostream& out,
                  const CheckLimits& limits, Mode mode, std::vector<bool>& passes) {
  const std::string file = relative(paths, paths.learner(e));
  const std::string head = "attn check " + e.name + ": ";
  const std::string again = mode == Mode::Watch ? "save " + file + " again" : keep("attn check " + e.name) + " again";
  auto verdict = [&](const std::string& text) { out << wrap_keeping(head + text, "", "  "); };

  // A deleted file would reach the learner as make's "No rule to make target" line.
  if (!fs::exists(paths.learner(e))) {
    if (!passes.empty()) passes[e.number - 1] = false;
    const std::string missing = file + " is missing (the file you edit for " + e.name + ": a file vs not found); ";
    if (mode == Mode::Check) throw SetupError(missing + "attn reset " + e.name + " restores it as shipped");
    verdict(missing + keep("attn reset " + e.name) + " restores it as shipped, and the check runs again when it is back.");
    return Outcome::BuildFailed;
  }
  if (!fs::exists(paths.test(e)))
    throw SetupError(relative(paths, paths.test(e)) + " is missing (the checks of " + e.name +
                     ": a file vs not found); it comes with attn: git checkout " + relative(paths, paths.test(e)) +
                     " restores it");

  // Build this exercise's program and nothing else: one small file to compile, one link.
  out << head << "building " << file << "\n";
  out.flush();
  if (!out) return Outcome::ReaderGone;
  // With Makefiles, `cmake --build --target T` first walks every library T depends on: about 1.2 s
  // of CPU with nothing to do. CMake's T/fast target builds T alone. That is right once T has
  // been built in full and its tests have not changed since (the libraries come from the default
  // build); otherwise, and whenever the fast build fails for a reason other than an error in the
  // learner's file, the full build runs.
  const fs::path program = paths.program(e);
  const bool fast = fs::exists(fs::path(paths.build_dir) / "Makefile") && fs::exists(program) &&
                    !newer(paths.test(e), program);
  auto build_target = [&](const std::string& target) {
    RunLimits build_limits;
    build_limits.timeout_s = limits.build_time_limit_s;
    build_limits.memory_bytes = limits.build_memory_bytes();
    build_limits.max_processes = limits.build_max_processes;
    build_limits.gentle_stop = true;
    return run_child({paths.cmake, "--build", paths.build_dir, "--target", target}, Output::Capture, build_limits,
                     nullptr, "the build");
  };
  Child build = build_target(fast ? e.target() + "/fast" : e.target());
  if (fast && !build.timed_out && !build.too_many && build.status != 0 &&
      !error_in_file(build.output, paths.learner(e)) && !compiler_out_of_memory(build.output))
    build = build_target(e.target());
  if (build.timed_out)
    throw SetupError("the build of " + e.target() + " was stopped after " + std::to_string(limits.build_time_limit_s) +
                     " s (--build-time-limit: a build that finishes vs still running); " + file +
                     " and the build tree are as they were, so attn check " + e.name + " starts it again");
  if (build.too_many)
    throw SetupError("the build of " + e.target() + " was stopped: it had more than " +
                     std::to_string(limits.build_max_processes) +
                     " processes running at once (a build that runs one compiler at a time vs a runaway); " + file +
                     " and the build tree are as they were");
  if (build.status != 0) {
    // The compiler's messages, without make's "[ 52%] Built target ..." lines around them.
    std::ostream& err = mode == Mode::Watch ? out : std::cerr;
    std::istringstream lines(build.output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("] Built target ") == std::string::npos) err << line << "\n";
    // A known beginner mistake in the first error gets one line saying what to write instead.
    const std::string hint = compile_hint(first_compiler_error(build.output));
    if (!hint.empty()) err << report::wrap("hint: " + hint, 80, "", "  ");
    if (!passes.empty()) passes[e.number - 1] = false;
    if (compiler_out_of_memory(build.output)) {
      // The limit is per process: what ran out was one compiler (or linker), not the build.
      const std::string mib = std::to_string(limits.build_memory_mib);
      auto why = [&](const std::string& option) {
        return "the compiler ran out of the " + mib + " MiB of memory it may use (" + option +
               "): look for a template that instantiates itself without end, or a very large computation done "
               "while compiling, in " + file;
      };
      if (mode == Mode::Check) throw SetupError("the build of " + e.target() + " failed: " + why("--build-memory-limit " + mib));
      verdict("the build failed: " + why(keep("--build-memory-limit " + mib)) + ". Then " + again + ".");
      return Outcome::BuildFailed;
    }
    if (mode == Mode::Check)
      throw SetupError("the build of " + e.target() + " failed (" + file +
                       ": code that compiles vs the compiler messages above)");
    verdict("the build failed: fix the first error above and " + again + ".");
    return Outcome::BuildFailed;
  }

  // doctest's report, as it comes: which case failed, expected and actual. A program printing
  // in a loop is cut to its beginning and end.
  out << head << "running its checks\n\n";
  out.flush();
  if (!out) return Outcome::ReaderGone;
  // --no-intro: doctest's version banner says nothing to a learner. Its output goes through a
  // pipe here, so its colours are asked for when attn's own output is a terminal.
  std::vector<std::string> argv = {paths.program(e), "--no-intro=true"};
  if (&out == &std::cout && isatty(STDOUT_FILENO) == 1) argv.push_back("--force-colors=true");
  RunLimits run_limits;
  run_limits.timeout_s = limits.time_limit_s;
  run_limits.memory_bytes = limits.memory_bytes();
  run_limits.max_processes = limits.max_processes;
  const Child run = run_child(argv, Output::Capture, run_limits, &out);
  if (run.reader_gone) return Outcome::ReaderGone;
  out << "\n";
  if (!passes.empty()) passes[e.number - 1] = false;
  const std::string unchanged = " " + file + " is as you left it.";
  if (run.too_many) {
    verdict("stopped: it had more than " + std::to_string(limits.max_processes) +
            " processes running at once, where an exercise needs one. Look for fork() or system() in a loop in " +
            file + "." + unchanged);
    return Outcome::Failed;
  }
  const std::string time_limit = std::to_string(limits.time_limit_s);
  const std::string mib = std::to_string(limits.memory_mib);
  // Its memory at the limit when the clock stopped it: an allocation was refused (the next one
  // would not fit) and the program went on without ending, waiting or retrying.
  const bool stalled_at_memory = run.timed_out && limits.memory_bytes() != 0 &&
                                 run.peak_bytes >= limits.memory_bytes() / 10 * 9;
  if (stalled_at_memory) {
    verdict("stopped after " + time_limit + " s (" + keep("--time-limit " + time_limit) + "), still running, with its memory at " +
            std::to_string(run.peak_bytes >> 20) + " of the " + mib + " MiB it may use (" + keep("--memory-limit " + mib) +
            "), so an allocation was most likely refused and the program went on waiting instead of ending. Look for a tensor made with a "
            "size far too large, or one that grows in a loop, in " + file + "." + unchanged);
    return Outcome::Failed;
  }
  if (run.timed_out) {
    verdict("stopped after " + time_limit + " s (" + keep("--time-limit " + time_limit) +
            "), still running: look for a loop that never ends in " + file + "." + unchanged);
    return Outcome::Failed;
  }
  // What the program left running when it ended was stopped; the learner is told, since the
  // report above came from the program alone.
  const std::string left =
      run.left_running == 0 ? ""
      : " It left " + (run.left_running == 1 ? std::string("a process") : std::to_string(run.left_running) + " processes") +
            " running when it ended; attn stopped " + (run.left_running == 1 ? "it." : "them.");
  const bool out_of_memory = limits.memory_bytes() != 0 && run.status != 0 &&
                             run.output.find("bad_alloc") != std::string::npos;
  if (out_of_memory) {
    verdict("stopped: it asked for more than its " + std::to_string(limits.memory_mib) + " MiB of memory (" +
            keep("--memory-limit " + std::to_string(limits.memory_mib)) +
            "). Look for a tensor made with a size far too large, or one that grows in a loop, in " + file + "." +
            left + unchanged);
    return Outcome::Failed;
  }
  if (run.status > 128) {
    const int sig = run.status - 128;
    const std::string cause = crash_cause(sig);
    verdict("the program crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) + ")" +
            (cause.empty() ? ", in " + file + "." : ". " + cause + ", in " + file + ".") + left + unchanged);
    return Outcome::Failed;
  }
  const std::string cut = run.marker.empty() ? "" : " Its output was cut (see above).";
  if (run.status != 0) {
    verdict("not solved yet." + cut + left + " Read the first failure above, " +
            (mode == Mode::Watch ? "edit " + file + " and save it: each save is checked." : "edit " + file + ", and " + again + ".") +
            " Stuck? " + keep("attn hint " + e.name));
    return Outcome::Failed;
  }
  // Solved: only now is the solution worth opening, to compare.
  const std::string compare = " Compare with the solution: " + keep(relative(paths, paths.solution(e))) + ".";
  const std::string solved = "solved, every check passes." + cut + left + compare;
  const Exercise* next = nullptr;
  if (passes.empty()) {
    // Only as far as the first that does not pass: usually the very next one, so a pass costs one
    // more stat (or one short run), not a run of every exercise.
    for (std::size_t k = 1; k < all.size() && !next; ++k) {
      const Exercise& other = all[(e.number - 1 + k) % all.size()];
      if (progress(paths, other) != Progress::Passes) next = &other;
    }
  } else {
    passes[e.number - 1] = true;
    next = next_unsolved(all, passes, e.number - 1);
  }
  if (!next)
    verdict(solved + " That was the last exercise: all " +
            std::to_string(all.size()) + " pass.");
  else if (mode == Mode::Watch)
    verdict(solved);
  else
    verdict(solved + " Next: " + keep("attn check " + next->name) + " (lesson " +
            next->lesson + ")");
  return Outcome::Passed;
}

}  // namespace

int check_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out, const CheckLimits& limits) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    require_build(paths);
    // "Next:" skips the exercises that already pass. Running their programs takes a moment, so
    // it is done only when this one passes, after its check.
    std::vector<bool> passes;  // empty: found by check_one only if this one passes
    const Outcome o = check_one(paths, all, e, out, limits, Mode::Check, passes);
    // A reader that left (attn check NAME | head) ends the check quietly, like a lesson: the
    // program is stopped and nothing more is said. main() sees EPIPE and exits 0.
    if (o == Outcome::ReaderGone) {
      errno = EPIPE;
      return 0;
    }
    return o == Outcome::Passed ? 0 : 1;
  });
}

std::string crash_cause(int signal) {
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
      return "Often an index past the end of a tensor (one made with the wrong shape, or a loop bound off by "
             "one), or a reference to a tensor that no longer exists";
    case SIGFPE:
      return "An arithmetic fault: an integer division or remainder by zero (a size or a count that came out 0)";
    case SIGABRT:
      return "The program stopped itself: an exception nothing caught, a failed assert, or the C++ library "
             "finding memory written past a tensor's end";
    case SIGILL:
      return "An illegal instruction: a trap the compiler put where code must never run (some compilers "
             "put one at the end of a function that should return a value and has no return)";
    default:
      return "";
  }
}

int print_hint(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    out << wrap_keeping("Hint for " + e.name + ": " + e.writes, "", "  ")
        << "Edit " << relative(paths, paths.learner(e)) << " (lesson " << e.lesson << ").\n\n"
        << report::wrap(e.hint, 80, "  ", "  ") << "\nCheck it with: attn check " << e.name << "\n";
    return 0;
  });
}

// ---- attn reset ---------------------------------------------------------------------------

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SetupError("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes through a temporary file and a rename, so an editor (or attn watch) never reads half a file.
void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".attn-tmp";
  {
    std::ofstream outf(tmp, std::ios::binary | std::ios::trunc);
    if (!outf || !(outf << text) || !outf.flush()) throw SetupError("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw SetupError("cannot replace " + path.string() + ": " + ec.message());
}

}  // namespace

int reset_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    const std::string file = relative(paths, paths.learner(e));
    if (!fs::exists(paths.shipped(e)))
      throw SetupError("the shipped copy of " + e.file + " is missing (" + paths.shipped(e) + ": the file vs not found)");
    const std::string shipped = read_all(paths.shipped(e));
    if (fs::exists(paths.learner(e)) && read_all(paths.learner(e)) == shipped) {
      out << "attn reset " << e.name << ": " << file << " is already as shipped; nothing to do.\n";
      return 0;
    }
    // The learner's version is kept, not thrown away: a reset may be a mistake.
    std::string kept;
    if (fs::exists(paths.learner(e))) {
      const fs::path dir = fs::path(paths.build_dir) / "exercise-resets";
      std::error_code ec;
      fs::create_directories(dir, ec);
      const fs::path copy = dir / e.file;
      write_file(copy, read_all(paths.learner(e)));
      kept = " Your version is saved as " + relative(paths, copy.string()) + ".";
    }
    write_file(paths.learner(e), shipped);
    out << wrap_keeping("attn reset " + e.name + ": " + file + " is back as shipped, with its // TODO." + kept +
                            " Check it with " + keep("attn check " + e.name) + ".",
                        "", "  ");
    return 0;
  });
}

// ---- attn watch ---------------------------------------------------------------------------

namespace {

// Ctrl-C and SIGTERM while attn watch waits: the handler only writes one byte to a pipe the wait
// polls, so the loop ends by itself, says where the learner stands and returns. (While a check
// runs, run_child's own handler stops the child's group first.)
int g_stop_pipe[2] = {-1, -1};
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void note_stop(int sig) {
  g_stop_signal = sig;
  const char byte = 1;
  if (g_stop_pipe[1] >= 0) (void)!write(g_stop_pipe[1], &byte, 1);
}

class StopSignals {
 public:
  StopSignals() {
    if (pipe(g_stop_pipe) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));
    for (int fd : g_stop_pipe) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    g_stop_signal = 0;
    old_int_ = std::signal(SIGINT, note_stop);
    old_term_ = std::signal(SIGTERM, note_stop);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
    for (int& fd : g_stop_pipe) {
      close(fd);
      fd = -1;
    }
  }
  // run_child installs its own handlers for the length of a check; these come back after it.
  void reinstall() {
    std::signal(SIGINT, note_stop);
    std::signal(SIGTERM, note_stop);
  }
  int fd() const { return g_stop_pipe[0]; }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*old_int_)(int) = SIG_DFL;
  void (*old_term_)(int) = SIG_DFL;
};

// The learner files' directory, watched with inotify: editors save in place (close after write)
// or write a new file and rename it over the old one (moved to); both count as a save.
class SaveWatch {
 public:
  explicit SaveWatch(const std::string& dir) {
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) throw SetupError(std::string("inotify: ") + std::strerror(errno));
    if (inotify_add_watch(fd_, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0)
      throw SetupError("cannot watch " + dir + ": " + std::strerror(errno));
  }
  ~SaveWatch() { close(fd_); }
  SaveWatch(const SaveWatch&) = delete;
  SaveWatch& operator=(const SaveWatch&) = delete;
  int fd() const { return fd_; }
  // Reads the pending events; true when one names `file`.
  bool saved(const std::string& file) {
    bool hit = false;
    alignas(inotify_event) char buf[8192];
    for (;;) {
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
        if (ev->len && file == ev->name) hit = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
    return hit;
  }

 private:
  int fd_ = -1;
};

std::string progress_bar(const std::vector<bool>& passes) {
  const std::size_t done = static_cast<std::size_t>(std::count(passes.begin(), passes.end(), true));
  std::string bar = "[";
  for (bool p : passes) bar += p ? '#' : '-';
  return bar + "] " + std::to_string(done) + " of " + std::to_string(passes.size()) + " pass";
}

}  // namespace

int watch_exercises(const ExercisePaths& paths, const std::string& start, std::ostream& out, const CheckLimits& limits) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise* current = start.empty() ? nullptr : &lookup(all, start);
    require_build(paths);
    const bool tty_out = &out == &std::cout && isatty(STDOUT_FILENO) == 1;
    const bool tty_in = isatty(STDIN_FILENO) == 1;
    StopSignals stop;
    SaveWatch saves(paths.source_dir + "/lessons/exercises");

    std::vector<bool> passes = passing(paths, all);
    if (!current) current = next_unsolved(all, passes, all.size() - 1);
    if (!current) {
      out << progress_bar(passes) << ". Every exercise passes: nothing to watch.\n";
      return 0;
    }
    bool stdin_open = true;
    std::string typed;  // what was read from stdin and not yet a whole line
    const std::string keys = tty_in ? " Type h and Enter for the hint, n to skip to the next, q to quit (or Ctrl-C); "
                                      "Enter alone checks it now."
                                    : " Ctrl-C (SIGINT) or SIGTERM ends it.";
    bool recheck = true;
    for (;;) {
      const std::string file = relative(paths, paths.learner(*current));
      if (recheck) {
        // On a terminal each check starts on a clean screen, so its first error is at the top.
        // A pass is not followed by a check (below), so "solved" and the solution's path stay
        // on screen until the learner saves the next file.
        if (tty_out) out << "\033[H\033[2J";
        out << "attn watch: " << progress_bar(passes) << ". Now: " << current->name << " (lesson "
            << current->lesson << "), " << file << "\n";
        out.flush();
        const Outcome o = check_one(paths, all, *current, out, limits, Mode::Watch, passes);
        stop.reinstall();
        if (o == Outcome::ReaderGone) {
          errno = EPIPE;
          return 0;
        }
        if (o == Outcome::Passed) {
          const Exercise* next = next_unsolved(all, passes, current->number - 1);
          if (!next) {
            out << "attn watch: " << progress_bar(passes) << ". That was the last exercise.\n";
            return 0;
          }
          // The next exercise is announced, not checked: its stub fails as shipped, and that
          // report (a compiler's errors, a page of failed checks) would scroll the "solved" line
          // and the solution's path off a 30-row terminal. Its check runs when the learner saves
          // its file, or presses Enter.
          current = next;
          out << "attn watch: moving on to " << next->name << ".\n\n"
              << "attn watch: " << progress_bar(passes) << ". Now: " << current->name << " (lesson "
              << current->lesson << "), " << relative(paths, paths.learner(*current)) << "\n"
              << report::wrap("you write " + current->writes + ".", 80, "  ", "  ")
              << wrap_keeping("attn watch: " + progress_bar(passes) + ". Waiting for you to save " +
                                  relative(paths, paths.learner(*current)) + ": its checks run then." + keys,
                              "", "  ");
          out.flush();
          recheck = false;
          continue;
        }
        out << wrap_keeping("attn watch: " + progress_bar(passes) + ". Waiting for you to save " + file + "." + keys,
                            "", "  ");
        out.flush();
        recheck = false;
      }
      pollfd fds[3] = {{stop.fd(), POLLIN, 0}, {saves.fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
      const int n = poll(fds, stdin_open ? 3 : 2, -1);
      if (n < 0 && errno != EINTR) throw SetupError(std::string("poll: ") + std::strerror(errno));
      if (g_stop_signal) {
        out << "\n"
            << wrap_keeping("attn watch: stopped. " + progress_bar(passes) + "; " + keep("attn watch") +
                                " starts again at the first that does not.",
                            "", "  ");
        out.flush();
        return 128 + static_cast<int>(g_stop_signal);
      }
      if (n <= 0) continue;
      if (fds[1].revents & POLLIN) {
        if (saves.saved(current->file)) {
          // An editor may write several times for one save: let it finish, then check once.
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          saves.saved(current->file);
          recheck = true;
        }
      }
      if (stdin_open && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
        // Read the descriptor itself (std::cin would keep a second line in its buffer, out of
        // sight of poll) and act on each whole line.
        char buf[256];
        const ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          // End of input: on a terminal that is Ctrl-D, a way to quit; from a pipe or /dev/null
          // it only means no commands will come, and the watch goes on.
          if (tty_in) return 0;
          stdin_open = false;
          continue;
        }
        typed.append(buf, static_cast<std::size_t>(got));
      }
      for (std::size_t nl; (nl = typed.find('\n')) != std::string::npos;) {
        std::string line = typed.substr(0, nl);
        typed.erase(0, nl + 1);
        line = trim(line);
        if (line == "q") return 0;
        if (line == "h") {
          out << "\n" << report::wrap(current->hint, 80, "  ", "  ") << "\n";
          out.flush();
        } else if (line == "n") {
          const Exercise* next = next_unsolved(all, passes, current->number - 1);
          if (next && next != current) {
            current = next;
            recheck = true;
          } else {
            out << "attn watch: " << current->name << " is the only exercise left.\n";
          }
        } else if (line.empty()) {
          recheck = true;  // Enter: check it now, without a save
        } else {
          out << "attn watch: h (hint), n (next), q (quit), Enter (check now).\n";
        }
        out.flush();
      }
    }
  });
}

}  // namespace attn::cli
