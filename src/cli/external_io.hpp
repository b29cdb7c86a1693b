// Reading the tensors a learner hands in (--input FILE, --weights DIR) into LessonOptions.
// Loading is strict (io/npy.hpp, io/text_matrix.hpp); a refusal becomes a UsageError naming the
// option and the file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"

namespace attn::cli {

// .npy, or a text matrix (.csv, .tsv, .txt).
ExternalTensor load_input(const std::string& path);

// The files `names` (each + ".npy") that exist in `dir` are loaded into `into`, keyed by name;
// the lesson says which it needs and refuses a missing one with its expected shape. A directory
// holding none of them is refused here, listing them. `flag` is "--weights" or "--states".
void load_npy_dir(const std::string& flag, const std::string& dir, const std::vector<std::string>& names,
                  std::map<std::string, ExternalTensor>& into);

}  // namespace attn::cli
