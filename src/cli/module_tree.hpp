// The module tree of a checkpoint's base model, printed the way PyTorch prints
// `AutoModel.from_pretrained(DIR)`: transformers 4.48 and later (LlamaAttention, GPT2Attention,
// rotary_emb on the model; Conv1D(nf=.., nx=..)), with torch 2's ModuleList folding repeated
// layers into "(0-27): 28 x LlamaDecoderLayer(". docs/checkpoints.md shows one.
#pragma once

#include <string>

#include "io/model_config.hpp"

namespace attn::cli {

// The whole repr, lines joined by '\n', without a trailing newline.
std::string module_tree(const ModelConfig& config);

// A double as Python's repr writes a float: the shortest digits that read back the same, fixed
// notation for exponents -4..15, else 1e-05 (two exponent digits at least); 3.0, not 3.
std::string python_float(double v);

}  // namespace attn::cli
