// A matrix typed or exported as text: one row per line, values separated by a comma, a semicolon
// or a tab (each with optional spaces around it), or by spaces alone (.csv, .tsv, .txt).
// Strict: every value must parse whole as a number, an empty field (`1,,3`, `1,2,`) is refused
// rather than skipped, every row must have the same number of values, and the file must hold at
// least one value. Blank lines and lines starting with '#' are skipped; a UTF-8 byte-order mark
// at the start of the file is ignored. A value refused is quoted shortened, its control and
// non-ASCII bytes escaped (\x1b), so that an error stays one readable line.
//
// Values are read as float32 (strtof, correctly rounded): a value too small for float32 becomes
// the float32 it rounds to (1e-320 -> 0, 1e-40 -> a subnormal), as np.float32 does. A value too
// large (1e39, 0x1p302) overflows to inf, and nan / inf are non-finite: all three are refused,
// naming the line, the column and the text, unless `allow_nonfinite` (then they are kept).
#pragma once

#include <cstddef>
#include <string>

#include "io/npy.hpp"

namespace attn {

// Largest text file read (bytes), checked before reading it.
constexpr std::size_t kTextMaxBytes = std::size_t{256} << 20;

// Throws NpyError (the same "path: what" form as the .npy reader) on anything else.
// The file is read a chunk at a time and the read stops at the first byte that cannot be part
// of a number, a separator or a comment (a NUL, a control byte, a quote). `check`, when given,
// is called with (rows read so far, columns) after every row, so a lesson's size limit stops the
// read at the row that crosses it; it must refuse only what more rows would not make acceptable.
NpyArray read_text_matrix(const std::string& path, bool allow_nonfinite = false, const ShapeCheck& check = {});
NpyArray parse_text_matrix(const std::string& text, const std::string& path_for_errors, bool allow_nonfinite = false);

// `text` for an error message: at most `limit` characters (then "..."), control bytes, quotes,
// backslashes and bytes above 0x7e escaped, in single quotes.
std::string quoted_for_message(const std::string& text, std::size_t limit = 24);

}  // namespace attn
