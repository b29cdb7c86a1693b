// attn verify: every lesson run over its defaults, every preset, a sweep of seeds and a sweep of
// sizes, with every check counted. A check that fails anywhere is listed with the command that
// reproduces it, and the exit status is 3 (as for a lesson whose check fails).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace attn::cli {

struct VerifyOptions {
  std::uint64_t seeds = 50;  // seeds 0 .. seeds-1 for every lesson
  std::string lesson;        // only this lesson, or "" for all
  bool list = false;         // print every check of every run, not only the failures
};

// Runs the sweep, writes the report to `out`; returns 0 when every check passed, 3 otherwise.
int verify(const VerifyOptions& options, std::ostream& out);

}  // namespace attn::cli
