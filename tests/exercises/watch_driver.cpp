// attn watch on a scratch copy of the exercise layout, for test_exercises_cli: the attn binary
// always watches the source tree it was configured from, and a test must never touch the
// learner's own files. This runs the same watch_exercises that `attn watch` runs, with the paths
// given on the command line, as its own process (so a test can reach it through a pipe or a
// pseudo-terminal and send it Ctrl-C).
//
// watch_driver SOURCE_DIR BUILD_DIR BIN_DIR CMAKE [NAME]
#include <csignal>
#include <iostream>
#include <string>

#include "cli/exercises.hpp"

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    std::cerr << "usage: watch_driver SOURCE_DIR BUILD_DIR BIN_DIR CMAKE [NAME]\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // as attn's main does
  attn::cli::ExercisePaths paths;
  paths.source_dir = argv[1];
  paths.build_dir = argv[2];
  paths.bin_dir = argv[3];
  paths.cmake = argv[4];
  attn::cli::CheckLimits limits;
  limits.time_limit_s = 20;
  return attn::cli::watch_exercises(paths, argc == 6 ? argv[5] : "", std::cout, limits);
}
