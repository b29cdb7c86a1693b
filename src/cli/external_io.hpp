// Reading the tensors a learner hands in (--input FILE, --weights DIR) into LessonOptions.
// Loading is strict (io/npy.hpp, io/text_matrix.hpp); a refusal becomes a UsageError naming the
// option and the file.
#pragma once

#include <string>

#include "lessons/options.hpp"

namespace attn::cli {

// .npy, or a text matrix (.csv, .tsv, .txt).
ExternalTensor load_input(const std::string& path);

// W_query.npy, W_key.npy, W_value.npy, out_proj.npy and their optional *_bias.npy: whichever
// exist are loaded into opts.weights (the lesson says which it needs).
void load_weights(const std::string& dir, LessonOptions& opts);

}  // namespace attn::cli
