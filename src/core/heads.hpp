// Splitting a projection into heads and merging the heads back, forward and backward.
//
// Legend: B batch, T tokens, h heads, d_k = d_out / h.
// The fused multi-head flow keeps one wide projection and only re-labels its columns:
//   (B, T, d_out) --view--> (B, T, h, d_k) --transpose(1, 2)--> (B, h, T, d_k)
// and back again after attention. Each of these returns a contiguous copy, so the next
// product runs on a plain row-major buffer.
//
// Backward: both moves are pure rearrangements, every number moves and none changes. The
// gradient of a rearrangement is the reverse rearrangement of the gradient, so
//   split:  (B, T, d_out) --view--> (B, T, h, d_k) --transpose(1, 2)--> (B, h, T, d_k)
//           backward: (B, h, T, d_k) --transpose--> (B, T, h, d_k) --view--> (B, T, d_out)
//   merge:  (B, h, T, d_k) --transpose--> (B, T, h, d_k) --view--> (B, T, d_out)
//           backward: (B, T, d_out) --view--> (B, T, h, d_k) --transpose--> (B, h, T, d_k)
// which is why split's backward is merge's forward and the other way round: to_heads and
// from_heads below are each other's backward pass.
//
// T is float or double for the moves that have a backward pass (heads.cpp instantiates both);
// repeat_kv_heads and reshape_without_transpose are float.
#pragma once

#include "core/tensor.hpp"

namespace attn {

// .view(B, T, h, d_k): (B, T, d_out) -> (B, T, h, d_k). Throws unless h divides d_out.
template <class T>
xt::xtensor<T, 4> split_heads(const xt::xtensor<T, 3>& x, std::size_t h);

// .transpose(1, 2): (B, T, h, d_k) -> (B, h, T, d_k), and the same call maps back.
template <class T>
xt::xtensor<T, 4> swap_token_head_axes(const xt::xtensor<T, 4>& x);

// .contiguous().view(B, T, d_out): (B, T, h, d_k) -> (B, T, d_out)
template <class T>
xt::xtensor<T, 3> merge_heads(const xt::xtensor<T, 4>& x);

// split_heads then swap_token_head_axes in one move, into out: (B, T, d_out) -> (B, h, T, d_k).
// out keeps its buffer when it already has that shape (a training step allocates nothing).
// Throws unless h divides d_out.
template <class T>
void to_heads(const xt::xtensor<T, 3>& x, std::size_t h, xt::xtensor<T, 4>& out);

// swap_token_head_axes then merge_heads in one move, into out: (B, h, T, d_k) -> (B, T, d_out).
template <class T>
void from_heads(const xt::xtensor<T, 4>& x, xt::xtensor<T, 3>& out);

// Grouped key/value heads: (B, kv, T, d_k) -> (B, kv * groups, T, d_k), each kv head repeated
// `groups` times in a row (torch.repeat_interleave(k, groups, dim=1)), so query head i reads
// key/value head i / groups.
Ten4 repeat_kv_heads(const Ten4& x, std::size_t groups);

// The mistake: .view(B, h, T, d_k) straight from (B, T, d_out), without the transpose.
// Same numbers in the same memory order, read with the wrong axes: head i then holds
// pieces of several tokens' rows.
Ten4 reshape_without_transpose(const Ten3& x, std::size_t h);

}  // namespace attn

// The backward passes live in namespace attn::grad, beside their forward passes.
namespace attn::grad {

// dL/d(heads) (B, h, T, d_k) -> dL/d(projection) (B, T, h * d_k): the backward pass of
// split_heads followed by swap_token_head_axes (from_heads). Into d, which keeps its buffer when
// it already has that shape (a training step allocates nothing).
template <class T>
void split_heads_backward(const xt::xtensor<T, 4>& d_heads, xt::xtensor<T, 3>& d);
template <class T>
xt::xtensor<T, 3> split_heads_backward(const xt::xtensor<T, 4>& d_heads);

// dL/d(merged) (B, T, d_out) -> dL/d(heads) (B, h, T, d_k): the backward pass of
// swap_token_head_axes followed by merge_heads (to_heads), into d as above. Throws unless h
// divides d_out.
template <class T>
void merge_heads_backward(const xt::xtensor<T, 3>& d_merged, std::size_t h, xt::xtensor<T, 4>& d);
template <class T>
xt::xtensor<T, 4> merge_heads_backward(const xt::xtensor<T, 3>& d_merged, std::size_t h);

}  // namespace attn::grad
