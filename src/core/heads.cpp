#include "core/heads.hpp"

#include <stdexcept>

namespace attn {
namespace {

std::size_t head_width(const Ten3& x, std::size_t h, const char* op) {
  const std::size_t d_out = x.shape()[2];
  if (h == 0 || d_out % h != 0)
    throw std::invalid_argument(std::string(op) + ": " + std::to_string(h) +
                                " heads do not divide d_out " + std::to_string(d_out) + " of " +
                                shape_of(x));
  return d_out / h;
}

}  // namespace

Ten4 split_heads(const Ten3& x, std::size_t h) {
  const std::size_t d_k = head_width(x, h, "split_heads");
  Ten4 out = xt::empty<float>({x.shape()[0], x.shape()[1], h, d_k});  // (B, T, h, d_k)
  std::copy(x.begin(), x.end(), out.begin());  // a view: same memory order
  return out;
}

Ten4 swap_token_head_axes(const Ten4& x) {
  const std::size_t B = x.shape()[0], A = x.shape()[1], C = x.shape()[2], d = x.shape()[3];
  Ten4 out = xt::empty<float>({B, C, A, d});  // (B, A, C, d) -> (B, C, A, d)
  // Whole d-wide rows move at once; element-wise xtensor indexing here cost more than the GEMMs.
  const float* src = x.data();
  float* dst = out.data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t a = 0; a < A; ++a)
      for (std::size_t c = 0; c < C; ++c)
        std::copy_n(src + ((b * A + a) * C + c) * d, d, dst + ((b * C + c) * A + a) * d);
  return out;
}

Ten3 merge_heads(const Ten4& x) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], h = x.shape()[2], d_k = x.shape()[3];
  Ten3 out = xt::empty<float>({B, T, h * d_k});  // (B, T, h, d_k) -> (B, T, d_out)
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

Ten4 repeat_kv_heads(const Ten4& x, std::size_t groups) {
  if (groups == 0) throw std::invalid_argument("repeat_kv_heads: groups must be positive");
  const std::size_t B = x.shape()[0], kv = x.shape()[1], block = x.shape()[2] * x.shape()[3];
  Ten4 out = xt::empty<float>({B, kv * groups, x.shape()[2], x.shape()[3]});  // (B, kv * groups, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t k = 0; k < kv; ++k)
      for (std::size_t g = 0; g < groups; ++g)
        std::copy_n(x.data() + (b * kv + k) * block, block, out.data() + (b * kv * groups + k * groups + g) * block);
  return out;
}

Ten4 reshape_without_transpose(const Ten3& x, std::size_t h) {
  const std::size_t d_k = head_width(x, h, "reshape_without_transpose");
  Ten4 out = xt::empty<float>({x.shape()[0], h, x.shape()[1], d_k});  // (B, T, d_out) -> (B, h, T, d_k)
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

}  // namespace attn
