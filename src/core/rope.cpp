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
  return rope_tables_from_inv_freq(rope_inv_freq(d_k, theta), T, offset, theta);
}

Vec rope_inv_freq_llama3(std::size_t d_k, float theta, const RopeScaling& scaling) {
  const float factor = scaling.factor, low = scaling.low_freq_factor, high = scaling.high_freq_factor;
  const float L = scaling.original_max_position_embeddings;
  const bool finite = std::isfinite(factor) && std::isfinite(low) && std::isfinite(high) && std::isfinite(L);
  if (!finite || !(factor > 0.0f) || !(low > 0.0f) || !(high > low) || !(L > 0.0f))
    throw std::invalid_argument("rope_inv_freq_llama3: need factor > 0, high_freq_factor > low_freq_factor > 0 "
                                "and original_max_position_embeddings > 0, got factor " + std::to_string(factor) +
                                ", low_freq_factor " + std::to_string(low) + ", high_freq_factor " +
                                std::to_string(high) + ", original_max_position_embeddings " + std::to_string(L));
  Vec inv_freq = rope_inv_freq(d_k, theta);  // (P,)
  // Python floats met by a float32 tensor are rounded to float once.
  const float two_pi = static_cast<float>(2.0 * 3.14159265358979323846);
  const float low_wavelen = static_cast<float>(static_cast<double>(L) / low);   // old_context_len / low
  const float high_wavelen = static_cast<float>(static_cast<double>(L) / high); // old_context_len / high
  const float spread = static_cast<float>(static_cast<double>(high) - low);     // high - low
  for (float& inv : inv_freq) {
    const float wavelen = (1.0f / inv) * two_pi;  // 2 * math.pi / inv_freq = inv_freq.reciprocal() * 2 pi
    const float slowed = wavelen > low_wavelen ? inv / factor : inv;  // inv_freq_llama
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    if (medium) {
      const float s = ((1.0f / wavelen) * L - low) / spread;  // (L / wavelen - low) / (high - low)
      inv = (1.0f - s) * slowed / factor + s * slowed;        // ((1 - s) * inv) / factor + s * inv
    } else {
      inv = slowed;
    }
  }
  return inv_freq;
}

RopeTables rope_tables_from_inv_freq(const Vec& inv_freq, std::size_t T, std::size_t offset, float theta) {
  if (inv_freq.size() == 0) throw std::invalid_argument("rope: inv_freq " + shape_of(inv_freq) + " is empty");
  RopeTables t;
  t.theta = theta;
  t.offset = offset;
  t.inv_freq = inv_freq;  // (P,)
  const std::size_t P = inv_freq.size(), d_k = 2 * P;
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

Ten3 apply_rope_merged(const Ten3& x, std::size_t heads, const RopeTables& tables, RopeStyle style) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], width = x.shape()[2];
  if (heads == 0 || width % heads != 0)
    throw std::invalid_argument("apply_rope_merged: x " + shape_of(x) + " does not split into " +
                                std::to_string(heads) + " heads");
  const std::size_t d_k = width / heads;
  const std::size_t P = rope_pairs(d_k);
  if (tables.cos.shape()[0] != T || tables.cos.shape()[1] != d_k)
    throw std::invalid_argument("apply_rope_merged: x " + shape_of(x) + " with " + std::to_string(heads) +
                                " heads needs (T, d_k) = (" + std::to_string(T) + ", " + std::to_string(d_k) +
                                ") tables, got cos " + shape_of(tables.cos));
  Ten3 out = xt::empty<float>(x.shape());  // (B, T, h * d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t p = 0; p < T; ++p) {
      const float* c = tables.cos.data() + p * d_k;
      const float* s = tables.sin.data() + p * d_k;
      for (std::size_t head = 0; head < heads; ++head) {
        const float* in = x.data() + (b * T + p) * width + head * d_k;
        float* o = out.data() + (b * T + p) * width + head * d_k;
        for (std::size_t i = 0; i < P; ++i) {
          const std::size_t a = style == RopeStyle::half ? i : 2 * i;
          const std::size_t bb = style == RopeStyle::half ? i + P : 2 * i + 1;
          o[a] = in[a] * c[i] + (-in[bb]) * s[i];  // as apply_rope, term by term
          o[bb] = in[bb] * c[i] + in[a] * s[i];
        }
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
