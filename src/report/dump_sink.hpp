// --dump DIR: every tensor a lesson shows as a float32 .npy file, plus manifest.json.
// Everything is written into a temporary directory beside DIR and renamed to DIR at the end,
// so a run that fails half-way leaves nothing behind. Missing parents of DIR are created (and
// removed again if the dump fails); a previous dump in DIR is replaced in one atomic swap, as
// re-running a notebook cell replaces its output.
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::report {

// Refuses a DIR that cannot become the dump (exists and is neither an empty directory nor a dump
// attn wrote, or the nearest existing ancestor is not a directory): throws std::runtime_error
// with the reason. Called before anything is written.
void check_dump_target(const std::string& dir);

// Writes the whole dump of `report` to `dir` atomically (see above).
void write_dump(const Report& report, const std::string& command, const std::string& dir);

}  // namespace attn::report
