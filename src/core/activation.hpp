// The element-wise activations of real decoder MLPs:
//   gelu_new(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))   GPT-2 (Hugging Face's
//                 NewGELUActivation: the tanh approximation of GELU)
//   silu(x)     = x * sigmoid(x) = x / (1 + exp(-x))                   Llama, Qwen2 (F.silu)
// In float32, operation by operation as PyTorch evaluates them: x^3 as x * x * x (torch.pow with
// exponent 3.0), sqrt(2 / pi) a double rounded to float once, 0.5 * x before the bracket; silu as
// PyTorch's CPU kernel writes it, x / (1 + exp(-x)). tanh and exp come from the C library, PyTorch's
// from SLEEF (within 1 ulp): results agree to about one ulp (tests/core/test_model_layers.cpp).
//
// Legend: B batch, T tokens, n any width.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attn {

float gelu_new(float x);
float silu(float x);

// In place over n contiguous values.
void gelu_new_inplace(float* x, std::size_t n);
void silu_inplace(float* x, std::size_t n);

// (B, T, n) -> (B, T, n)
Ten3 gelu_new(const Ten3& x);
Ten3 silu(const Ten3& x);

}  // namespace attn
