// The exercises, all of them: what main.cpp and the exercise tests include. Five parts, each
// including only those before it (docs/architecture.md, "Exercises"):
//
//   subprocess.hpp         child processes under limits; SetupError
//   exercise_table.hpp     Exercise, ExercisePaths, the table exercises.txt
//   exercise_workspace.hpp the learner's working copies, written from the stubs
//   exercise_commands.hpp  attn exercises | check | hint | reset, and check_one
//   exercise_watch.hpp     attn watch
#pragma once

#include "cli/exercise_commands.hpp"
#include "cli/exercise_table.hpp"
#include "cli/exercise_watch.hpp"
#include "cli/exercise_workspace.hpp"
#include "cli/subprocess.hpp"
