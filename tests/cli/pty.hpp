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

  const std::string& seen() const { return seen_; }
  // The terminal's settings now (they are the pty's, so they outlive the program).
  termios settings() const;
  pid_t pid() const { return pid_; }

 private:
  bool read_some(int timeout_ms);
  int master_ = -1;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string seen_;
};

}  // namespace attn::testing
