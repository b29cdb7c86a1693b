// A matrix typed or exported as text: one row per line, values separated by commas or white
// space (.csv, .tsv, .txt). Strict: every value must parse whole, every row must have the same
// number of values, and the file must hold at least one value. Blank lines and lines starting
// with '#' are skipped.
#pragma once

#include <string>

#include "io/npy.hpp"

namespace attn {

// Throws NpyError (the same "path: what" form as the .npy reader) on anything else.
NpyArray read_text_matrix(const std::string& path);
NpyArray parse_text_matrix(const std::string& text, const std::string& path_for_errors);

}  // namespace attn
