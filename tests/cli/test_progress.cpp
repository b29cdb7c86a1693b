// The training progress bar (src/cli/progress.*, compiled in: the CLI has no library): nothing
// unless stderr is a terminal and the run has lasted half a second, a bar that redraws one line,
// and a clean line left behind when the run ends or fails.
#include <doctest/doctest.h>

#include <sstream>

#include "cli/progress.hpp"

using attn::cli::ProgressBar;
using attn::cli::progress_line;

namespace {

struct FakeClock {
  double now = 100.0;
  ProgressBar::Clock fn() {
    return [this] { return now; };
  }
};

}  // namespace

TEST_CASE("progress_line fills its cells in proportion and says how far and how long") {
  CHECK(progress_line(0, 400, 0.0) == "[....................]  0/400 steps  0.0 s");
  CHECK(progress_line(200, 400, 0.61) == "[##########..........]  200/400 steps  0.6 s");
  CHECK(progress_line(400, 400, 1.25, 4) == "[####]  400/400 steps  1.2 s");
}

TEST_CASE("no bar when stderr is not a terminal, however long the run") {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressBar bar(err, false, clock.fn());
    clock.now += 5.0;
    bar.update(10, 20);
    CHECK_FALSE(bar.drawn());
  }
  CHECK(err.str().empty());
}

TEST_CASE("no bar for a run shorter than half a second") {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressBar bar(err, true, clock.fn());
    for (std::size_t i = 1; i <= 100; ++i) {
      clock.now += 0.004;  // 0.4 s in all
      bar.update(i, 100);
    }
  }
  CHECK(err.str().empty());
}

TEST_CASE("a long run on a terminal redraws one line, then erases it") {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressBar bar(err, true, clock.fn());
    clock.now += 0.6;
    bar.update(30, 100);
    CHECK(bar.drawn());
    CHECK(err.str() == "\r" + progress_line(30, 100, 0.6) + "\x1b[K");
    clock.now += 0.01;
    bar.update(31, 100);  // too soon after the last draw: skipped
    CHECK(err.str().find("31/100") == std::string::npos);
    clock.now += 0.1;
    bar.update(100, 100);
    CHECK(err.str().find("100/100 steps") != std::string::npos);
    CHECK(err.str().find('\n') == std::string::npos);  // one line, redrawn in place
  }
  // Destroyed (the run ended, or threw): the line is cleared before anything else is printed.
  const std::string s = err.str();
  CHECK(s.substr(s.size() - 4) == "\r\x1b[K");
}
