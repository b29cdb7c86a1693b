#include "core/rope.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn {
namespace {

// Positions are floats in PyTorch (torch.arange(T).float()); past 2^24 two positions share one float.
constexpr std::size_t kMaxRopePosition = std::size_t{1} << 24;

// Permutes the last axis: out[..., to(j, P)] = x[..., j].
template <class To>
Ten4 permute_last_axis(const Ten4& x, To to) {
  const std::size_t d_k = x.shape()[3];
  const std::size_t P = rope_pairs(d_k);
  Ten4 out = xt::empty<float>(x.shape());  // (B, h, T, d_k)
  const std::size_t rows = x.size() / d_k;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < d_k; ++j) out.data()[r * d_k + to(j, P)] = x.data()[r * d_k + j];
  return out;
}

}  // namespace

const char* rope_style_name(RopeStyle style) { return style == RopeStyle::half ? "half" : "interleaved"; }

std::size_t rope_pairs(std::size_t d_k) {
  if (d_k == 0 || d_k % 2 != 0)
    throw std::invalid_argument("rope: the head width d_k must be even and positive to form pairs, got d_k " +
                                std::to_string(d_k));
  return d_k / 2;
}

Vec rope_inv_freq(std::size_t d_k, float theta) {
  const std::size_t P = rope_pairs(d_k);
  if (!std::isfinite(theta) || !(theta > 0.0f))
    throw std::invalid_argument("rope: theta must be finite and positive, got " + std::to_string(theta));
  Vec inv_freq = xt::empty<float>({P});  // (P,)
  for (std::size_t i = 0; i < P; ++i) {
    // float32 throughout, as 1.0 / (base ** (torch.arange(0, d, 2).float() / d)).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(d_k);
    inv_freq(i) = 1.0f / std::pow(theta, exponent);
  }
  return inv_freq;
}

RopeTables rope_tables(std::size_t T, std::size_t d_k, float theta, std::size_t offset) {
  RopeTables t;
  t.theta = theta;
  t.offset = offset;
  t.inv_freq = rope_inv_freq(d_k, theta);  // (P,)
  const std::size_t P = d_k / 2;
  if (offset > kMaxRopePosition || T > kMaxRopePosition - offset)
    throw std::invalid_argument("rope: offset " + std::to_string(offset) + " + T " + std::to_string(T) +
                                " passes 2^24 positions, where float32 positions stop being exact");
  t.angles = xt::empty<float>({T, P});  // (T, P)
  t.cos = xt::empty<float>({T, d_k});   // (T, d_k)
  t.sin = xt::empty<float>({T, d_k});   // (T, d_k)
  for (std::size_t p = 0; p < T; ++p) {
    const float position = static_cast<float>(offset + p);
    for (std::size_t i = 0; i < P; ++i) {
      const float angle = position * t.inv_freq(i);  // torch.outer(t, inv_freq), in float
      t.angles(p, i) = angle;
      // Hugging Face stores cat(angles, angles): dimension i and i + P share one angle.
      t.cos(p, i) = t.cos(p, i + P) = std::cos(angle);
      t.sin(p, i) = t.sin(p, i + P) = std::sin(angle);
    }
  }
  return t;
}

Ten4 rotate_half(const Ten4& x) {
  const std::size_t d_k = x.shape()[3], P = rope_pairs(d_k);
  Ten4 out = xt::empty<float>(x.shape());  // (B, h, T, d_k)
  const std::size_t rows = x.size() / d_k;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * d_k;
    float* o = out.data() + r * d_k;
    for (std::size_t i = 0; i < P; ++i) {
      o[i] = -in[i + P];
      o[i + P] = in[i];
    }
  }
  return out;
}

Ten4 apply_rope(const Ten4& x, const RopeTables& tables, RopeStyle style) {
  const std::size_t T = x.shape()[2], d_k = x.shape()[3];
  const std::size_t P = rope_pairs(d_k);
  if (tables.cos.shape()[0] != T || tables.cos.shape()[1] != d_k)
    throw std::invalid_argument("apply_rope: x " + shape_of(x) + " needs (T, d_k) = (" + std::to_string(T) + ", " +
                                std::to_string(d_k) + ") tables, got cos " + shape_of(tables.cos));
  Ten4 out = xt::empty<float>(x.shape());  // (B, h, T, d_k)
  const std::size_t matrices = x.shape()[0] * x.shape()[1];  // B * h
  for (std::size_t m = 0; m < matrices; ++m)
    for (std::size_t p = 0; p < T; ++p) {
      const float* in = x.data() + (m * T + p) * d_k;
      float* o = out.data() + (m * T + p) * d_k;
      const float* c = tables.cos.data() + p * d_k;  // c[i] == c[i + P] == cos(angle[p, i])
      const float* s = tables.sin.data() + p * d_k;
      for (std::size_t i = 0; i < P; ++i) {
        // The pair's two dimensions: where they sit is the only difference between conventions.
        const std::size_t a = style == RopeStyle::half ? i : 2 * i;
        const std::size_t b = style == RopeStyle::half ? i + P : 2 * i + 1;
        // x * cos + rotate_half(x) * sin, term by term in PyTorch's order.
        o[a] = in[a] * c[i] + (-in[b]) * s[i];
        o[b] = in[b] * c[i] + in[a] * s[i];
      }
    }
  return out;
}

Ten4 half_to_interleaved(const Ten4& x) {
  return permute_last_axis(
      x, [](std::size_t j, std::size_t P) { return j < P ? 2 * j : 2 * (j - P) + 1; });
}

Ten4 interleaved_to_half(const Ten4& x) {
  return permute_last_axis(
      x, [](std::size_t j, std::size_t P) { return j % 2 == 0 ? j / 2 : j / 2 + P; });
}

}  // namespace attn
