#include "core/rnn.hpp"

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/matmul.hpp"

namespace attn {

RnnCell make_rnn_cell(TorchGenerator& gen, std::size_t d_in, std::size_t d_h) {
  if (d_in == 0 || d_h == 0) throw std::invalid_argument("make_rnn_cell: widths must be positive");
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_h)));
  RnnCell c;
  c.weight_ih = xt::empty<float>({d_h, d_in});  // (d_h, d_in)
  c.weight_hh = xt::empty<float>({d_h, d_h});   // (d_h, d_h)
  c.bias_ih = xt::empty<float>({d_h});          // (d_h,)
  c.bias_hh = xt::empty<float>({d_h});          // (d_h,)
  gen.uniform_(c.weight_ih.data(), c.weight_ih.size(), -bound, bound);
  gen.uniform_(c.weight_hh.data(), c.weight_hh.size(), -bound, bound);
  gen.uniform_(c.bias_ih.data(), c.bias_ih.size(), -bound, bound);
  gen.uniform_(c.bias_hh.data(), c.bias_hh.size(), -bound, bound);
  return c;
}

Vec rnn_step(const RnnCell& cell, const Vec& x, const Vec& h_prev) {
  const std::size_t d_h = cell.hidden(), d_in = cell.weight_ih.shape()[1];
  if (x.size() != d_in || h_prev.size() != d_h)
    throw std::invalid_argument("rnn_step: x " + shape_of(x) + " and h " + shape_of(h_prev) +
                                " do not fit a cell of input " + std::to_string(d_in) + ", hidden " +
                                std::to_string(d_h));
  Vec h = xt::empty<float>({d_h});  // (d_h,)
  for (std::size_t i = 0; i < d_h; ++i) {
    // PyTorch's order: (W_ih x + b_ih) + (W_hh h + b_hh).
    float a = 0.0f, b = 0.0f;
    for (std::size_t k = 0; k < d_in; ++k) a += cell.weight_ih(i, k) * x(k);
    for (std::size_t k = 0; k < d_h; ++k) b += cell.weight_hh(i, k) * h_prev(k);
    h(i) = std::tanh((a + cell.bias_ih(i)) + (b + cell.bias_hh(i)));
  }
  return h;
}

namespace {

Mat run(const RnnCell& cell, const Mat& xs, bool reverse) {
  const std::size_t S = xs.shape()[0], d_h = cell.hidden();
  Mat states = xt::zeros<float>({S, d_h});  // (S, d_h)
  Vec h = xt::zeros<float>({d_h});          // h_0 = 0
  for (std::size_t step = 0; step < S; ++step) {
    const std::size_t t = reverse ? S - 1 - step : step;
    const Vec x_t = xt::view(xs, t, xt::all());  // (d_in,)
    h = rnn_step(cell, x_t, h);                   // (d_h,)
    xt::view(states, t, xt::all()) = h;
  }
  return states;
}

}  // namespace

Mat rnn_forward(const RnnCell& cell, const Mat& xs) { return run(cell, xs, false); }
Mat rnn_backward(const RnnCell& cell, const Mat& xs) { return run(cell, xs, true); }

Mat bidirectional_encoder(const RnnCell& forward, const RnnCell& backward, const Mat& xs) {
  const Mat f = rnn_forward(forward, xs);   // (S, d_h)
  const Mat b = rnn_backward(backward, xs); // (S, d_h)
  const std::size_t S = xs.shape()[0], d_f = f.shape()[1], d_b = b.shape()[1];
  Mat h = xt::empty<float>({S, d_f + d_b});  // (S, 2 d_h)
  xt::view(h, xt::all(), xt::range(0, d_f)) = f;
  xt::view(h, xt::all(), xt::range(d_f, d_f + d_b)) = b;
  return h;
}

RnnCell zeros_like(const RnnCell& cell) {
  RnnCell z;
  z.weight_ih = xt::zeros<float>(cell.weight_ih.shape());  // (d_h, d_in)
  z.weight_hh = xt::zeros<float>(cell.weight_hh.shape());  // (d_h, d_h)
  z.bias_ih = xt::zeros<float>(cell.bias_ih.shape());      // (d_h,)
  z.bias_hh = xt::zeros<float>(cell.bias_hh.shape());      // (d_h,)
  return z;
}

RnnStepGrad rnn_step_grad(const RnnCell& cell, const Vec& x, const Vec& h_prev, const Vec& h, const Vec& d_h,
                          RnnCell& grads) {
  const std::size_t H = cell.hidden(), D = cell.weight_ih.shape()[1];
  if (x.size() != D || h_prev.size() != H || h.size() != H || d_h.size() != H)
    throw std::invalid_argument("rnn_step_grad: x " + shape_of(x) + ", h_prev " + shape_of(h_prev) + ", h " +
                                shape_of(h) + ", d_h " + shape_of(d_h) + " do not fit a cell of input " +
                                std::to_string(D) + ", hidden " + std::to_string(H));
  if (grads.weight_ih.shape() != cell.weight_ih.shape() || grads.weight_hh.shape() != cell.weight_hh.shape())
    throw std::invalid_argument("rnn_step_grad: grads " + shape_of(grads.weight_ih) + " do not fit the cell " +
                                shape_of(cell.weight_ih));
  RnnStepGrad out{xt::zeros<float>({D}), xt::zeros<float>({H})};  // (d_in,), (d_h,)
  const float* Wih = cell.weight_ih.data();
  const float* Whh = cell.weight_hh.data();
  float* gWih = grads.weight_ih.data();
  float* gWhh = grads.weight_hh.data();
  for (std::size_t i = 0; i < H; ++i) {
    const float dz = d_h(i) * (1.0f - h(i) * h(i));  // tanh' = 1 - tanh^2, read off the output
    if (dz == 0.0f) continue;
    grads.bias_ih(i) += dz;
    grads.bias_hh(i) += dz;
    for (std::size_t k = 0; k < D; ++k) {
      gWih[i * D + k] += dz * x(k);
      out.d_x(k) += Wih[i * D + k] * dz;  // row i of W_ih, scaled: W_ih^T dz
    }
    for (std::size_t k = 0; k < H; ++k) {
      gWhh[i * H + k] += dz * h_prev(k);
      out.d_h_prev(k) += Whh[i * H + k] * dz;
    }
  }
  return out;
}

Mat rnn_pass_grad(const RnnCell& cell, const Mat& xs, const Mat& states, const Mat& d_states, RnnCell& grads,
                  bool reverse) {
  const std::size_t S = xs.shape()[0], H = cell.hidden();
  if (states.shape()[0] != S || states.shape()[1] != H || d_states.shape() != states.shape())
    throw std::invalid_argument("rnn_pass_grad: xs " + shape_of(xs) + ", states " + shape_of(states) +
                                ", d_states " + shape_of(d_states) + " do not fit hidden " + std::to_string(H));
  Mat d_xs = xt::zeros<float>(xs.shape());  // (S, d_in)
  Vec carry = xt::zeros<float>({H});        // dL/dh from the step after, in the pass's own order
  for (std::size_t step = 0; step < S; ++step) {
    // The pass made its states in order t_0, t_1, ...; the gradient visits them last first.
    const std::size_t t = reverse ? step : S - 1 - step;
    const bool first = reverse ? t == S - 1 : t == 0;  // the pass's first step starts from h = 0
    const Vec x_t = xt::view(xs, t, xt::all());          // (d_in,)
    const Vec h_t = xt::view(states, t, xt::all());      // (d_h,)
    const Vec h_prev = first ? Vec(xt::zeros<float>({H})) : Vec(xt::view(states, reverse ? t + 1 : t - 1, xt::all()));  // (d_h,)
    Vec d_h = xt::view(d_states, t, xt::all());  // (d_h,)
    d_h += carry;
    const RnnStepGrad g = rnn_step_grad(cell, x_t, h_prev, h_t, d_h, grads);
    xt::view(d_xs, t, xt::all()) = g.d_x;
    carry = g.d_h_prev;
  }
  return d_xs;
}

Vec final_state_sensitivity(const RnnCell& cell, const Mat& states) {
  const std::size_t S = states.shape()[0], d_h = cell.hidden();
  Vec norms = xt::zeros<float>({S});  // (S,)
  if (S == 0) return norms;
  // M = d h_S / d h_t, starting at t = S with the identity, moving one step back at a time.
  Mat M = xt::eye<float>(d_h);  // (d_h, d_h)
  for (std::size_t step = 0; step < S; ++step) {
    const std::size_t t = S - 1 - step;
    // d h_S / d(pre-activation at t) = M D_t
    Mat MD = M;  // (d_h, d_h)
    for (std::size_t i = 0; i < d_h; ++i)
      for (std::size_t k = 0; k < d_h; ++k) MD(i, k) *= 1.0f - states(t, k) * states(t, k);
    const Mat J = matmul(MD, cell.weight_ih);  // (d_h, d_h) @ (d_h, d_in) -> (d_h, d_in)
    double sq = 0.0;
    for (float v : J) sq += static_cast<double>(v) * v;
    norms(t) = static_cast<float>(std::sqrt(sq));
    M = matmul(MD, cell.weight_hh);  // d h_S / d h_{t-1}: (d_h, d_h)
  }
  return norms;
}

}  // namespace attn
