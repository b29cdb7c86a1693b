// Splitting a projection into heads and merging the heads back.
//
// Legend: B batch, T tokens, h heads, d_k = d_out / h.
// The fused multi-head flow keeps one wide projection and only re-labels its columns:
//   (B, T, d_out) --view--> (B, T, h, d_k) --transpose(1, 2)--> (B, h, T, d_k)
// and back again after attention. Each of these returns a contiguous copy, so the next
// product runs on a plain row-major buffer.
#pragma once

#include "core/tensor.hpp"

namespace attn {

// .view(B, T, h, d_k): (B, T, d_out) -> (B, T, h, d_k). Throws unless h divides d_out.
Ten4 split_heads(const Ten3& x, std::size_t h);

// .transpose(1, 2): (B, T, h, d_k) -> (B, h, T, d_k), and the same call maps back.
Ten4 swap_token_head_axes(const Ten4& x);

// .contiguous().view(B, T, d_out): (B, T, h, d_k) -> (B, T, d_out)
Ten3 merge_heads(const Ten4& x);

// Grouped key/value heads: (B, kv, T, d_k) -> (B, kv * groups, T, d_k), each kv head repeated
// `groups` times in a row (torch.repeat_interleave(k, groups, dim=1)), so query head i reads
// key/value head i / groups.
Ten4 repeat_kv_heads(const Ten4& x, std::size_t groups);

// The mistake: .view(B, h, T, d_k) straight from (B, T, d_out), without the transpose.
// Same numbers in the same memory order, read with the wrong axes: head i then holds
// pieces of several tokens' rows.
Ten4 reshape_without_transpose(const Ten3& x, std::size_t h);

}  // namespace attn
