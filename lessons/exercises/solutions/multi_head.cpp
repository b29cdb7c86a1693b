// Solution to multi-head. The contract and a worked example are in ../multi_head.cpp; try it
// there first (`attn hint multi-head` helps).
//
// Shape legend: B batch, T tokens, d_in input width, h heads, d_k head width, d_out = h * d_k.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Ten3;

// Given in the exercise file, unchanged.
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
  const std::size_t B = x.shape()[0], T = x.shape()[1], d_out = W_query.shape()[0];
  if (h == 0 || d_out % h != 0)
    throw std::invalid_argument("multi_head_context: " + std::to_string(h) + " heads do not divide d_out of W_query " +
                                attn::shape_of(W_query));
  const std::size_t d_k = d_out / h;
  Ten3 context = xt::empty<float>({B, T, d_out});  // (B, T, d_out)
  for (std::size_t i = 0; i < h; ++i) {
    // Head i's slice of each projection. Copied into Mats: the products below need contiguous
    // buffers (a strided view is what makes xt::linalg::dot throw).
    const std::size_t first = i * d_k, last = (i + 1) * d_k;
    const Mat W_q = xt::view(W_query, xt::range(first, last), xt::all());  // (d_k, d_in)
    const Mat W_k = xt::view(W_key, xt::range(first, last), xt::all());    // (d_k, d_in)
    const Mat W_v = xt::view(W_value, xt::range(first, last), xt::all());  // (d_k, d_in)
    for (std::size_t b = 0; b < B; ++b) {
      const Mat x_b = xt::view(x, b, xt::all(), xt::all());                    // (T, d_in)
      const Mat head = single_head_attention(x_b, W_q, W_k, W_v, causal);      // (T, d_k)
      xt::view(context, b, xt::all(), xt::range(first, last)) = head;  // torch.cat(heads, dim=-1)
    }
  }
  return context;
}

}  // namespace exercise
