// Exercise multi-head (lesson: heads). Check it with: attn check multi-head
//
// PyTorch -> xtensor 0.24, for this exercise:
//   d_out = W_query.shape[0]        W_query.shape()[0]   (a std::size_t)
//   x[b]  (T, d_in)                 Mat xb = xt::view(x, b, xt::all(), xt::all());
//   W[i*d_k:(i+1)*d_k]              Mat w = xt::view(W, xt::range(i * d_k, (i + 1) * d_k), xt::all());
//   out[b, :, i*d_k:(i+1)*d_k] = c  xt::view(out, b, xt::all(), xt::range(i * d_k, (i + 1) * d_k)) = c;
//   torch.zeros(B, T, d_out)        Ten3 out = xt::zeros<float>({B, T, d_out});
//   torch.cat(heads, dim=-1)        what the view assignment above builds, head by head
//
// The fused multi-head layer looks like one big computation, but it is h small single-head
// attentions side by side: head i uses only rows i*d_k .. (i+1)*d_k - 1 of W_query, W_key and
// W_value, and its context fills the same d_k columns of the result. `attn lesson heads` shows
// this at stage 13 ("The same thing, one head at a time": torch.cat(heads, dim=-1) equals the
// fused context_vec). Here you build the concatenated version; the tests compare it with the
// fused one and with PyTorch.
//
// Shape legend: B batch, T tokens, d_in input width, h heads, d_k head width, d_out = h * d_k.
//
// Contract
//   multi_head_context(x, W_query, W_key, W_value, h, causal) -> context (B, T, d_out)
//   x (B, T, d_in); W_query, W_key, W_value (d_out, d_in), stored as nn.Linear stores weight
//   For every batch entry b and head i:
//     context[b, :, i*d_k : (i+1)*d_k] = single_head_attention(x[b], rows i*d_k .. (i+1)*d_k - 1
//                                        of W_query, of W_key and of W_value, causal)
//   This is the context before out_proj. Throws std::invalid_argument unless h >= 1 divides d_out.
//
// Worked example (shapes): x (2, 5, 4), W_* (6, 4), h = 3, so d_k = 2.
//   Head 1 of batch entry 0 reads x[0] (5, 4) and rows 2-3 of each weight (2, 4); the helper
//   returns its (5, 2) context, which goes into context[0, :, 2:4].
#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xview.hpp>  // xt::view and xt::range, if you want them

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Ten3;

// Given (not part of the exercise): one head of attention over one sequence.
//   x (T, d_in); W_q, W_k, W_v (d_k, d_in) in nn.Linear's layout -> context (T, d_k)
Mat single_head_attention(const Mat& x, const Mat& W_q, const Mat& W_k, const Mat& W_v, bool causal) {
  const Mat queries = attn::matmul_bt(x, W_q);      // (T, d_in) @ (d_in, d_k) -> (T, d_k)
  const Mat keys = attn::matmul_bt(x, W_k);         // (T, d_k)
  const Mat values = attn::matmul_bt(x, W_v);       // (T, d_k)
  Mat scaled = attn::scale_scores(attn::matmul_bt(queries, keys), W_q.shape()[0]);  // (T, T)
  if (causal)
    scaled = attn::masked_fill(scaled, attn::causal_mask(x.shape()[0]), -std::numeric_limits<float>::infinity());
  const Mat weights = attn::softmax_rows(scaled);  // (T, T)
  return attn::matmul(weights, values);            // (T, T) @ (T, d_k) -> (T, d_k)
}

Ten3 multi_head_context(const Ten3& x, const Mat& W_query, const Mat& W_key, const Mat& W_value,
                        std::size_t h, bool causal) {
  // TODO: refuse an h that does not divide d_out (std::invalid_argument). Then, for each batch
  // entry b and head i: copy x[b] and the head's rows of the three weights into Mats, call
  // single_head_attention, and write its (T, d_k) result into the head's columns of context.
  return {};  // TODO: return the (B, T, d_out) context instead of this empty tensor.
}

}  // namespace exercise
