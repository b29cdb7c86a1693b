// The machine-readable description of a lesson run: the lesson, the command, and for each stage
// its index, title, equation and tensors. `--dump DIR` writes it as manifest.json beside one
// .npy file per tensor; `--format json` prints it with the values inline.
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::report {

// The stable file name of a tensor in a dump: "s07_attn_weights.npy" (stage 7). Characters
// other than letters, digits and '_' become '_', runs of them collapse, and a name that occurs
// twice in one stage gets "_2", "_3", ....
std::string tensor_file_name(const Stage& stage, std::size_t item_index);

// --format json writes a tensor's values only up to this many (PyTorch's print threshold: past
// it, print summarises too); a larger one gets a summary with this many values from each end.
inline constexpr std::size_t kJsonInlineValues = 1000;
inline constexpr std::size_t kJsonEdgeItems = 3;

// JSON text. With values, each tensor carries "values" as nested lists (non-finite values as the
// strings "nan", "inf", "-inf", which numpy.array(..., dtype=float) reads back) when it has at
// most `inline_limit` values, else a "summary"; a top-level "values" object says which. Without
// values, each tensor names its "file". A run trimmed by --stage (Header::shown) also has
// "stage_selection": {"option": "5-7", "stages": [5, 6, 7], "of": 14}.
std::string manifest_json(const Header& header, const std::string& command, const std::deque<Stage>& stages,
                          bool inline_values, std::size_t inline_limit = static_cast<std::size_t>(-1));

// A string as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace attn::report
