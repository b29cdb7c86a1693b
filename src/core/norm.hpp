// The two normalisations of real decoder layers, over the last axis of every row:
//   layer_norm(x) = (x - mean) * rsqrt(var + eps) * weight + bias        torch.nn.LayerNorm (GPT-2)
//       mean = sum(x) / d,  var = sum((x - mean)^2) / d  (biased: divided by d, not d - 1)
//   rms_norm(x)   = weight * (x * rsqrt(mean(x^2) + eps))                Hugging Face's LlamaRMSNorm
//       (Llama, Qwen2): no mean subtracted, no bias.
// Both in float32 as PyTorch runs them for float32 inputs; the row sums accumulate in double and
// are rounded once (PyTorch sums in float pairwise: both stay within an ulp or two of the exact
// mean at these widths; tests/core/test_model_layers.cpp holds the outputs to PyTorch's).
//
// Legend: B batch, T tokens, d the normalised width (hidden size); eps the config's
// layer_norm_epsilon (GPT-2: 1e-5) or rms_norm_eps (Llama 3: 1e-5, Qwen2: 1e-6).
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attn {

// nn.LayerNorm(d, eps): weight (d,), bias (d,).
struct LayerNorm {
  Vec weight;  // (d,)
  Vec bias;    // (d,)
  float eps = 1e-5f;
};

// LlamaRMSNorm(d, eps): weight (d,).
struct RmsNorm {
  Vec weight;  // (d,)
  float eps = 1e-6f;
};

// (B, T, d) -> (B, T, d) and (T, d) -> (T, d). Throw std::invalid_argument with the shapes when
// weight or bias is not (d,), or eps is negative or not finite.
Ten3 layer_norm(const Ten3& x, const Vec& weight, const Vec& bias, float eps);
Mat layer_norm(const Mat& x, const Vec& weight, const Vec& bias, float eps);
Ten3 layer_norm(const LayerNorm& norm, const Ten3& x);

Ten3 rms_norm(const Ten3& x, const Vec& weight, float eps);
Mat rms_norm(const Mat& x, const Vec& weight, float eps);
Ten3 rms_norm(const RmsNorm& norm, const Ten3& x);

// The row kernels behind them: `rows` contiguous rows of width d from x into y (may alias x);
// bias may be null for rms.
void layer_norm_rows(const float* x, std::size_t rows, std::size_t d, const float* weight, const float* bias,
                     float eps, float* y);
void rms_norm_rows(const float* x, std::size_t rows, std::size_t d, const float* weight, float eps, float* y);

}  // namespace attn
