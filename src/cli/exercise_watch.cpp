#include "cli/exercise_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ostream>
#include <sstream>
#include <thread>

#include "cli/exercise_workspace.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

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
    // First use: the working copies, so that the directory and the files watched are there.
    const std::string notes = prepare_workspace(paths, all);
    SaveWatch saves(paths.source_dir + "/lessons/exercises");

    std::vector<bool> passes = passing(paths, all);
    if (!current) current = next_unsolved(all, passes, all.size() - 1);
    if (!current) {
      out << progress_bar(passes) << ". Every exercise passes: nothing to watch.\n";
      return 0;
    }
    std::istringstream note_lines(notes);
    for (std::string note; std::getline(note_lines, note);) out << wrap_keeping(note, "", "  ");
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
