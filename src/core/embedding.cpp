// Word embeddings, the table lookup and its scatter-add backward pass (see embedding.hpp).
//
// Legend: B batch, T tokens, V table rows, d width.
#include "core/embedding.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/generator.hpp"

namespace attn {

std::uint32_t word_seed(const std::string& word) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : word) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

Vec word_embedding(const std::string& word, std::size_t d_in) {
  TorchGenerator gen(word_seed(word));
  return gen.rand(d_in);  // (d_in,)
}

}  // namespace attn

namespace attn {

template <class T>
void embedding_lookup(const xt::xtensor<T, 2>& weight, const Ids& ids, xt::xtensor<T, 3>& x) {
  const std::size_t V = weight.shape()[0], d = weight.shape()[1];
  const std::size_t B = ids.shape()[0], Tn = ids.shape()[1];
  x.resize({B, Tn, d});  // (B, T, d), a no-op when x already has this shape
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tn; ++t) {
      const std::size_t row = ids(b, t);
      if (row >= V)
        throw std::invalid_argument("embedding_lookup: id " + std::to_string(row) + " is outside the table " +
                                    shape_of(weight));
      std::copy(weight.data() + row * d, weight.data() + (row + 1) * d, x.data() + (b * Tn + t) * d);
    }
}

template <class T>
xt::xtensor<T, 3> embedding_lookup(const xt::xtensor<T, 2>& weight, const Ids& ids) {
  xt::xtensor<T, 3> x;  // (B, T, d)
  embedding_lookup(weight, ids, x);
  return x;
}

template xt::xtensor<float, 3> embedding_lookup(const xt::xtensor<float, 2>&, const Ids&);
template xt::xtensor<double, 3> embedding_lookup(const xt::xtensor<double, 2>&, const Ids&);
template void embedding_lookup(const xt::xtensor<float, 2>&, const Ids&, xt::xtensor<float, 3>&);
template void embedding_lookup(const xt::xtensor<double, 2>&, const Ids&, xt::xtensor<double, 3>&);

Ids position_ids(std::size_t B, std::size_t T) {
  Ids ids = xt::empty<std::size_t>({B, T});  // (B, T)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) ids(b, t) = t;
  return ids;
}

}  // namespace attn

namespace attn::grad {

template <class T>
xt::xtensor<T, 2> embedding_backward(const Ids& ids, const xt::xtensor<T, 3>& dy, std::size_t V) {
  const std::size_t B = ids.shape()[0], Tn = ids.shape()[1], d = dy.shape()[2];
  if (dy.shape()[0] != B || dy.shape()[1] != Tn)
    throw std::invalid_argument("embedding_backward: ids " + shape_of(ids) + " and dy " + shape_of(dy) +
                                " do not fit");
  xt::xtensor<T, 2> dw = xt::zeros<T>({V, d});  // (V, d)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tn; ++t) {
      const std::size_t row = ids(b, t);
      if (row >= V)
        throw std::invalid_argument("embedding_backward: id " + std::to_string(row) + " is outside the table of " +
                                    std::to_string(V) + " rows");
      const T* src = dy.data() + (b * Tn + t) * d;
      T* dst = dw.data() + row * d;
      for (std::size_t c = 0; c < d; ++c) dst[c] += src[c];
    }
  return dw;
}

template xt::xtensor<float, 2> embedding_backward(const Ids&, const xt::xtensor<float, 3>&, std::size_t);
template xt::xtensor<double, 2> embedding_backward(const Ids&, const xt::xtensor<double, 3>&, std::size_t);

}  // namespace attn::grad
