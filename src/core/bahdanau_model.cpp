#include "core/bahdanau_model.hpp"

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

namespace attn {
namespace {

// nn.Linear(in, out, bias=False).weight (out, in)
Mat linear_weight(TorchGenerator& gen, std::size_t in, std::size_t out) { return make_linear(gen, in, out, false).weight; }

Vec row_of(const Mat& m, std::size_t r) { return xt::view(m, r, xt::all()); }  // (n,)

// y = W x + b in a fixed order: W (out, in), x (in,), b (out,) or empty -> (out,)
Vec affine(const Mat& W, const Vec& x, const Vec& b) {
  const std::size_t n_out = W.shape()[0], n_in = W.shape()[1];
  Vec y = xt::empty<float>({n_out});  // (out,)
  const float* w = W.data();
  for (std::size_t i = 0; i < n_out; ++i) {
    float sum = 0.0f;
    for (std::size_t k = 0; k < n_in; ++k) sum += w[i * n_in + k] * x(k);
    y(i) = b.size() ? sum + b(i) : sum;
  }
  return y;
}

// The gradient of y = W x + b: adds dy x^T into dW and dy into db, returns W^T dy (in,).
Vec affine_grad(const Mat& W, const Vec& x, const Vec& dy, Mat& dW, Vec& db) {
  const std::size_t n_out = W.shape()[0], n_in = W.shape()[1];
  Vec dx = xt::zeros<float>({n_in});  // (in,)
  const float* w = W.data();
  float* gw = dW.data();
  for (std::size_t i = 0; i < n_out; ++i) {
    const float g = dy(i);
    if (db.size()) db(i) += g;
    for (std::size_t k = 0; k < n_in; ++k) {
      gw[i * n_in + k] += g * x(k);
      dx(k) += w[i * n_in + k] * g;
    }
  }
  return dx;
}

// [a ; b]: (n,), (m,) -> (n + m,)
Vec concat(const Vec& a, const Vec& b) {
  Vec out = xt::empty<float>({a.size() + b.size()});  // (n + m,)
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + static_cast<std::ptrdiff_t>(a.size()));
  return out;
}

void check_ids(const char* what, const std::vector<std::size_t>& ids, std::size_t V) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= V)
      throw std::invalid_argument(std::string("bahdanau_forward: ") + what + " id " + std::to_string(ids[i]) +
                                  " at position " + std::to_string(i) + " is past the vocabulary of " +
                                  std::to_string(V));
}

// The encoder and s_0: everything before the first decoder step.
BahdanauPass encode(const BahdanauModel& m, const std::vector<std::size_t>& src) {
  if (src.empty()) throw std::invalid_argument("bahdanau_forward: the source sentence is empty");
  check_ids("source", src, m.src_emb.shape()[0]);
  const std::size_t S = src.size(), d_e = m.d_e(), d_h = m.d_h(), d_a = m.d_a();
  BahdanauPass p;
  p.x = xt::empty<float>({S, d_e});  // (S, d_e): one embedding row per word
  for (std::size_t j = 0; j < S; ++j) xt::view(p.x, j, xt::all()) = xt::view(m.src_emb, src[j], xt::all());
  p.h_fwd = rnn_forward(m.enc_fwd, p.x);   // (S, d_h)
  p.h_bwd = rnn_backward(m.enc_bwd, p.x);  // (S, d_h)
  p.H = xt::empty<float>({S, 2 * d_h});    // (S, 2 d_h)
  xt::view(p.H, xt::all(), xt::range(0, d_h)) = p.h_fwd;
  xt::view(p.H, xt::all(), xt::range(d_h, 2 * d_h)) = p.h_bwd;
  p.UH = xt::empty<float>({S, d_a});  // (S, d_a) = H @ U_a^T, row by row (not sgemm: see the header)
  for (std::size_t j = 0; j < S; ++j) xt::view(p.UH, j, xt::all()) = affine(m.U_a, row_of(p.H, j), Vec{});
  p.s_0 = xt::tanh(affine(m.W_s.weight, row_of(p.h_bwd, 0), m.W_s.bias));  // (d_h,)
  return p;
}

// One decoder step fed the word y_prev; appends its intermediates to p.
void decode_step(const BahdanauModel& m, BahdanauPass& p, std::size_t y_prev) {
  const Vec& s_prev = p.states.empty() ? p.s_0 : p.states.back();  // (d_h,)
  p.steps.push_back(additive_step(s_prev, p.H, p.UH, m.W_a, m.v_a));
  const AdditiveStep& st = p.steps.back();
  p.inputs.push_back(concat(row_of(m.tgt_emb, y_prev), st.c));            // (d_e + 2 d_h,)
  p.states.push_back(rnn_step(m.decoder, p.inputs.back(), s_prev));    // (d_h,)
}

Vec logits_of(const BahdanauModel& m, const BahdanauPass& p, std::size_t i) {
  return affine(m.out.weight, concat(p.states[i], p.steps[i].c), m.out.bias);  // (V_out,)
}

void add_rows(Mat& table, const std::vector<std::size_t>& ids, const Mat& d_rows) {
  const std::size_t d = table.shape()[1];
  for (std::size_t r = 0; r < ids.size(); ++r)
    for (std::size_t k = 0; k < d; ++k) table(ids[r], k) += d_rows(r, k);
}

}  // namespace

BahdanauModel make_bahdanau_model(TorchGenerator& gen, std::size_t V_src, std::size_t V_out, std::size_t d_e,
                                  std::size_t d_h, std::size_t d_a) {
  if (!V_src || !V_out || !d_e || !d_h || !d_a) throw std::invalid_argument("make_bahdanau_model: sizes must be positive");
  BahdanauModel m;
  m.src_emb = gen.randn(V_src, d_e);      // (V_src, d_e)
  m.tgt_emb = gen.randn(V_out + 1, d_e);  // (V_in, d_e): + <s>
  m.enc_fwd = make_rnn_cell(gen, d_e, d_h);
  m.enc_bwd = make_rnn_cell(gen, d_e, d_h);
  m.W_s = make_linear(gen, d_h, d_h, true);
  m.W_a = linear_weight(gen, d_h, d_a);       // (d_a, d_h)
  m.U_a = linear_weight(gen, 2 * d_h, d_a);   // (d_a, 2 d_h)
  m.v_a = row_of(linear_weight(gen, d_a, 1), 0); // (1, d_a) -> (d_a,)
  m.decoder = make_rnn_cell(gen, d_e + 2 * d_h, d_h);
  m.out = make_linear(gen, 3 * d_h, V_out, true);
  return m;
}

BahdanauModel zeros_like(const BahdanauModel& m) {
  BahdanauModel z;
  z.src_emb = xt::zeros<float>(m.src_emb.shape());
  z.tgt_emb = xt::zeros<float>(m.tgt_emb.shape());
  z.enc_fwd = zeros_like(m.enc_fwd);
  z.enc_bwd = zeros_like(m.enc_bwd);
  z.W_s = {xt::zeros<float>(m.W_s.weight.shape()), xt::zeros<float>(m.W_s.bias.shape())};
  z.W_a = xt::zeros<float>(m.W_a.shape());
  z.U_a = xt::zeros<float>(m.U_a.shape());
  z.v_a = xt::zeros<float>(m.v_a.shape());
  z.decoder = zeros_like(m.decoder);
  z.out = {xt::zeros<float>(m.out.weight.shape()), xt::zeros<float>(m.out.bias.shape())};
  return z;
}

std::vector<NamedTensor> named_parameters(BahdanauModel& m) {
  std::vector<NamedTensor> out;
  auto add = [&out](std::string name, auto& t, Shape shape) {
    out.push_back({std::move(name), std::move(shape), t.data(), t.size()});
  };
  auto add_cell = [&](const std::string& name, RnnCell& c) {
    add(name + ".weight_ih", c.weight_ih, to_shape(c.weight_ih.shape()));
    add(name + ".weight_hh", c.weight_hh, to_shape(c.weight_hh.shape()));
    add(name + ".bias_ih", c.bias_ih, to_shape(c.bias_ih.shape()));
    add(name + ".bias_hh", c.bias_hh, to_shape(c.bias_hh.shape()));
  };
  add("src_emb.weight", m.src_emb, to_shape(m.src_emb.shape()));
  add("tgt_emb.weight", m.tgt_emb, to_shape(m.tgt_emb.shape()));
  add_cell("enc_fwd", m.enc_fwd);
  add_cell("enc_bwd", m.enc_bwd);
  add("W_s.weight", m.W_s.weight, to_shape(m.W_s.weight.shape()));
  add("W_s.bias", m.W_s.bias, to_shape(m.W_s.bias.shape()));
  add("W_a.weight", m.W_a, to_shape(m.W_a.shape()));
  add("U_a.weight", m.U_a, to_shape(m.U_a.shape()));
  add("v_a.weight", m.v_a, Shape{1, m.v_a.size()});
  add_cell("decoder", m.decoder);
  add("out.weight", m.out.weight, to_shape(m.out.weight.shape()));
  add("out.bias", m.out.bias, to_shape(m.out.bias.shape()));
  return out;
}

std::size_t parameter_count(const BahdanauModel& m) {
  BahdanauModel copy = m;  // named_parameters hands out writable pointers; count on a copy
  std::size_t n = 0;
  for (const NamedTensor& t : named_parameters(copy)) n += t.size;
  return n;
}

Mat BahdanauPass::alignment() const {
  const std::size_t T = steps.size(), S = H.shape()[0];
  Mat a = xt::empty<float>({T, S});  // (T, S)
  for (std::size_t i = 0; i < T; ++i) xt::view(a, i, xt::all()) = steps[i].alpha;
  return a;
}

BahdanauPass bahdanau_forward(const BahdanauModel& m, const std::vector<std::size_t>& src,
                              const std::vector<std::size_t>& tgt_in) {
  check_ids("target", tgt_in, m.tgt_emb.shape()[0]);
  BahdanauPass p = encode(m, src);
  const std::size_t T = tgt_in.size(), V = m.vocab_out();
  p.logits = xt::empty<float>({T, V});  // (T, V_out)
  for (std::size_t i = 0; i < T; ++i) {
    decode_step(m, p, tgt_in[i]);
    xt::view(p.logits, i, xt::all()) = logits_of(m, p, i);
  }
  return p;
}

std::vector<std::size_t> bahdanau_greedy(const BahdanauModel& m, const std::vector<std::size_t>& src, std::size_t T,
                                         std::size_t start_id, BahdanauPass& pass) {
  check_ids("start", {start_id}, m.tgt_emb.shape()[0]);
  pass = encode(m, src);
  const std::size_t V = m.vocab_out();
  pass.logits = xt::empty<float>({T, V});  // (T, V_out)
  std::vector<std::size_t> chosen;
  std::size_t y = start_id;
  for (std::size_t i = 0; i < T; ++i) {
    decode_step(m, pass, y);
    const Vec z = logits_of(m, pass, i);  // (V_out,)
    xt::view(pass.logits, i, xt::all()) = z;
    std::size_t best = 0;
    for (std::size_t v = 1; v < V; ++v)
      if (z(v) > z(best)) best = v;
    chosen.push_back(best);
    y = best;
  }
  return chosen;
}

void bahdanau_backward(const BahdanauModel& m, const BahdanauPass& p, const std::vector<std::size_t>& src,
                       const std::vector<std::size_t>& tgt_in, const Mat& d_logits, BahdanauModel& grads) {
  const std::size_t T = p.steps.size(), S = src.size(), d_e = m.d_e(), d_h = m.d_h();
  if (tgt_in.size() != T || d_logits.shape()[0] != T || d_logits.shape()[1] != m.vocab_out() || p.H.shape()[0] != S)
    throw std::invalid_argument("bahdanau_backward: d_logits " + shape_of(d_logits) + " does not fit a pass of " +
                                std::to_string(T) + " steps over " + std::to_string(S) + " source words");
  AdditiveGrads ag = additive_grads_like(p.H, p.UH, m.W_a);
  Mat d_y = xt::zeros<float>({T, d_e});  // (T, d_e): dL/d(decoder input word i)
  Vec d_s_next = xt::zeros<float>({d_h});  // dL/ds_i arriving from step i + 1
  for (std::size_t k = 0; k < T; ++k) {
    const std::size_t i = T - 1 - k;  // last step first
    const Vec& s_prev = i == 0 ? p.s_0 : p.states[i - 1];
    // logits_i = out [s_i ; c_i] + b
    const Vec d_z = affine_grad(m.out.weight, concat(p.states[i], p.steps[i].c), row_of(d_logits, i), grads.out.weight,
                                grads.out.bias);  // (3 d_h,)
    Vec d_s = xt::view(d_z, xt::range(0, d_h));              // (d_h,)
    Vec d_c = xt::view(d_z, xt::range(d_h, 3 * d_h));        // (2 d_h,)
    d_s += d_s_next;
    // s_i = decoder([y_{i-1} ; c_i], s_{i-1})
    const RnnStepGrad g = rnn_step_grad(m.decoder, p.inputs[i], s_prev, p.states[i], d_s, grads.decoder);
    xt::view(d_y, i, xt::all()) = xt::view(g.d_x, xt::range(0, d_e));
    d_c += xt::view(g.d_x, xt::range(d_e, d_e + 2 * d_h));
    // c_i = attention(s_{i-1}, H)
    const Vec d_s_att = additive_step_grad(p.steps[i], s_prev, p.H, m.W_a, m.v_a, d_c, ag);  // (d_h,)
    d_s_next = g.d_h_prev + d_s_att;
  }
  // s_0 = tanh(W_s h_bwd_1 + b_s)
  Vec d_pre = d_s_next;  // (d_h,)
  for (std::size_t k = 0; k < d_h; ++k) d_pre(k) *= 1.0f - p.s_0(k) * p.s_0(k);
  const Vec d_hb1 = affine_grad(m.W_s.weight, row_of(p.h_bwd, 0), d_pre, grads.W_s.weight, grads.W_s.bias);  // (d_h,)
  // U_a H once per sentence, then H = [h_fwd ; h_bwd]
  additive_keys_grad(p.H, m.U_a, ag.UH, grads.U_a, ag.H);
  Mat d_fwd = xt::view(ag.H, xt::all(), xt::range(0, d_h));        // (S, d_h)
  Mat d_bwd = xt::view(ag.H, xt::all(), xt::range(d_h, 2 * d_h));  // (S, d_h)
  xt::view(d_bwd, 0, xt::all()) += d_hb1;
  const Mat d_x_f = rnn_pass_grad(m.enc_fwd, p.x, p.h_fwd, d_fwd, grads.enc_fwd, false);  // (S, d_e)
  const Mat d_x_b = rnn_pass_grad(m.enc_bwd, p.x, p.h_bwd, d_bwd, grads.enc_bwd, true);   // (S, d_e)
  add_rows(grads.src_emb, src, Mat(d_x_f + d_x_b));
  add_rows(grads.tgt_emb, tgt_in, d_y);
  grads.W_a += ag.W_a;
  grads.v_a += ag.v_a;
}

}  // namespace attn
