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

// The lessons an every-lesson loop visits: all of them, except under the sanitizers
// (ATTN_SANITIZED, which tests/cli/CMakeLists.txt defines in a -DATTN_SANITIZE=ON build) for a
// loop whose runs take code paths the sanitizer suite already takes elsewhere (every lesson's
// default run is golden/<name>, run there too). Such a loop visits a third:
// the lessons whose place in `names` is `third` modulo 3, so that loops given 0, 1 and 2 share
// the lessons out between them. The Release suite runs every loop whole (docs/testing.md,
// "CI time").
inline std::vector<std::string> all_or_a_third(const std::vector<std::string>& names, std::size_t third) {
#ifdef ATTN_SANITIZED
  std::vector<std::string> kept;
  for (std::size_t i = third % 3; i < names.size(); i += 3) kept.push_back(names[i]);
  return kept;
#else
  (void)third;
  return names;
#endif
}

}  // namespace attn::testing
