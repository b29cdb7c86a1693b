// Embeddings: deterministic vectors for words that have no embedding in the articles, and the
// table lookup (nn.Embedding) of the lessons that train.
//
// Each distinct word gets its own seed, fnv1a32(word), and its vector is
// torch.manual_seed(seed); torch.rand(d_in): the same word always gets the same vector (so a
// repeated word attends like its twin), and a learner can rebuild it in PyTorch from the
// printed seed.
//
// The lookup's backward pass: a lookup copies one row of the table per token, so the table's
// gradient collects each token's gradient in the row it came from, a scatter-add. A token id
// that occurs three times gets the sum of three gradients; a row no token used gets zero (and
// Adam leaves it nearly still). Position embeddings are the same lookup with ids 0..T-1 in
// every batch row.
//
// Legend: B batch, T tokens, V rows of the table (vocabulary or positions), d width. T (the
// template parameter) is float or double; embedding.cpp instantiates both.
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

// The same into x, which keeps its buffer when it already has the shape (B, T, d): a training
// step's lookup allocates nothing.
template <class T>
void embedding_lookup(const xt::xtensor<T, 2>& weight, const Ids& ids, xt::xtensor<T, 3>& x);

// Position ids 0..T-1 in each of B rows: (B, T), for pos(arange(T)).
Ids position_ids(std::size_t B, std::size_t T);

}  // namespace attn

// The backward pass lives in namespace attn::grad, beside its forward pass.
namespace attn::grad {

// ids (B, T) each < V, dy (B, T, d) -> dL/dweight (V, d). Throws std::invalid_argument for an id
// out of range or shapes that do not fit.
template <class T>
xt::xtensor<T, 2> embedding_backward(const Ids& ids, const xt::xtensor<T, 3>& dy, std::size_t V);

}  // namespace attn::grad
