// Reading the tensors a learner hands in (--input FILE, --weights DIR, --states DIR) into
// LessonOptions. Loading is strict (io/npy.hpp, io/text_matrix.hpp); a refusal becomes a
// UsageError naming the option and the file.
//
// Non-finite values (NaN, inf, -inf, and text values that overflow float32) are refused, naming
// the file, the first position and the value, unless `allow_nonfinite` (--allow-nonfinite); then
// nonfinite_notes() says where they are, for the lesson's first stage.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/shared_options.hpp"

namespace attn::cli {

// Refuses an --input shape `lesson` cannot take (lesson_kit's check_input_shape for the token
// lessons, check_source_shape for the encoder-decoder ones). `complete` is false while a text
// file is still being read: then `shape` is its rows so far and only the size limits apply.
void check_declared_input(const LessonEntry& lesson, const LessonOptions& opts, const Shape& shape,
                          const std::string& source, bool complete);
using DeclaredCheck = std::function<void(const Shape& shape, const std::string& source, bool complete)>;

// .npy, or a text matrix (.csv, .tsv, .txt). `check` (usually check_declared_input) sees the
// shape an .npy header declares before the data is read, and a text file's shape after every
// row, so a file too large for the lesson is refused before it is read whole.
ExternalTensor load_input(const std::string& path, bool allow_nonfinite = false, const DeclaredCheck& check = {});

// The files `names` (each + ".npy") that exist in `dir` are loaded into `into`, keyed by name;
// the lesson says which it needs and refuses a missing one with its expected shape. A directory
// holding none of them is refused here, listing them, and so is a file with no values (a zero
// axis). `flag` is "--weights" or "--states". Each file's declared shape must pass check_size
// (held, and printed unless `shapes_only`) before its data is read.
void load_npy_dir(const std::string& flag, const std::string& dir, const std::vector<std::string>& names,
                  std::map<std::string, ExternalTensor>& into, bool allow_nonfinite = false, bool shapes_only = false);

// --weights DIR for `lesson`: refuses a file another lesson takes and this one would ignore
// (W_query_bias.npy given to causal: "biases are taken by the heads lesson").
void refuse_unused_weights(const LessonEntry& lesson, const std::string& dir);

// The readers of --input, --weights and --states for `lesson` (which must outlive them), as the
// rows of lesson_kit/shared_options.hpp call them: the functions above, each into its field.
OptionFiles option_files(const LessonEntry& lesson);

// Refuses `t` when it holds a NaN or an infinity (names its source, the first index and value).
void require_finite(const ExternalTensor& t);

// "--input x.npy holds 2 non-finite values: nan at [0, 1], inf at [2, 0]." for every loaded
// tensor that has any; empty when none has.
std::vector<std::string> nonfinite_notes(const LessonOptions& opts);

}  // namespace attn::cli
