// Runs a program on a pseudo-terminal, as if a learner typed at it: what it prints arrives as a
// terminal shows it ("\r\n" line ends), and keys are sent one write at a time. For --step and the
// colour decisions, which depend on a real terminal and cannot be tested through pipes.
#pragma once

#include <sys/types.h>
#include <termios.h>

#include <string>
#include <vector>

namespace attn::testing {

class PtyRun {
 public:
  // argv[0] is the program path; `env` is its whole environment ("NAME=value").
  PtyRun(const std::vector<std::string>& argv, const std::vector<std::string>& env, unsigned short columns = 80,
         unsigned short rows = 40);
  // With job control, as a shell runs a command: the program runs in its own foreground process
  // group under a small parent that plays the shell (a session leader's own group is orphaned,
  // and Linux discards Ctrl-Z's SIGTSTP there). That parent reports the program's stops.
  struct JobControl {};
  PtyRun(const std::vector<std::string>& argv, const std::vector<std::string>& env, JobControl,
         unsigned short columns = 80, unsigned short rows = 24);
  ~PtyRun();
  PtyRun(const PtyRun&) = delete;
  PtyRun& operator=(const PtyRun&) = delete;

  // Reads until `text` appears at or after byte `from` of everything printed so far; returns its
  // position, or std::string::npos after `timeout_ms` (or when the program closed the terminal).
  std::size_t wait_for(const std::string& text, std::size_t from = 0, int timeout_ms = 20000);
  void send(const std::string& keys);
  // Waits for the program to end, reading what it still prints; the raw wait status, or -1 on a
  // timeout (the program is then killed).
  int finish(int timeout_ms = 20000);
  void kill_with(int sig);
  // A new window size, as when the learner resizes the terminal (the program gets SIGWINCH).
  void resize(unsigned short columns, unsigned short rows);

  const std::string& seen() const { return seen_; }
  // The terminal's settings now (they are the pty's, so they outlive the program).
  termios settings() const;
  pid_t pid() const { return pid_; }
  // With JobControl: the program's own pid, and the next change the shell saw: 'S' stopped,
  // 'C' continued, 'E' ended, or 0 after `timeout_ms`. Output is read meanwhile.
  pid_t job() const { return job_; }
  char next_event(int timeout_ms = 20000);

 private:
  bool read_some(int timeout_ms);
  void start(const std::vector<std::string>& argv, const std::vector<std::string>& env, unsigned short columns,
             unsigned short rows, bool job_control);
  int master_ = -1;
  int events_ = -1;  // the read end of the pipe from the shell-like parent
  pid_t pid_ = -1;
  pid_t job_ = -1;
  bool reaped_ = false;
  std::string seen_;
};

}  // namespace attn::testing
