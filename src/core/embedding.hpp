// Deterministic embeddings for words that have no embedding in the articles.
//
// Each distinct word gets its own seed, fnv1a32(word), and its vector is
// torch.manual_seed(seed); torch.rand(d_in): the same word always gets the same vector (so a
// repeated word attends like its twin), and a learner can rebuild it in PyTorch from the
// printed seed.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.hpp"

namespace attn {

// 32-bit FNV-1a hash of the word's bytes.
std::uint32_t word_seed(const std::string& word);

// (d_in,)
Vec word_embedding(const std::string& word, std::size_t d_in);

}  // namespace attn
