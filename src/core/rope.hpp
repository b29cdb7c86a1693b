// Rotary position embeddings (RoPE, Su et al. 2021): instead of adding a position vector to x,
// rotate each query and key, pair of dimensions by pair of dimensions, by an angle that grows
// with the token's position:
//   inv_freq[i] = theta^(-2i / d_k)                  i = 0 .. d_k/2 - 1
//   angle[p, i] = p * inv_freq[i]                    p = offset .. offset + T - 1
//   (x_a, x_b) -> (x_a cos - x_b sin, x_a sin + x_b cos)
// Because a rotation by p_q followed by the transposed rotation by p_k is a rotation by
// p_q - p_k, the score q . k after RoPE depends only on the distance between the two tokens.
//
// Two conventions pick which dimensions form a pair; they differ only by a permutation:
//   RopeStyle::half         Llama / Hugging Face rotate_half: pairs (i, i + d_k/2)
//   RopeStyle::interleaved  RoFormer / GPT-J:                 pairs (2i, 2i + 1)
//
// Legend: B batch, h heads, T tokens, d_k head width (even), P = d_k / 2 pairs.
// All in float32, as PyTorch computes it (positions and angles are float, so positions are
// refused past 2^24, where float stops counting by one).
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attn {

enum class RopeStyle { half, interleaved };

// "half" or "interleaved", for printing.
const char* rope_style_name(RopeStyle style);

// Everything the rotation uses, kept so that a lesson can print each table.
struct RopeTables {
  float theta = 10000.0f;  // the base; Llama 2 uses 10000, Llama 3 uses 500000
  std::size_t offset = 0;  // position of the first row
  Vec inv_freq;            // (P,)      theta^(-2i/d_k): pair 0 turns fastest (1 rad per token)
  Mat angles;              // (T, P)    position * inv_freq
  Mat cos;                 // (T, d_k)  cos(cat(angles, angles)), Hugging Face's layout
  Mat sin;                 // (T, d_k)  sin(cat(angles, angles))
};

// Throws unless d_k is even and positive.
std::size_t rope_pairs(std::size_t d_k);

// 1 / theta^(arange(0, d_k, 2) / d_k): (P,). Throws on odd d_k or theta not finite and > 0.
Vec rope_inv_freq(std::size_t d_k, float theta = 10000.0f);

// Tables for positions offset .. offset + T - 1.
RopeTables rope_tables(std::size_t T, std::size_t d_k, float theta = 10000.0f, std::size_t offset = 0);

// The same from any inv_freq (P,): a scaled one (rope_inv_freq_llama3) or one read from a model.
// d_k = 2P; `theta` is only recorded in the tables (0 when unknown). Throws on an empty inv_freq.
RopeTables rope_tables_from_inv_freq(const Vec& inv_freq, std::size_t T, std::size_t offset = 0,
                                     float theta = 0.0f);

// Llama 3.1 / 3.2's rope_scaling of type "llama3" (transformers' _compute_llama3_parameters):
// with L = original_max_position_embeddings and wavelen = 2 pi / inv_freq[i],
//   wavelen > L / low_freq_factor    inv_freq / factor           (long wavelengths: slowed)
//   wavelen < L / high_freq_factor   inv_freq                    (short ones: kept)
//   otherwise                        (1 - s) inv_freq / factor + s inv_freq,
//                                    s = (L / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
// In float32, operation by operation as transformers writes it in PyTorch (2 pi / inv and
// L / wavelen are a reciprocal times the constant there, and here).
struct RopeScaling {
  float factor = 8.0f;                                     // Llama 3.2: 32, Llama 3.1: 8
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  float original_max_position_embeddings = 8192.0f;        // L
};

// (P,): rope_inv_freq(d_k, theta) rescaled as above. Throws unless factor > 0,
// high_freq_factor > low_freq_factor > 0 and L > 0 (all finite).
Vec rope_inv_freq_llama3(std::size_t d_k, float theta, const RopeScaling& scaling);

// Hugging Face's rotate_half: cat(-x[..., d_k/2:], x[..., :d_k/2]). (B, h, T, d_k) -> same.
Ten4 rotate_half(const Ten4& x);

// x rotated by the tables' positions: (B, h, T, d_k) -> (B, h, T, d_k). The tables must hold
// exactly T rows of width d_k. For half this is x * cos + rotate_half(x) * sin.
Ten4 apply_rope(const Ten4& x, const RopeTables& tables, RopeStyle style);

// apply_rope on the projections' layout, no transposes: x (B, T, heads * d_k) -> the same, head i of
// token t being columns [i * d_k, (i + 1) * d_k) of row t (as .view(B, T, h, d_k) reads it). The
// same arithmetic as apply_rope, so the two agree bit for bit.
Ten3 apply_rope_merged(const Ten3& x, std::size_t heads, const RopeTables& tables, RopeStyle style);

// The permutation between the conventions, on the last axis: interleaved dimension 2i is half
// dimension i and 2i + 1 is i + d_k/2. apply_rope(half_to_interleaved(x), t, interleaved) ==
// half_to_interleaved(apply_rope(x, t, half)). Both (..., d_k) -> (..., d_k), any (B, h, T).
Ten4 half_to_interleaved(const Ten4& x);
Ten4 interleaved_to_half(const Ten4& x);

}  // namespace attn
