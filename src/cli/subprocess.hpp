// Child processes for the exercise commands (src/cli/exercise_commands.*, exercise_watch.*): a
// build or an exercise program run without a shell, in its own process group, under a clock,
// memory and process-count limits, its output cut to its beginning and end, and everything it
// started stopped before run_child returns. Nothing here knows what an exercise is.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::cli {

// A problem with the setup (no table, no build tree, a pipe that cannot be made), not with what
// the learner typed: one line on stderr and status 1, where a bad name is a UsageError and
// status 2 (guarded() in exercise_commands.hpp turns it into that line).
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

// Runs argv[0] (an absolute path) without a shell, so paths with spaces need no quoting, in its
// own process group, within `limits`. Its output is cut to its beginning (16 KiB) and end
// (4 KiB); with `live`, the beginning is passed on as it arrives. `who` names the child in the
// cut marker ("the program", "the build"). When it returns, nothing the child started is running
// any more. A signal that ends attn while the child runs stops the child's group, then attn dies
// of it as it would have. Throws SetupError when no pipe or process can be made.
Child run_child(const std::vector<std::string>& argv, Output mode, const RunLimits& limits, std::ostream* live = nullptr,
                const std::string& who = "the program");

}  // namespace attn::cli
