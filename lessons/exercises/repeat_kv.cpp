// Exercise repeat-kv (lesson: gqa). Check it with: attn check repeat-kv
//
// PyTorch -> xtensor 0.24, for this exercise:
//   B, h_kv, T, d_k = kv.shape        kv.shape()[0], kv.shape()[1], kv.shape()[2], kv.shape()[3]
//   torch.zeros(B, h, T, d_k)         Ten4 out = xt::zeros<float>({B, h, T, d_k});
//   out[b, i, t, j] = kv[b, g, t, j]  out(b, i, t, j) = kv(b, g, t, j);
//   i // groups, i % h_kv             i / groups, i % h_kv   (std::size_t division rounds down)
//   raise ValueError(...)             throw std::invalid_argument("...");
//
// Grouped-query attention projects keys and values to h_kv heads only, and each of them serves
// groups = h / h_kv query heads sitting next to each other. PyTorch code (Llama's repeat_kv)
// copies every key/value head for the query heads that read it before the attention:
// k_heads.repeat_interleave(h // h_kv, dim=1). `attn lesson gqa` prints the table of who reads
// what at stage 3 and the copy, k_rep, at stage 4.
//
// Shape legend: B batch, h_kv key/value heads, h query heads, groups = h / h_kv, T tokens,
// d_k head width.
//
// Contract
//   repeat_kv(kv, h) -> (B, h, T, d_k), kv (B, h_kv, T, d_k)
//     out[b, i] = kv[b, i / groups] for every query head i: kv head g fills heads
//     g * groups .. g * groups + groups - 1
//   throws std::invalid_argument unless h >= 1 and h_kv divides h;
//   h = h_kv copies each head once (the result equals kv).
//
// Worked example (B 1, h_kv 2, T 1, d_k 2, h 4: groups 2)
//   kv            = [[[[1, 2]], [[3, 4]]]]                          kv heads 0 and 1
//   repeat_kv(kv, 4) = [[[[1, 2]], [[1, 2]], [[3, 4]], [[3, 4]]]]   query heads 0, 1, 2, 3
//   (kv.repeat(1, 2, 1, 1) would give [1, 2], [3, 4], [1, 2], [3, 4]: query head 1 would read kv
//   head 1, which is not the head it was trained with.)
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Ten4;

Ten4 repeat_kv(const Ten4& kv, std::size_t h) {
  // TODO: refuse an h that h_kv = kv.shape()[1] does not divide (std::invalid_argument), then
  // copy each kv head into its groups = h / h_kv neighbouring query heads.
  return {};  // TODO: return the (B, h, T, d_k) copy instead of this empty tensor.
}

}  // namespace exercise
