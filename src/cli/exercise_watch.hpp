// attn watch [NAME]: attn check run again on each save (src/cli/exercise_commands.* does the check).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/exercise_commands.hpp"

namespace attn::cli {

// attn watch [NAME]: checks the first exercise that does not pass (or NAME), then re-checks it
// each time its file is saved (inotify on lessons/exercises/), and moves on to the next that does
// not pass once it does. Ends when every exercise passes (0), on q or Ctrl-D typed at a terminal
// (0), or on SIGINT/SIGTERM while waiting (128 + the signal, after one line of progress). Input
// that is not a terminal is read for the same commands; its end only stops the reading.
int watch_exercises(const ExercisePaths& paths, const std::string& start, std::ostream& out,
                    const CheckLimits& limits = {});

}  // namespace attn::cli
