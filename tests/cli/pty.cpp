#include "pty.hpp"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace attn::testing {

PtyRun::PtyRun(const std::vector<std::string>& argv, const std::vector<std::string>& env, unsigned short columns,
               unsigned short rows) {
  start(argv, env, columns, rows, false);
}

PtyRun::PtyRun(const std::vector<std::string>& argv, const std::vector<std::string>& env, JobControl,
               unsigned short columns, unsigned short rows) {
  start(argv, env, columns, rows, true);
}

void PtyRun::start(const std::vector<std::string>& argv, const std::vector<std::string>& env, unsigned short columns,
                   unsigned short rows, bool job_control) {
  winsize ws{};
  ws.ws_col = columns;
  ws.ws_row = rows;
  int pipe_fds[2] = {-1, -1};
  if (job_control && pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  pid_ = forkpty(&master_, nullptr, nullptr, &ws);
  if (pid_ < 0) throw std::runtime_error("forkpty failed");
  if (pid_ == 0) {
    std::vector<char*> args, vars;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : env) vars.push_back(const_cast<char*>(e.c_str()));
    vars.push_back(nullptr);
    if (job_control) {
      close(pipe_fds[0]);
      const pid_t job = fork();
      if (job == 0) {
        // As a shell's child does: its own group, made the terminal's foreground group.
        close(pipe_fds[1]);
        setpgid(0, 0);
        signal(SIGTTOU, SIG_IGN);
        tcsetpgrp(STDIN_FILENO, getpid());
        signal(SIGTTOU, SIG_DFL);
        execve(args[0], args.data(), vars.data());
        _exit(127);
      }
      setpgid(job, job);
      signal(SIGTTOU, SIG_IGN);
      tcsetpgrp(STDIN_FILENO, job);
      if (write(pipe_fds[1], &job, sizeof job) != sizeof job) _exit(126);
      for (;;) {
        int st = 0;
        if (waitpid(job, &st, WUNTRACED | WCONTINUED) != job) _exit(126);
        const char event = WIFSTOPPED(st) ? 'S' : WIFCONTINUED(st) ? 'C' : 'E';
        if (write(pipe_fds[1], &event, 1) != 1) _exit(126);
        if (event != 'E') continue;
        if (WIFSIGNALED(st)) {  // end as the program did, so the test sees the same status
          signal(WTERMSIG(st), SIG_DFL);
          raise(WTERMSIG(st));
        }
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
      }
    }
    execve(args[0], args.data(), vars.data());
    _exit(127);
  }
  if (job_control) {
    close(pipe_fds[1]);
    events_ = pipe_fds[0];
    pid_t job = -1;
    if (read(events_, &job, sizeof job) != sizeof job) throw std::runtime_error("no job pid");
    job_ = job;
  }
}

char PtyRun::next_event(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    pollfd p[2] = {{events_, POLLIN, 0}, {master_, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || poll(p, 2, static_cast<int>(left)) <= 0) return 0;
    if (p[1].revents & POLLIN) read_some(0);
    if (p[0].revents & POLLIN) {
      char c = 0;
      return read(events_, &c, 1) == 1 ? c : 0;
    }
    if (p[0].revents & (POLLHUP | POLLERR)) return 0;
  }
}

PtyRun::~PtyRun() {
  if (!reaped_ && pid_ > 0) {
    if (job_ > 0) kill(job_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (master_ >= 0) close(master_);
  if (events_ >= 0) close(events_);
}

bool PtyRun::read_some(int timeout_ms) {
  pollfd p{master_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return false;
  char buf[4096];
  const ssize_t n = read(master_, buf, sizeof buf);
  if (n <= 0) return false;  // EIO: the program closed its side
  seen_.append(buf, static_cast<std::size_t>(n));
  return true;
}

std::size_t PtyRun::wait_for(const std::string& text, std::size_t from, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const std::size_t at = seen_.find(text, from);
    if (at != std::string::npos) return at;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !read_some(static_cast<int>(left))) {
      const std::size_t late = seen_.find(text, from);
      return late;
    }
  }
}

void PtyRun::send(const std::string& keys) {
  if (write(master_, keys.data(), keys.size()) != static_cast<ssize_t>(keys.size()))
    throw std::runtime_error("could not write to the pty");
}

int PtyRun::finish(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  for (;;) {
    while (read_some(20)) {
    }
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      while (read_some(20)) {
      }
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      reaped_ = true;
      return -1;
    }
  }
}

void PtyRun::kill_with(int sig) { kill(pid_, sig); }

void PtyRun::resize(unsigned short columns, unsigned short rows) {
  winsize ws{};
  ws.ws_col = columns;
  ws.ws_row = rows;
  if (ioctl(master_, TIOCSWINSZ, &ws) != 0) throw std::runtime_error("could not resize the pty");
}

termios PtyRun::settings() const {
  termios t{};
  tcgetattr(master_, &t);
  return t;
}

}  // namespace attn::testing
