// The real-model layers of src/core against PyTorch 1.13: each new operation on random inputs
// (tests/data/layers/ops__*, made by tests/data/layers/make_layers.py), then whole GPT-2, Llama and
// Qwen2 models against the four tiny checkpoints of the shared reference set (their weights
// converted to float32 and their expected tensors in tests/data/models/<case>/weights and expected,
// written by tests/data/models/make_expected.py), the lessons' path
// against the fast path, and Hugging Face's mask fill against the lessons' -inf.
//
// Tolerances, and why:
//  - norms, MLPs, Conv1D: 2e-6 relative to max(1, |expected|): float32 results of sums of up to 64
//    products, summed in another order than PyTorch's (BLAS kernels, pairwise vs double sums);
//  - gelu_new, silu: 2 ulp: PyTorch's tanh and exp are SLEEF's (1 ulp), ours the C library's;
//    gelu_new's tail x < -1, where 1 + tanh cancels, to tanh's own rounding (the test says more);
//  - layer_norm with a mean near 100: 1e-5, the float32 rounding of the mean (the test says more);
//  - llama3 inv_freq: 1 ulp, the same float32 operations in the same order, powf against SLEEF's;
//  - whole models: the fixture README's bounds, 1e-5 absolute on attention weights and 1e-4
//    relative on logits; q, k, v, attn_out, hidden and final_hidden to 1e-5 relative to
//    max(1, |expected|) (each a few layers of float32 sums in another order).
//
// Legend: B batch, T tokens, d hidden size, h query heads, h_kv key/value heads, hd head width,
// V vocabulary size, f MLP width.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/activation.hpp"
#include "core/conv1d.hpp"
#include "core/decoder_layer.hpp"
#include "core/decoder_model.hpp"
#include "core/generator.hpp"
#include "core/heads.hpp"
#include "core/mask.hpp"
#include "core/mlp.hpp"
#include "core/norm.hpp"
#include "core/rope.hpp"
#include "core/softmax.hpp"
#include "support.hpp"

using attn::Ids;
using attn::Mat;
using attn::Ten3;
using attn::Ten4;
using attn::Vec;
using attn::test::contains;
using attn::test::load_fixture;
using attn::test::refusal;

namespace {

template <std::size_t N>
xt::xtensor<float, N> ops(const std::string& name) {
  return load_fixture<N>("layers/ops__" + name + ".npy");
}

// max |a - e| / max(1, |e|), or infinity when the shapes differ or a value is not finite.
template <class A, class E>
double max_rel(const A& a, const E& e) {
  if (attn::to_shape(a.shape()) != attn::to_shape(e.shape())) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = e.data()[i];
    if (!std::isfinite(x) || !std::isfinite(y)) return INFINITY;
    worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
  }
  return worst;
}

// max |a - e|, infinity on a shape mismatch or a non-finite value.
template <class A, class E>
double max_abs(const A& a, const E& e) {
  if (attn::to_shape(a.shape()) != attn::to_shape(e.shape())) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = e.data()[i];
    if (!std::isfinite(x) || !std::isfinite(y)) return INFINITY;
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

// Distance in units in the last place between two finite floats of the same sign (or zero).
std::int64_t ulps(float a, float b) {
  const auto ordered = [](float f) {
    std::int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? std::int64_t{INT32_MIN} - i : std::int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

template <class A, class E>
std::int64_t max_ulps(const A& a, const E& e) {
  if (attn::to_shape(a.shape()) != attn::to_shape(e.shape())) return INT64_MAX;
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, ulps(a.data()[i], e.data()[i]));
  return worst;
}

// ---- the four checkpoints (their config.json values written out: the config reader lives in io/)

std::string g_case;

Mat w2(const std::string& name) { return load_fixture<2>("models/" + g_case + "/weights/" + name + ".npy"); }
Vec w1(const std::string& name) { return load_fixture<1>("models/" + g_case + "/weights/" + name + ".npy"); }
template <std::size_t N>
xt::xtensor<float, N> expected(const std::string& name) {
  return load_fixture<N>("models/" + g_case + "/expected/" + name + ".npy");
}

Ids fixture_ids() {
  const Vec v = expected<1>("ids");  // (T,) stored as float32
  Ids ids = xt::empty<std::size_t>({std::size_t{1}, v.size()});  // (1, T)
  for (std::size_t t = 0; t < v.size(); ++t) ids(0, t) = static_cast<std::size_t>(v(t));
  return ids;
}

attn::Gpt2Model gpt2_tiny() {
  g_case = "gpt2_tiny";  // n_layer 2, n_head 4, n_embd 32, layer_norm_epsilon 1e-5, tied
  attn::Gpt2Model m;
  m.wte = w2("wte.weight");  // (96, 32)
  m.wpe = w2("wpe.weight");  // (64, 32)
  for (int n = 0; n < 2; ++n) {
    const std::string p = "h." + std::to_string(n) + ".";
    attn::Gpt2Layer l;
    l.ln_1 = {w1(p + "ln_1.weight"), w1(p + "ln_1.bias"), 1e-5f};
    l.c_attn = {w2(p + "attn.c_attn.weight"), w1(p + "attn.c_attn.bias")};  // (32, 96), (96,)
    l.c_proj = {w2(p + "attn.c_proj.weight"), w1(p + "attn.c_proj.bias")};  // (32, 32)
    l.ln_2 = {w1(p + "ln_2.weight"), w1(p + "ln_2.bias"), 1e-5f};
    l.mlp.c_fc = {w2(p + "mlp.c_fc.weight"), w1(p + "mlp.c_fc.bias")};        // (32, 128)
    l.mlp.c_proj = {w2(p + "mlp.c_proj.weight"), w1(p + "mlp.c_proj.bias")};  // (128, 32)
    l.heads = 4;
    m.layers.push_back(l);
  }
  m.ln_f = {w1("ln_f.weight"), w1("ln_f.bias"), 1e-5f};
  return m;
}

struct LlamaConfig {
  std::string name;
  int layers;
  std::size_t heads, kv_heads;
  float eps, theta;
  bool llama3_scaling, tied, qkv_bias;
};

const LlamaConfig kLlama3{"llama3_tiny_bf16", 2, 6, 2, 1e-5f, 500000.0f, true, true, false};
const LlamaConfig kLlamaF16{"llama_tiny_f16_sharded", 3, 4, 4, 1e-6f, 10000.0f, false, false, false};
const LlamaConfig kQwen2{"qwen2_tiny", 2, 4, 1, 1e-6f, 1000000.0f, false, true, true};

attn::Linear proj(const std::string& name, bool bias) {
  attn::Linear l;
  l.weight = w2(name + ".weight");  // (out, in)
  if (bias) l.bias = w1(name + ".bias");
  return l;
}

attn::LlamaModel llama_tiny(const LlamaConfig& c) {
  g_case = c.name;
  attn::LlamaModel m;
  m.embed_tokens = w2("model.embed_tokens.weight");  // (V, d)
  std::size_t hd = 0;
  for (int n = 0; n < c.layers; ++n) {
    const std::string p = "model.layers." + std::to_string(n) + ".";
    attn::LlamaLayer l;
    l.input_layernorm = {w1(p + "input_layernorm.weight"), c.eps};
    l.q_proj = proj(p + "self_attn.q_proj", c.qkv_bias);
    l.k_proj = proj(p + "self_attn.k_proj", c.qkv_bias);
    l.v_proj = proj(p + "self_attn.v_proj", c.qkv_bias);
    l.o_proj = proj(p + "self_attn.o_proj", false);
    l.post_attention_layernorm = {w1(p + "post_attention_layernorm.weight"), c.eps};
    l.mlp = {proj(p + "mlp.gate_proj", false), proj(p + "mlp.up_proj", false), proj(p + "mlp.down_proj", false)};
    l.heads = c.heads;
    l.kv_heads = c.kv_heads;
    hd = attn::llama_layer_head_width(l);
    m.layers.push_back(l);
  }
  m.norm = {w1("model.norm.weight"), c.eps};
  if (!c.tied) m.lm_head = w2("lm_head.weight");
  // llama3_tiny_bf16's rope_scaling: factor 32, low 1, high 4, original_max_position_embeddings 8192.
  m.inv_freq = c.llama3_scaling ? attn::rope_inv_freq_llama3(hd, c.theta, {32.0f, 1.0f, 4.0f, 8192.0f})
                                : attn::rope_inv_freq(hd, c.theta);
  return m;
}

// Every expected tensor of the current case against the trace; the figures go to the log.
void check_against_fixture(const attn::ModelTrace& tr, const Ten3& logits, std::size_t layers) {
  const double emb = max_rel(tr.embeddings, expected<3>("embeddings"));
  CHECK(emb <= 1e-6);
  double q = 0, k = 0, v = 0, w = 0, ao = 0, hid = 0;
  for (std::size_t n = 0; n < layers; ++n) {
    const std::string s = std::to_string(n);
    const attn::LayerTrace& l = tr.layers[n];
    q = std::max(q, max_rel(l.q, expected<4>("q_" + s)));
    k = std::max(k, max_rel(l.k, expected<4>("k_" + s)));
    v = std::max(v, max_rel(l.v, expected<4>("v_" + s)));
    w = std::max(w, max_abs(l.attn_weights, expected<4>("attn_weights_" + s)));
    ao = std::max(ao, max_rel(l.attn_out, expected<3>("attn_out_" + s)));
    hid = std::max(hid, max_rel(l.output, expected<3>("hidden_" + s)));
  }
  const double fin = max_rel(tr.final_hidden, expected<3>("final_hidden"));
  const double lg = max_rel(logits, expected<3>("logits"));
  MESSAGE(g_case << ": max rel diff q " << q << ", k " << k << ", v " << v << ", attn_out " << ao << ", hidden "
                 << hid << ", final_hidden " << fin << ", logits " << lg << "; max abs diff attn_weights " << w);
  CHECK(q <= 1e-5);
  CHECK(k <= 1e-5);
  CHECK(v <= 1e-5);
  CHECK(w <= 1e-5);
  CHECK(ao <= 1e-5);
  CHECK(hid <= 1e-5);
  CHECK(fin <= 1e-5);
  CHECK(lg <= 1e-4);
}

}  // namespace

// ---------------------------------------------------------------- operations

TEST_CASE("layer_norm equals torch.nn.functional.layer_norm, also with a large mean") {
  const Ten3 x = ops<3>("norm_x");  // (2, 5, 48)
  const Vec w = ops<1>("norm_weight"), b = ops<1>("norm_bias");
  const double plain = max_rel(attn::layer_norm(x, w, b, 1e-5f), ops<3>("layer_norm"));
  Ten3 shifted = x;  // x + 100 in float32, as the script adds it
  for (float& s : shifted) s += 100.0f;
  const double offset = max_rel(attn::layer_norm(shifted, w, b, 1e-5f), ops<3>("layer_norm_offset"));
  MESSAGE("layer_norm max rel diff " << plain << ", with mean 100: " << offset);
  CHECK(plain <= 2e-6);
  // With a mean near 100 the float32 mean itself is off by up to half an ulp of 100 (3.8e-6) on
  // both sides, times rstd (about 0.5) and the weight: against float64, ours is off by 2.4e-6 and
  // PyTorch's by 4.6e-6 (its (x * rstd - mean * rstd) cancels too), so they may differ by 1e-5.
  CHECK(offset <= 1e-5);
  // x * 1e-3 (in float32, as the script scales it): eps 1e-5 then dominates the variance.
  Ten3 small = x;
  for (float& s : small) s *= 1e-3f;
  const double tiny = max_rel(attn::layer_norm(small, w, b, 1e-5f), ops<3>("layer_norm_small"));
  MESSAGE("layer_norm with x * 1e-3 (eps dominating): " << tiny);
  CHECK(tiny <= 2e-6);
  // The (T, d) overload and the struct form are the same rows.
  const Mat rows = xt::view(x, 0, xt::all(), xt::all());  // (5, 48)
  const Mat y2 = attn::layer_norm(rows, w, b, 1e-5f);      // (5, 48)
  const Ten3 y3 = attn::layer_norm(attn::LayerNorm{w, b, 1e-5f}, x);  // (2, 5, 48)
  CHECK(max_abs(y2, Mat(xt::view(y3, 0, xt::all(), xt::all()))) == 0.0);
}

TEST_CASE("rms_norm equals LlamaRMSNorm's float32 formula") {
  const Ten3 x = ops<3>("norm_x");
  const Vec w = ops<1>("norm_weight");
  const double diff = max_rel(attn::rms_norm(x, w, 1e-6f), ops<3>("rms_norm"));
  Ten3 small = x;  // x * 1e-3: mean(x^2) about 4e-6 against eps 1e-6
  for (float& s : small) s *= 1e-3f;
  const double tiny = max_rel(attn::rms_norm(small, w, 1e-6f), ops<3>("rms_norm_small"));
  MESSAGE("rms_norm max rel diff " << diff << ", with x * 1e-3 (eps matters): " << tiny);
  CHECK(diff <= 2e-6);
  CHECK(tiny <= 2e-6);
}

TEST_CASE("norms refuse weights of the wrong width, naming the shapes") {
  const Ten3 x = xt::zeros<float>({1, 2, 4});  // (B, T, d)
  const Vec w4 = xt::ones<float>({4}), w3 = xt::ones<float>({3});
  CHECK(contains(refusal([&] { attn::layer_norm(x, w3, w4, 1e-5f); }), "weight (3,)"));
  CHECK(contains(refusal([&] { attn::layer_norm(x, w4, w3, 1e-5f); }), "bias (3,)"));
  CHECK(contains(refusal([&] { attn::rms_norm(x, w3, 1e-5f); }), "x (1, 2, 4)"));
  CHECK(contains(refusal([&] { attn::rms_norm(x, w4, -1.0f); }), "eps"));
}

TEST_CASE("gelu_new and silu equal PyTorch to 2 ulp, gelu_new's cancelling tail to tanh's rounding") {
  const Ten3 x = ops<3>("act_x");  // (1, 1, 5000): [-10, 10] in steps of 0.005, then 999 of N(0, 9)
  const Ten3 g = attn::gelu_new(x), g_torch = ops<3>("gelu_new");
  // For x < -1, 1 + tanh(...) < 0.32 cancels: one rounding of tanh (up to 2^-24 near -1) is then a
  // growing part of the result (16 ulp at x = -1.985; PyTorch even returns -0.0 at x = -7.185,
  // where the exact value is -4e-16), so the two can only agree to 0.5 |x| 2^-23 there.
  // Elsewhere both are a few float32 steps, each within an ulp.
  std::int64_t g_ulps = 0;
  double tail = 0.0;  // max |diff| / (0.5 |x| 2^-23) over x < -1
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float xi = x.data()[i];
    if (xi >= -1.0f) g_ulps = std::max(g_ulps, ulps(g.data()[i], g_torch.data()[i]));
    else tail = std::max(tail, std::fabs(g.data()[i] - g_torch.data()[i]) / (0.5 * std::fabs(xi) * 0x1p-23));
  }
  const std::int64_t s = max_ulps(attn::silu(x), ops<3>("silu"));
  MESSAGE("gelu_new max " << g_ulps << " ulp for x >= -1, tail diff " << tail << " of 0.5 |x| 2^-23; silu max " << s
                          << " ulp");
  CHECK(g_ulps <= 2);
  CHECK(tail <= 1.0);
  CHECK(s <= 2);
}

TEST_CASE("Conv1D, GPT-2's MLP and the gated MLP equal PyTorch") {
  const Ten3 x = ops<3>("mlp_x");  // (2, 5, 16)
  attn::Gpt2Mlp mlp{{ops<2>("c_fc_weight"), ops<1>("c_fc_bias")}, {ops<2>("c_proj_weight"), ops<1>("c_proj_bias")}};
  const double conv = max_rel(attn::conv1d(mlp.c_fc, x), ops<3>("conv1d"));
  const double gpt2 = max_rel(attn::gpt2_mlp(mlp, x), ops<3>("gpt2_mlp"));
  attn::GatedMlp gated;
  gated.gate_proj.weight = ops<2>("gate_weight");  // (40, 16)
  gated.up_proj.weight = ops<2>("up_weight");      // (40, 16)
  gated.down_proj.weight = ops<2>("down_weight");  // (16, 40)
  const double llama = max_rel(attn::gated_mlp(gated, x), ops<3>("gated_mlp"));
  MESSAGE("max rel diff conv1d " << conv << ", gpt2_mlp " << gpt2 << ", gated_mlp " << llama);
  CHECK(conv <= 2e-6);
  CHECK(gpt2 <= 2e-6);
  CHECK(llama <= 2e-6);
  CHECK(contains(refusal([&] { attn::conv1d(mlp.c_proj, x); }), "weight (64, 16)"));
  std::swap(gated.gate_proj, gated.down_proj);
  CHECK(contains(refusal([&] { attn::gated_mlp(gated, x); }), "gate_proj (16, 40)"));
}

TEST_CASE("rope_inv_freq_llama3 equals transformers' llama3 formula (head widths 64 and 128)") {
  const attn::RopeScaling s{32.0f, 1.0f, 4.0f, 8192.0f};  // Llama-3.2's rope_scaling
  for (std::size_t d : {64, 128}) {
    const Vec got = attn::rope_inv_freq_llama3(d, 500000.0f, s);
    const Vec want = ops<1>("llama3_inv_freq_" + std::to_string(d));
    const std::int64_t u = max_ulps(got, want);
    MESSAGE("llama3 inv_freq d " << d << ": max " << u << " ulp");
    CHECK(u <= 1);
    // All three regions occur: kept (fastest pair), divided by factor (slowest), smoothed between.
    const Vec plain = attn::rope_inv_freq(d, 500000.0f);
    CHECK(got(0) == plain(0));
    CHECK(got(d / 2 - 1) == plain(d / 2 - 1) / 32.0f);
    std::size_t between = 0;
    for (std::size_t i = 0; i < d / 2; ++i)
      between += got(i) != plain(i) && got(i) != plain(i) / 32.0f;
    CHECK(between > 0);
  }
  CHECK(contains(refusal([] { attn::rope_inv_freq_llama3(64, 500000.0f, {32.0f, 4.0f, 1.0f, 8192.0f}); }),
                 "high_freq_factor"));
}

TEST_CASE("rope tables from an inv_freq, and RoPE on the (B, T, h * hd) layout, change nothing") {
  const attn::RopeTables a = attn::rope_tables(7, 8, 10000.0f, 3);
  const attn::RopeTables b = attn::rope_tables_from_inv_freq(attn::rope_inv_freq(8, 10000.0f), 7, 3, 10000.0f);
  CHECK(max_abs(a.cos, b.cos) == 0.0);
  CHECK(max_abs(a.sin, b.sin) == 0.0);
  CHECK(max_abs(a.angles, b.angles) == 0.0);
  // apply_rope_merged on (B, T, h * hd) is apply_rope on (B, h, T, hd), bit for bit, both styles.
  Ten3 x = xt::empty<float>({std::size_t{2}, std::size_t{7}, std::size_t{3 * 8}});  // (B, T, h * hd)
  attn::TorchGenerator(5).uniform_(x.data(), x.size(), -1.0f, 1.0f);
  for (attn::RopeStyle style : {attn::RopeStyle::half, attn::RopeStyle::interleaved}) {
    const Ten3 merged = attn::apply_rope_merged(x, 3, a, style);  // (B, T, h * hd)
    const Ten4 heads = attn::apply_rope(attn::swap_token_head_axes(attn::split_heads(x, 3)), a, style);
    CHECK(max_abs(merged, attn::merge_heads(attn::swap_token_head_axes(heads))) == 0.0);
  }
  CHECK(contains(refusal([&] { attn::apply_rope_merged(x, 5, a, attn::RopeStyle::half); }), "(2, 7, 24)"));
}

// ---------------------------------------------------------------- the mask fill

TEST_CASE("masking with float32's lowest (Hugging Face) and with -inf (the lessons) give the same softmax") {
  // Scores of three magnitudes, one head each: |s| <= 1, <= 1e4 and <= 1e30.
  const std::size_t T = 9;
  Ten4 scores = xt::empty<float>({std::size_t{1}, std::size_t{3}, T, T});  // (B, h, T, T)
  attn::TorchGenerator(17).uniform_(scores.data(), scores.size(), -1.0f, 1.0f);
  const float scale[3] = {1.0f, 1e4f, 1e30f};
  for (std::size_t hh = 0; hh < 3; ++hh)
    for (std::size_t i = 0; i < T * T; ++i) scores.data()[hh * T * T + i] *= scale[hh];
  const float lowest = std::numeric_limits<float>::lowest();
  const Mat mask = attn::causal_mask(T);  // (T, T)
  const Ten4 with_inf = attn::softmax_rows(attn::masked_fill(scores, mask, -INFINITY));
  const Ten4 with_fill = attn::softmax_rows(attn::masked_fill(scores, mask, lowest));  // masked_fill(min)
  Ten4 added = scores;  // newer transformers: scores + causal_mask, the mask holding min where hidden
  for (std::size_t m = 0; m < 3; ++m)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = i + 1; j < T; ++j) added.data()[(m * T + i) * T + j] += lowest;
  const Ten4 with_add = attn::softmax_rows(added);
  CHECK(std::memcmp(with_inf.data(), with_fill.data(), with_inf.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(with_inf.data(), with_add.data(), with_inf.size() * sizeof(float)) == 0);
  // Where the claim stops: a row with no visible key is NaN with -inf, uniform with lowest.
  Mat all = xt::ones<float>({T, T});
  const Ten4 none_inf = attn::softmax_rows(attn::masked_fill(scores, all, -INFINITY));
  const Ten4 none_fill = attn::softmax_rows(attn::masked_fill(scores, all, lowest));
  CHECK(std::isnan(none_inf(0, 0, 0, 0)));
  CHECK(none_fill(0, 0, 0, 0) == doctest::Approx(1.0 / T));
}

// ---------------------------------------------------------------- whole models

TEST_CASE("gpt2_tiny: embeddings, two layers, ln_f and tied logits equal the fixture") {
  const attn::Gpt2Model m = gpt2_tiny();
  attn::ModelTrace tr;
  const Ten3 logits = attn::gpt2_forward(m, fixture_ids(), &tr);  // (1, 9, 96)
  check_against_fixture(tr, logits, 2);
}

TEST_CASE("llama3_tiny_bf16: GQA 6 over 2, llama3 RoPE scaling, tied head") {
  const attn::LlamaModel m = llama_tiny(kLlama3);
  attn::ModelTrace tr;
  const Ten3 logits = attn::llama_forward(m, fixture_ids(), &tr);  // (1, 9, 128)
  check_against_fixture(tr, logits, 2);
  // The scaling is not decorative: without it the attention weights move past the tolerance.
  attn::LlamaModel plain = m;
  plain.inv_freq = attn::rope_inv_freq(8, 500000.0f);
  attn::ModelTrace tr_plain;
  attn::llama_forward(plain, fixture_ids(), &tr_plain);
  const double off = max_abs(tr_plain.layers[0].attn_weights, expected<4>("attn_weights_0"));
  MESSAGE("without llama3 scaling: attn_weights_0 off by " << off);
  CHECK(off > 1e-4);
}

TEST_CASE("llama_tiny_f16_sharded: three layers, plain RoPE, untied lm_head") {
  const attn::LlamaModel m = llama_tiny(kLlamaF16);
  attn::ModelTrace tr;
  const Ten3 logits = attn::llama_forward(m, fixture_ids(), &tr);  // (1, 7, 100)
  check_against_fixture(tr, logits, 3);
}

TEST_CASE("qwen2_tiny: q/k/v biases, one kv head (multi-query), theta 1e6") {
  const attn::LlamaModel m = llama_tiny(kQwen2);
  attn::ModelTrace tr;
  const Ten3 logits = attn::llama_forward(m, fixture_ids(), &tr);  // (1, 10, 80)
  check_against_fixture(tr, logits, 2);
}

// ---------------------------------------------------------------- two paths, one result

namespace {

// Both paths over a batch of two sequences: the fixture's ids and the same ids reversed.
Ids two_rows(const Ids& ids) {
  const std::size_t T = ids.shape()[1];
  Ids two = xt::empty<std::size_t>({std::size_t{2}, T});  // (2, T)
  for (std::size_t t = 0; t < T; ++t) {
    two(0, t) = ids(0, t);
    two(1, t) = ids(0, T - 1 - t);
  }
  return two;
}

template <class Model, class Forward>
void paths_agree(const Model& m, Forward forward) {
  const Ids ids = two_rows(fixture_ids());
  attn::ModelTrace tr;
  const Ten3 lessons = forward(m, ids, &tr);     // (2, T, V)
  const Ten3 fast = forward(m, ids, nullptr);    // (2, T, V)
  const double d = max_rel(fast, lessons);
  MESSAGE(g_case << ": fast path vs lessons' path, logits max rel diff " << d);
  CHECK(d <= 1e-5);
  // Row 0 of the batch is the fixture's sequence alone.
  const Ten3 one = forward(m, fixture_ids(), nullptr);  // (1, T, V)
  CHECK(max_rel(one, Ten3(xt::view(fast, xt::range(0, 1), xt::all(), xt::all()))) <= 1e-5);
}

}  // namespace

TEST_CASE("the fast path gives the lessons' path's logits: GPT-2 (h_kv = h)") {
  paths_agree(gpt2_tiny(), [](const attn::Gpt2Model& m, const Ids& ids, attn::ModelTrace* t) {
    return attn::gpt2_forward(m, ids, t);
  });
}

TEST_CASE("the fast path gives the lessons' path's logits: Llama 3 GQA, Llama MHA, Qwen2 MQA") {
  for (const LlamaConfig* c : {&kLlama3, &kLlamaF16, &kQwen2})
    paths_agree(llama_tiny(*c), [](const attn::LlamaModel& m, const Ids& ids, attn::ModelTrace* t) {
      return attn::llama_forward(m, ids, t);
    });
}

TEST_CASE("a layer refuses weights that do not fit, naming the shapes") {
  attn::LlamaLayer l = llama_tiny(kQwen2).layers[0];
  l.kv_heads = 3;
  CHECK(contains(refusal([&] { attn::llama_layer_head_width(l); }), "3 key/value heads do not divide 4"));
  l.kv_heads = 2;
  CHECK(contains(refusal([&] { attn::llama_layer_head_width(l); }), "k_proj (8, 32)"));
  attn::Gpt2Layer g = gpt2_tiny().layers[0];
  const Ten3 x = xt::zeros<float>({1, 3, 16});  // d 16 against the layer's 32
  CHECK(contains(refusal([&] { attn::gpt2_layer_forward(g, x); }), "x (1, 3, 16)"));
  g.heads = 5;
  CHECK(contains(refusal([&] { attn::gpt2_layer_head_width(g); }), "5 heads do not divide"));
  const attn::Gpt2Model m = gpt2_tiny();
  Ids far = xt::zeros<std::size_t>({std::size_t{1}, std::size_t{65}});  // (1, 65): past n_positions 64
  CHECK(contains(refusal([&] { attn::gpt2_embeddings(m.wte, m.wpe, far); }), "wpe (64, 32)"));
}
