// The learner's workspace: the working copy of each exercise, lessons/exercises/<file>, which git
// ignores (lessons/exercises/.gitignore). The tree holds one pristine stub per exercise,
// lessons/exercises/shipped/<file>; the working copy is written from it the first time an
// exercise command needs it (and when CMake configures, since the exercise programs are built
// from it), and again by attn reset. docs/exercises.md, "Your files", says why it lives there.
//
// Beside the copies, lessons/exercises/.base/<file> keeps the stub each copy was written from, so
// that a stub changed by a later `git pull` is noticed: an untouched copy is brought up to date
// silently, an edited one is left alone and named (attn reset NAME then writes the new stub).
#pragma once

#include <string>
#include <vector>

#include "cli/exercise_table.hpp"

namespace attn::cli {

// The whole file, or SetupError("cannot read ...").
std::string read_all(const std::string& path);
// Writes through a temporary file and a rename, so an editor (or attn watch) never reads half a
// file. SetupError when it cannot.
void write_file(const std::string& path, const std::string& text);

// Makes sure e's working copy is there and from the current stub: writes it from the stub when it
// is missing, and rewrites it when it is untouched and the stub has changed since. Returns a
// sentence for the learner when their edited copy comes from an older stub, "" otherwise. Does
// nothing when the stub itself is missing (check_one and attn reset say so).
std::string prepare_copy(const ExercisePaths& paths, const Exercise& e);

// prepare_copy for every exercise; the sentences, one per line.
std::string prepare_workspace(const ExercisePaths& paths, const std::vector<Exercise>& all);

// Writes the stub over the working copy (attn reset), and notes it as the copy's base.
void write_copy_from_stub(const ExercisePaths& paths, const Exercise& e);

}  // namespace attn::cli
