// The backward pass of an embedding lookup, x[b, t] = weight[ids[b, t]] (core/embedding.hpp,
// embedding_lookup, is the forward).
//
// A lookup copies one row of the table per token, so the table's gradient collects each
// token's gradient in the row it came from: a scatter-add. A token id that occurs three times
// gets the sum of three gradients; a row no token used gets zero (and Adam leaves it nearly still).
// Position embeddings are the same lookup with ids 0..T-1 in every batch row.
//
// Legend: B batch, T tokens, V rows of the table (vocabulary or positions), d width.
#pragma once

#include "core/embedding.hpp"
#include "core/tensor.hpp"

namespace attn::grad {

// ids (B, T) each < V, dy (B, T, d) -> dL/dweight (V, d). Throws std::invalid_argument for an id
// out of range or shapes that do not fit.
template <class T>
xt::xtensor<T, 2> embedding_backward(const Ids& ids, const xt::xtensor<T, 3>& dy, std::size_t V);

}  // namespace attn::grad
