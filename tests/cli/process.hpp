// Runs a program as a child process and collects what it printed, for tests that exercise the
// attn binary the way a learner's shell does.
#pragma once

#include <string>
#include <vector>

namespace attn::testing {

struct Result {
  int status = -1;   // exit status, or 128 + signal when killed by one
  std::string out;   // everything written to stdout
  std::string err;   // everything written to stderr
  long max_rss_kb = 0;  // the child's peak resident set size in KiB (wait4's ru_maxrss)
};

// argv[0] is the program path. Standard input is /dev/null. Killed after `timeout_s` seconds
// (a hang is a failure, reported as status 124).
Result run(const std::vector<std::string>& argv, int timeout_s = 60);

// Runs a command line through /bin/sh -c (for pipes such as `attn lesson causal | head -3`).
Result run_shell(const std::string& command, int timeout_s = 60);

}  // namespace attn::testing
