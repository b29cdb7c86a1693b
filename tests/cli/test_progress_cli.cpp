// The training progress bar as a learner meets it: `attn lesson learn-heads` with stderr on a
// (pseudo-)terminal draws the bar in place and clears it; with stderr on a pipe nothing at all is
// written there. The bar's own logic is tests/cli/test_progress.cpp.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <string>

#include "cli/pty.hpp"
#include "cli/process.hpp"

namespace {
const std::string kAttn = ATTN_BINARY;
}

TEST_CASE("stderr on a terminal: the bar is drawn on one line, reaches the last step and is cleared") {
  // stdout to /dev/null, so that everything the terminal shows comes from stderr. 2000 steps take
  // several seconds on any machine, well past the half second before the bar appears; under the
  // sanitizers, which run the same code five to ten times slower, 400 steps do.
#ifdef ATTN_SANITIZED
  const std::string steps = "400";
#else
  const std::string steps = "2000";
#endif
  attn::testing::PtyRun run({"/bin/sh", "-c", "'" + kAttn + "' lesson learn-heads --steps " + steps + " > /dev/null"},
                            {"PATH=/usr/bin:/bin", "TERM=xterm"});
  const int status = run.finish(120000);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string& seen = run.seen();
  CAPTURE(seen.substr(0, 200));
  CHECK(seen.find("\r[") != std::string::npos);
  CHECK(seen.find(steps + "/" + steps + " steps") != std::string::npos);
  CHECK(seen.find('\n') == std::string::npos);  // redrawn in place, never a new line
  REQUIRE(seen.size() >= 4);
  CHECK(seen.substr(seen.size() - 4) == "\r\x1b[K");  // and the line is left clean
}

TEST_CASE("stderr on a pipe: nothing at all on stderr, however long the run") {
  const auto r = attn::testing::run_shell("'" + kAttn + "' lesson learn-heads > /dev/null", 120);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}
