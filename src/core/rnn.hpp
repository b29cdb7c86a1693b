// The tanh RNN of the encoder-decoder era, as PyTorch's nn.RNNCell computes it:
//   h_t = tanh(W_xh x_t + W_hh h_{t-1} + b_h),   W_xh = weight_ih, W_hh = weight_hh,
//   b_h = bias_ih + bias_hh (PyTorch keeps the bias as two vectors; their sum is the b_h of the papers).
//
// Legend: S source length, d_in embedding width, d_h hidden width.
#pragma once

#include "core/generator.hpp"
#include "core/tensor.hpp"

namespace attn {

struct RnnCell {
  Mat weight_ih;  // (d_h, d_in)  W_xh
  Mat weight_hh;  // (d_h, d_h)   W_hh
  Vec bias_ih;    // (d_h,)
  Vec bias_hh;    // (d_h,)
  std::size_t hidden() const { return weight_hh.shape()[0]; }
  std::size_t parameters() const { return weight_ih.size() + weight_hh.size() + bias_ih.size() + bias_hh.size(); }
};

// nn.RNNCell(d_in, d_h): weight_ih, weight_hh, bias_ih, bias_hh drawn in that order, each
// U(-1/sqrt(d_h), 1/sqrt(d_h)).
RnnCell make_rnn_cell(TorchGenerator& gen, std::size_t d_in, std::size_t d_h);

// One step: (d_in,), (d_h,) -> (d_h,)
Vec rnn_step(const RnnCell& cell, const Vec& x, const Vec& h_prev);

// Every state of a left-to-right pass from h_0 = 0: (S, d_in) -> (S, d_h); row t is h_{t+1}.
Mat rnn_forward(const RnnCell& cell, const Mat& xs);

// The right-to-left pass, stored by position: row j is the backward state after reading x_j..x_S.
Mat rnn_backward(const RnnCell& cell, const Mat& xs);

// Bahdanau's bidirectional encoder: h_j = [forward h_j ; backward h_j], (S, d_in) -> (S, 2 d_h).
Mat bidirectional_encoder(const RnnCell& forward, const RnnCell& backward, const Mat& xs);

// ---- Gradients (training). "backward" above is the right-to-left direction of the encoder, so
// the gradient functions are named *_grad. Each takes dL/d(output) and returns dL/d(inputs),
// adding dL/d(parameters) into `grads` (a cell of the same shape, zeroed by the caller), as
// PyTorch's .grad accumulates.

// The zero cell of the same shape, for gradients.
RnnCell zeros_like(const RnnCell& cell);

// What one step sends back: dL/dx_t and dL/dh_{t-1}.
struct RnnStepGrad {
  Vec d_x;       // (d_in,)
  Vec d_h_prev;  // (d_h,)
};

// One step h = tanh(W_ih x + b_ih + W_hh h_prev + b_hh), given x (d_in,), h_prev (d_h,), the h it
// made (d_h,) and d_h = dL/dh (d_h,). With z the pre-activation, dL/dz = d_h * (1 - h^2); then
// dW_ih += dz x^T, dW_hh += dz h_prev^T, db_ih += dz, db_hh += dz, d_x = W_ih^T dz,
// d_h_prev = W_hh^T dz.
RnnStepGrad rnn_step_grad(const RnnCell& cell, const Vec& x, const Vec& h_prev, const Vec& h, const Vec& d_h,
                          RnnCell& grads);

// Back-propagation through time over a whole pass. xs (S, d_in) and the states the pass made
// (S, d_h) (rnn_forward's, or rnn_backward's with reverse = true); d_states (S, d_h) holds
// dL/d(state j) from outside the recurrence (the attention, the decoder's first state). Walks
// the pass in the opposite order, carrying dL/dh into the previous step, and returns dL/dxs
// (S, d_in).
Mat rnn_pass_grad(const RnnCell& cell, const Mat& xs, const Mat& states, const Mat& d_states, RnnCell& grads,
                  bool reverse = false);

// How much the last state h_S depends on each input: ||d h_S / d x_j||_F for every j, (S,).
// Back-propagated through the recurrence: d h_S / d x_j = D_S W_hh D_{S-1} ... W_hh D_j W_xh
// with D_t = diag(1 - h_t^2).
Vec final_state_sensitivity(const RnnCell& cell, const Mat& states);

}  // namespace attn
