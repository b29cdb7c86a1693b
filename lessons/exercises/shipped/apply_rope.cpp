// Exercise apply-rope (lesson: rope). Check it with: attn check apply-rope
//
// PyTorch -> xtensor 0.24, for this exercise:
//   T, d_k = x.shape            x.shape()[0], x.shape()[1]
//   out = x.clone()             Mat out = x;   (a copy)
//   theta ** (2 * i / d_k)      std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(d_k))
//   torch.cos(a), torch.sin(a)  std::cos(a), std::sin(a)   (a float)
//   x[t, i + P]                 x(t, i + P)
//   raise ValueError(...)       throw std::invalid_argument("...");
//
// Rotary position embeddings put a token's position into its query and key by turning them:
// dimensions i and i + d_k/2 form a pair, and the pair turns by the angle p * inv_freq[i], where p
// is the token's position. Llama's Hugging Face code writes it x * cos + rotate_half(x) * sin.
// `attn lesson rope` prints the tables at stage 2 (inv_freq, angles, cos, sin), the rotated
// q_rope and k_rope at stage 3, and rotates at positions shifted by --shift at stage 6.
//
// Shape legend: T tokens, d_k head width (even), P = d_k / 2 pairs.
//
// Contract
//   apply_rope(x, offset, theta) -> (T, d_k), x (T, d_k); row t is the token at p = offset + t
//     inv_freq[i]   = 1 / theta^(2i / d_k)                      i = 0 .. P - 1
//     angle         = p * inv_freq[i]
//     out[t, i]     = x[t, i]     * cos(angle) - x[t, i + P] * sin(angle)
//     out[t, i + P] = x[t, i + P] * cos(angle) + x[t, i]     * sin(angle)
//   throws std::invalid_argument when d_k is odd (the last dimension would have no partner);
//   T = 0 gives a (0, d_k) tensor.
//
// Worked example (d_k 2: one pair, inv_freq = [1] whatever theta is)
//   x = [[1, 0],                        one row per token
//        [1, 0]]
//   apply_rope(x, 0, 10000) = [[1, 0], [cos 1, sin 1]]  = [[1, 0], [0.5403, 0.8415]]
//     (position 0 is not turned; position 1 turns by 1 radian)
//   apply_rope(x, 1, 10000) = [[cos 1, sin 1], [cos 2, sin 2]] = [[0.5403, 0.8415], [-0.4161, 0.9093]]
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat apply_rope(const Mat& x, std::size_t offset, float theta) {
  // TODO: refuse an odd d_k (std::invalid_argument). Then, for every row t and pair i, compute
  // the angle (offset + t) * inv_freq[i] and turn the pair (x[t, i], x[t, i + P]) by it.
  return {};  // TODO: return the rotated (T, d_k) tensor instead of this empty one.
}

}  // namespace exercise
