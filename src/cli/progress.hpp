// The progress bar of a training run, on standard error.
//
// Drawn only when standard error is a terminal and only once the run has lasted half a second:
// a quick run, a pipe or a file sees nothing at all on stderr, so saved output and test runs stay
// clean. The bar redraws one line in place (carriage return) and is erased when the run ends or
// fails, before any error message is printed.
//
//   [##########..........]  200/400 steps  0.6 s
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

namespace attn::cli {

// A run shorter than this shows no bar.
constexpr double kProgressDelaySeconds = 0.5;

class ProgressBar {
 public:
  using Clock = std::function<double()>;  // seconds since some fixed point

  // `enabled`: standard error is a terminal (stderr_is_terminal()). The clock is injectable for tests.
  ProgressBar(std::ostream& err, bool enabled, Clock clock = steady_seconds);
  ~ProgressBar();  // erases the bar, so an error message starts on a clean line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of `total` steps are finished.
  void update(std::size_t done, std::size_t total);
  // Erases the bar if one is drawn; later updates may draw it again.
  void finish();
  bool drawn() const { return drawn_; }

  static double steady_seconds();

 private:
  std::ostream& err_;
  bool enabled_;
  Clock clock_;
  double start_;
  double last_draw_ = -1.0;
  bool drawn_ = false;
};

// The bar's text for `done` of `total` after `seconds`, `cells` cells wide (no carriage return).
std::string progress_line(std::size_t done, std::size_t total, double seconds, std::size_t cells = 20);

}  // namespace attn::cli
