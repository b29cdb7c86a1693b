// The scatter-add of an embedding's backward pass (see embedding.hpp).
//
// Legend: B batch, T tokens, V table rows, d width.
#include "core/grad/embedding.hpp"

#include <stdexcept>
#include <string>

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
