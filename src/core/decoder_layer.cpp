// GPT-2 and Llama / Qwen2 decoder layers, on the lessons' path or the fast path (see
// decoder_layer.hpp).
//
// Legend: B batch, T tokens, d hidden size, h query heads, h_kv key/value heads, hd head width.
#include "core/decoder_layer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/attention.hpp"
#include "core/fast_attention.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"

namespace attn {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

void check_norm(const char* layer, const char* name, const Vec& weight, const Vec* bias, std::size_t d) {
  if (weight.size() != d || (bias && bias->size() != d))
    refuse(std::string(layer) + ": " + name + " weight " + shape_of(weight) +
           (bias ? ", bias " + shape_of(*bias) : std::string()) + " must be (d,) = (" + std::to_string(d) + ",)");
}

void check_x(const char* layer, const Ten3& x, std::size_t d) {
  if (x.shape()[2] != d) refuse(std::string(layer) + ": x " + shape_of(x) + " must be (B, T, d) with d " + std::to_string(d));
  if (x.shape()[1] == 0) refuse(std::string(layer) + ": x " + shape_of(x) + " has no tokens");
}

// Columns [begin, begin + width) of every row: (B, T, n) -> (B, T, width), a contiguous copy.
Ten3 columns(const Ten3& x, std::size_t begin, std::size_t width) {
  const std::size_t rows = x.shape()[0] * x.shape()[1], n = x.shape()[2];
  Ten3 out = xt::empty<float>({x.shape()[0], x.shape()[1], width});  // (B, T, width)
  for (std::size_t r = 0; r < rows; ++r) std::copy_n(x.data() + r * n + begin, width, out.data() + r * width);
  return out;
}

// a + b, element by element: (B, T, d).
Ten3 add(const Ten3& a, const Ten3& b) {
  Ten3 out = xt::empty<float>(a.shape());  // (B, T, d)
  for (std::size_t i = 0; i < a.size(); ++i) out.data()[i] = a.data()[i] + b.data()[i];
  return out;
}

// (B, T, heads * hd) -> (B, T, heads, hd) -> (B, heads, T, hd)
Ten4 to_heads(const Ten3& t, std::size_t heads) { return swap_token_head_axes(split_heads(t, heads)); }

// (B, h, T, hd) -> (B, T, h, hd) -> (B, T, h * hd)
Ten3 from_heads(const Ten4& t) { return merge_heads(swap_token_head_axes(t)); }

// The intermediates every family's layer has, moved into the trace (the output is copied: the
// caller gets it too).
void keep_block(LayerTrace& trace, Ten3& normed, Ten3& context, Ten3& attn_out, Ten3& residual, Ten3& mlp_normed,
                Ten3& mlp_out, const Ten3& output) {
  trace.normed = std::move(normed);
  trace.context = std::move(context);
  trace.attn_out = std::move(attn_out);
  trace.residual = std::move(residual);
  trace.mlp_normed = std::move(mlp_normed);
  trace.mlp_out = std::move(mlp_out);
  trace.output = output;
}

}  // namespace

std::size_t gpt2_layer_head_width(const Gpt2Layer& l) {
  const std::size_t d = l.c_attn.weight.shape()[0], h = l.heads;
  if (d == 0 || h == 0 || d % h != 0)
    refuse("gpt2 layer: " + std::to_string(h) + " heads do not divide the hidden size " + std::to_string(d) +
           " (c_attn " + shape_of(l.c_attn.weight) + ")");
  if (l.c_attn.weight.shape()[1] != 3 * d || l.c_attn.bias.size() != 3 * d)
    refuse("gpt2 layer: c_attn weight " + shape_of(l.c_attn.weight) + ", bias " + shape_of(l.c_attn.bias) +
           " must be (d, 3d), (3d,) with d " + std::to_string(d));
  if (l.c_proj.weight.shape()[0] != d || l.c_proj.weight.shape()[1] != d || l.c_proj.bias.size() != d)
    refuse("gpt2 layer: attn c_proj weight " + shape_of(l.c_proj.weight) + ", bias " + shape_of(l.c_proj.bias) +
           " must be (d, d), (d,) with d " + std::to_string(d));
  check_norm("gpt2 layer", "ln_1", l.ln_1.weight, &l.ln_1.bias, d);
  check_norm("gpt2 layer", "ln_2", l.ln_2.weight, &l.ln_2.bias, d);
  if (l.mlp.c_fc.weight.shape()[0] != d || l.mlp.c_proj.weight.shape()[1] != d)
    refuse("gpt2 layer: mlp c_fc " + shape_of(l.mlp.c_fc.weight) + " and c_proj " + shape_of(l.mlp.c_proj.weight) +
           " must be (d, f) and (f, d) with d " + std::to_string(d));
  return d / h;
}

std::size_t llama_layer_head_width(const LlamaLayer& l) {
  const std::size_t h = l.heads, h_kv = l.kv_heads;
  if (h == 0 || h_kv == 0 || h % h_kv != 0)
    refuse("llama layer: " + std::to_string(h_kv) + " key/value heads do not divide " + std::to_string(h) +
           " query heads");
  const std::size_t q_out = l.q_proj.weight.shape()[0], d = l.q_proj.weight.shape()[1];
  if (q_out == 0 || q_out % h != 0)
    refuse("llama layer: q_proj " + shape_of(l.q_proj.weight) + " does not split into " + std::to_string(h) +
           " heads");
  const std::size_t hd = q_out / h;
  const Shape kv{h_kv * hd, d};
  if (to_shape(l.k_proj.weight.shape()) != kv || to_shape(l.v_proj.weight.shape()) != kv)
    refuse("llama layer: k_proj " + shape_of(l.k_proj.weight) + " and v_proj " + shape_of(l.v_proj.weight) +
           " must be (h_kv * hd, d) = " + shape_str(kv) + " beside q_proj " + shape_of(l.q_proj.weight));
  const auto bias_ok = [](const Linear& p) { return !p.has_bias() || p.bias.size() == p.weight.shape()[0]; };
  if (!bias_ok(l.q_proj) || !bias_ok(l.k_proj) || !bias_ok(l.v_proj) || !bias_ok(l.o_proj))
    refuse("llama layer: a projection's bias does not match its rows: q " + shape_of(l.q_proj.bias) + ", k " +
           shape_of(l.k_proj.bias) + ", v " + shape_of(l.v_proj.bias) + ", o " + shape_of(l.o_proj.bias));
  if (l.o_proj.weight.shape()[0] != d || l.o_proj.weight.shape()[1] != q_out)
    refuse("llama layer: o_proj " + shape_of(l.o_proj.weight) + " must be (d, h * hd) = (" + std::to_string(d) +
           ", " + std::to_string(q_out) + ")");
  check_norm("llama layer", "input_layernorm", l.input_layernorm.weight, nullptr, d);
  check_norm("llama layer", "post_attention_layernorm", l.post_attention_layernorm.weight, nullptr, d);
  if (l.mlp.gate_proj.weight.shape()[1] != d || l.mlp.down_proj.weight.shape()[0] != d)
    refuse("llama layer: mlp gate_proj " + shape_of(l.mlp.gate_proj.weight) + " and down_proj " +
           shape_of(l.mlp.down_proj.weight) + " must be (f, d) and (d, f) with d " + std::to_string(d));
  rope_pairs(hd);  // RoPE needs an even head width
  return hd;
}

Ten3 gpt2_layer_forward(const Gpt2Layer& l, const Ten3& x, LayerTrace* trace) {
  const std::size_t hd = gpt2_layer_head_width(l);
  const std::size_t d = hd * l.heads, h = l.heads;
  check_x("gpt2 layer", x, d);

  Ten3 normed = layer_norm(l.ln_1, x);  // (B, T, d)
  const Ten3 qkv = conv1d(l.c_attn, normed);  // (B, T, d) @ (d, 3d) -> (B, T, 3d)
  const Ten3 queries = columns(qkv, 0, d);    // (B, T, 3d) -> (B, T, d): .split(d, dim=2)[0]
  const Ten3 keys = columns(qkv, d, d);       // (B, T, d)
  const Ten3 values = columns(qkv, 2 * d, d); // (B, T, d)

  Ten3 context;  // (B, T, h * hd)
  if (trace) {
    Ten4 q = to_heads(queries, h);  // (B, T, d) -> (B, h, T, hd)
    Ten4 k = to_heads(keys, h);     // (B, h, T, hd)
    Ten4 v = to_heads(values, h);   // (B, h, T, hd)
    Attention a = scaled_dot_product_attention(q, k, v, true);  // weights (B, h, T, T), context (B, h, T, hd)
    context = from_heads(a.context);                            // (B, h, T, hd) -> (B, T, d)
    trace->q_proj = queries;
    trace->k_proj = keys;
    trace->v_proj = values;
    trace->q = std::move(q);
    trace->k = std::move(k);
    trace->v = std::move(v);
    trace->scores = std::move(a.scaled);
    trace->attn_weights = std::move(a.attn_weights);
  } else {
    context = attention_context_merged(queries, keys, values, h, h, true);  // (B, T, d)
  }
  Ten3 attn_out = conv1d(l.c_proj, context);  // (B, T, d) @ (d, d) -> (B, T, d)
  Ten3 residual = add(x, attn_out);           // (B, T, d)
  Ten3 mlp_normed = layer_norm(l.ln_2, residual);  // (B, T, d)
  Ten3 mlp_out = gpt2_mlp(l.mlp, mlp_normed);      // (B, T, d) -> (B, T, f) -> (B, T, d)
  Ten3 output = add(residual, mlp_out);            // (B, T, d)
  if (trace) keep_block(*trace, normed, context, attn_out, residual, mlp_normed, mlp_out, output);
  return output;
}

Ten3 llama_layer_forward(const LlamaLayer& l, const Ten3& x, const RopeTables& rope, LayerTrace* trace) {
  const std::size_t hd = llama_layer_head_width(l);
  const std::size_t d = l.q_proj.weight.shape()[1], h = l.heads, h_kv = l.kv_heads, T = x.shape()[1];
  check_x("llama layer", x, d);
  if (rope.cos.shape()[0] != T || rope.cos.shape()[1] != hd)
    refuse("llama layer: x " + shape_of(x) + " with head width " + std::to_string(hd) +
           " needs RoPE tables (T, hd) = (" + std::to_string(T) + ", " + std::to_string(hd) + "), got cos " +
           shape_of(rope.cos));

  Ten3 normed = rms_norm(l.input_layernorm, x);  // (B, T, d)
  Ten3 queries = linear(l.q_proj, normed);  // (B, T, d) -> (B, T, h * hd)
  Ten3 keys = linear(l.k_proj, normed);     // (B, T, d) -> (B, T, h_kv * hd)
  Ten3 values = linear(l.v_proj, normed);   // (B, T, d) -> (B, T, h_kv * hd)

  Ten3 context;  // (B, T, h * hd)
  if (trace) {
    Ten4 q = apply_rope(to_heads(queries, h), rope, RopeStyle::half);  // (B, h, T, hd), rotated
    Ten4 k = apply_rope(to_heads(keys, h_kv), rope, RopeStyle::half);  // (B, h_kv, T, hd), rotated
    Ten4 v = to_heads(values, h_kv);                                   // (B, h_kv, T, hd)
    Attention a = grouped_query_attention(q, k, v, true);  // weights (B, h, T, T), context (B, h, T, hd)
    context = from_heads(a.context);                       // (B, h, T, hd) -> (B, T, h * hd)
    trace->q_proj = std::move(queries);
    trace->k_proj = std::move(keys);
    trace->v_proj = std::move(values);
    trace->q = std::move(q);
    trace->k = std::move(k);
    trace->v = std::move(v);
    trace->scores = std::move(a.scaled);
    trace->attn_weights = std::move(a.attn_weights);
  } else {
    queries = apply_rope_merged(queries, h, rope, RopeStyle::half);  // (B, T, h * hd), rotated in place of .view
    keys = apply_rope_merged(keys, h_kv, rope, RopeStyle::half);     // (B, T, h_kv * hd)
    context = attention_context_merged(queries, keys, values, h, h_kv, true);  // (B, T, h * hd)
  }
  Ten3 attn_out = linear(l.o_proj, context);  // (B, T, h * hd) -> (B, T, d)
  Ten3 residual = add(x, attn_out);           // (B, T, d)
  Ten3 mlp_normed = rms_norm(l.post_attention_layernorm, residual);  // (B, T, d)
  Ten3 mlp_out = gated_mlp(l.mlp, mlp_normed);  // (B, T, d) -> (B, T, f) -> (B, T, d)
  Ten3 output = add(residual, mlp_out);         // (B, T, d)
  if (trace) keep_block(*trace, normed, context, attn_out, residual, mlp_normed, mlp_out, output);
  return output;
}

}  // namespace attn
