// Embeddings: deterministic vectors for words that have no embedding in the articles, and the
// table lookup (nn.Embedding) of the lessons that train.
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

// Token ids by (batch, position): what a language model reads.
using Ids = xt::xtensor<std::size_t, 2>;  // (B, T)

// nn.Embedding's forward: x[b, t] = weight[ids[b, t]], (V, d) and (B, T) -> (B, T, d). Throws
// std::invalid_argument for an id >= V. The trained lessons' token and position embeddings.
template <class T>
xt::xtensor<T, 3> embedding_lookup(const xt::xtensor<T, 2>& weight, const Ids& ids);

// Position ids 0..T-1 in each of B rows: (B, T), for pos(arange(T)).
Ids position_ids(std::size_t B, std::size_t T);

}  // namespace attn
