// The training progress bar (see progress.hpp).
#include "cli/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace attn::cli {

double ProgressBar::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ProgressBar::ProgressBar(std::ostream& err, bool enabled, Clock clock)
    : err_(err), enabled_(enabled), clock_(std::move(clock)), start_(clock_()) {}

ProgressBar::~ProgressBar() { finish(); }

std::string progress_line(std::size_t done, std::size_t total, double seconds, std::size_t cells) {
  const std::size_t filled = total ? std::min(cells, done * cells / total) : cells;
  char tail[96];
  std::snprintf(tail, sizeof tail, "]  %zu/%zu steps  %.1f s", done, total, seconds);
  return "[" + std::string(filled, '#') + std::string(cells - filled, '.') + tail;
}

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (!enabled_) return;
  const double now = clock_(), elapsed = now - start_;
  if (elapsed < kProgressDelaySeconds) return;
  // About 20 redraws a second are plenty, and the last step is always drawn.
  if (drawn_ && done < total && now - last_draw_ < 0.05) return;
  err_ << "\r" << progress_line(done, total, elapsed) << "\x1b[K" << std::flush;
  last_draw_ = now;
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  err_ << "\r\x1b[K" << std::flush;  // back to the start of the line, and clear it
  drawn_ = false;
}

}  // namespace attn::cli
