// What a run stopped by a signal removes: the staging entries of its outputs (staging.hpp) and the
// directories it made for them, so that Ctrl-C, SIGTERM, SIGHUP or SIGQUIT during a large --dump,
// --npz, --svg or --html write leaves what a failed run leaves: nothing.
//
// Each entry is registered before it exists on disk and forgotten once it has been renamed into
// place or removed. The handler touches only a fixed table (no allocation, no locks) and removes
// its entries with async-signal-safe calls (unlink, rmdir, open, getdents64, unlinkat), newest
// first, then lets the signal end attn with its default action, so the exit status is the
// signal's (130 for Ctrl-C in a shell). A signal handled on one of OpenBLAS's threads is passed to
// the main thread, the only one that writes outputs. SIGKILL and a power cut cannot be caught:
// the next run writing the same target removes what they left (staging.hpp,
// remove_stale_staging).
#pragma once

#include <signal.h>

#include <cstddef>
#include <string>

namespace attn::report {

// Entries the table holds at once: every --svg picture of a run (svg_sink.hpp, kMaxSvgFiles) plus
// the dump, the archive, the page and the directories made for them, with room to spare.
inline constexpr std::size_t kMaxRemovedOnSignal = 128;

// Installs the handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT. A signal that was ignored when attn
// started (nohup, a background job of a script) stays ignored. Call once, early in main.
void remove_staging_on_signals();

// One registered entry; forgotten (not removed) when destroyed or by forget(). Movable.
class RemovedOnSignal {
 public:
  RemovedOnSignal() = default;
  // `path`: a file, or a directory of files (and directories of files), this run is writing.
  // Throws std::runtime_error when the table is full or the path too long to register.
  static RemovedOnSignal tree(const std::string& path);
  // The directories from `innermost` up to `outermost` (which contains it, or is it), each
  // removed only if empty: the parents a run made for its output.
  static RemovedOnSignal empty_dirs(const std::string& outermost, const std::string& innermost);
  RemovedOnSignal(RemovedOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  RemovedOnSignal& operator=(RemovedOnSignal&& other) noexcept;
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;
  ~RemovedOnSignal() { forget(); }
  void forget();

 private:
  explicit RemovedOnSignal(int slot) : slot_(slot) {}
  int slot_ = -1;
};

// Holds SIGINT, SIGTERM, SIGHUP and SIGQUIT back while it lives: the outputs move into place (a
// few renames) as one step, so a signal then ends attn after all of them landed, not between two.
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace attn::report
