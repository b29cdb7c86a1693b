// The head moves and their backward passes (see heads.hpp).
//
// Legend: B batch, T tokens, h heads, d_k = d_out / h.
#include "core/heads.hpp"

#include <algorithm>
#include <stdexcept>

namespace attn {
namespace {

template <class T>
std::size_t head_width(const xt::xtensor<T, 3>& x, std::size_t h, const char* op) {
  const std::size_t d_out = x.shape()[2];
  if (h == 0 || d_out % h != 0)
    throw std::invalid_argument(std::string(op) + ": " + std::to_string(h) +
                                " heads do not divide d_out " + std::to_string(d_out) + " of " +
                                shape_of(x));
  return d_out / h;
}

// (B, T, d_out) -> (B, h, T, d_k), into out; `op` names the caller in the refusal.
template <class T>
void heads_of(const xt::xtensor<T, 3>& x, std::size_t h, xt::xtensor<T, 4>& out, const char* op) {
  const std::size_t d_k = head_width(x, h, op);
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], d_out = x.shape()[2];
  out.resize({B, h, Tn, d_k});  // (B, h, T, d_k)
  // Whole d_k-wide rows move at once (element-wise indexing costs more than the products here).
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < Tn; ++t)
        std::copy_n(x.data() + (b * Tn + t) * d_out + i * d_k, d_k, out.data() + ((b * h + i) * Tn + t) * d_k);
}

}  // namespace

template <class T>
xt::xtensor<T, 4> split_heads(const xt::xtensor<T, 3>& x, std::size_t h) {
  const std::size_t d_k = head_width(x, h, "split_heads");
  xt::xtensor<T, 4> out = xt::empty<T>({x.shape()[0], x.shape()[1], h, d_k});  // (B, T, h, d_k)
  std::copy(x.begin(), x.end(), out.begin());  // a view: same memory order
  return out;
}

template <class T>
xt::xtensor<T, 4> swap_token_head_axes(const xt::xtensor<T, 4>& x) {
  const std::size_t B = x.shape()[0], A = x.shape()[1], C = x.shape()[2], d = x.shape()[3];
  xt::xtensor<T, 4> out = xt::empty<T>({B, C, A, d});  // (B, A, C, d) -> (B, C, A, d)
  // Whole d-wide rows move at once; element-wise xtensor indexing here cost more than the GEMMs.
  const T* src = x.data();
  T* dst = out.data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t a = 0; a < A; ++a)
      for (std::size_t c = 0; c < C; ++c)
        std::copy_n(src + ((b * A + a) * C + c) * d, d, dst + ((b * C + c) * A + a) * d);
  return out;
}

template <class T>
xt::xtensor<T, 3> merge_heads(const xt::xtensor<T, 4>& x) {
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], h = x.shape()[2], d_k = x.shape()[3];
  xt::xtensor<T, 3> out = xt::empty<T>({B, Tn, h * d_k});  // (B, T, h, d_k) -> (B, T, d_out)
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

template <class T>
void to_heads(const xt::xtensor<T, 3>& x, std::size_t h, xt::xtensor<T, 4>& out) {
  heads_of(x, h, out, "to_heads");
}

template <class T>
void from_heads(const xt::xtensor<T, 4>& x, xt::xtensor<T, 3>& out) {
  const std::size_t B = x.shape()[0], h = x.shape()[1], Tn = x.shape()[2], d_k = x.shape()[3];
  out.resize({B, Tn, h * d_k});  // (B, T, d_out)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < Tn; ++t)
        std::copy_n(x.data() + ((b * h + i) * Tn + t) * d_k, d_k, out.data() + (b * Tn + t) * h * d_k + i * d_k);
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

#define ATTN_HEADS_INSTANTIATE(T)                                                        \
  template xt::xtensor<T, 4> split_heads(const xt::xtensor<T, 3>&, std::size_t);         \
  template xt::xtensor<T, 4> swap_token_head_axes(const xt::xtensor<T, 4>&);             \
  template xt::xtensor<T, 3> merge_heads(const xt::xtensor<T, 4>&);                      \
  template void to_heads(const xt::xtensor<T, 3>&, std::size_t, xt::xtensor<T, 4>&);    \
  template void from_heads(const xt::xtensor<T, 4>&, xt::xtensor<T, 3>&);
ATTN_HEADS_INSTANTIATE(float)
ATTN_HEADS_INSTANTIATE(double)
#undef ATTN_HEADS_INSTANTIATE

}  // namespace attn

namespace attn::grad {

// Each move's backward pass is the other move (heads.hpp).
template <class T>
void split_heads_backward(const xt::xtensor<T, 4>& d_heads, xt::xtensor<T, 3>& d) {
  from_heads(d_heads, d);  // (B, h, T, d_k) -> (B, T, d_out)
}

template <class T>
xt::xtensor<T, 3> split_heads_backward(const xt::xtensor<T, 4>& d_heads) {
  xt::xtensor<T, 3> d;  // (B, T, d_out)
  split_heads_backward(d_heads, d);
  return d;
}

template <class T>
void merge_heads_backward(const xt::xtensor<T, 3>& d_merged, std::size_t h, xt::xtensor<T, 4>& d) {
  heads_of(d_merged, h, d, "merge_heads_backward");  // (B, T, d_out) -> (B, h, T, d_k)
}

template <class T>
xt::xtensor<T, 4> merge_heads_backward(const xt::xtensor<T, 3>& d_merged, std::size_t h) {
  xt::xtensor<T, 4> d;  // (B, h, T, d_k)
  merge_heads_backward(d_merged, h, d);
  return d;
}

#define ATTN_HEADS_BACKWARD_INSTANTIATE(T)                                                            \
  template void split_heads_backward(const xt::xtensor<T, 4>&, xt::xtensor<T, 3>&);                   \
  template xt::xtensor<T, 3> split_heads_backward(const xt::xtensor<T, 4>&);                          \
  template void merge_heads_backward(const xt::xtensor<T, 3>&, std::size_t, xt::xtensor<T, 4>&);      \
  template xt::xtensor<T, 4> merge_heads_backward(const xt::xtensor<T, 3>&, std::size_t);
ATTN_HEADS_BACKWARD_INSTANTIATE(float)
ATTN_HEADS_BACKWARD_INSTANTIATE(double)
#undef ATTN_HEADS_BACKWARD_INSTANTIATE

}  // namespace attn::grad
