// Lesson: from multi-head to grouped-query to multi-query attention (Ainslie et al. 2023, GQA;
// Shazeer 2019, MQA; the Llama-3.2-3B attention block as the worked example).
//
// The queries keep h heads; the keys and values are projected to h_kv heads only, and each of
// them serves h / h_kv query heads in a row. PyTorch code usually copies them per query head
// (repeat_interleave); core reads them in place. The lesson shows the copy, checks that reading
// in place gives the same attention, checks that h_kv = h is ordinary multi-head attention, and
// ends with what the sharing buys: the KV cache per token, here and at Llama-3.2-3B's size.
//
// Legend: B batch, T tokens, d_in embedding width (also the output width), h query heads,
// h_kv key/value heads, groups = h / h_kv, d_k = d_in / h head width.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"
#include "core/kv_cache.hpp"
#include "core/linear.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

// A layer whose key/value weights hold every kv head once per query head reading it: rows of
// kv head kv_head_of(i) placed at query head i's rows. (rows, d_in) -> (h * d_k, d_in).
Linear expand_kv_weight(const Linear& kv_layer, std::size_t h, std::size_t h_kv, std::size_t d_k) {
  const std::size_t d_in = kv_layer.weight.shape()[1];
  Linear out;
  out.weight = xt::zeros<float>({h * d_k, d_in});  // (h * d_k, d_in)
  for (std::size_t i = 0; i < h; ++i) {
    const std::size_t g = kv_head_of(i, h, h_kv);
    xt::view(out.weight, xt::range(i * d_k, (i + 1) * d_k), xt::all()) =
        xt::view(kv_layer.weight, xt::range(g * d_k, (g + 1) * d_k), xt::all());  // (d_k, d_in)
  }
  return out;
}

}  // namespace

void lesson_gqa(const LessonOptions& opts, report::Report& out) {
  const std::uint64_t seed = opts.seed.value_or(123);
  const LessonInput in = lesson_input(opts, 8, 1, true);
  const std::size_t B = in.B, T = in.T, d_in = in.d_in;
  const auto& tok = in.rows;
  const auto& cols = in.cols;

  const std::size_t h = size_option(opts.heads, 4, "--heads");
  if (d_in % h != 0)
    throw UsageError("--heads must divide --d-in", "--heads", "a divisor of " + std::to_string(d_in),
                     std::to_string(h));
  const std::size_t d_k = d_in / h;
  const std::size_t h_kv = size_option(opts.kv_heads, h % 2 == 0 ? h / 2 : h, "--kv-heads");
  if (h_kv > h || h % h_kv != 0)
    throw UsageError("--kv-heads must divide --heads", "--kv-heads", "a divisor of " + std::to_string(h),
                     std::to_string(h_kv));
  const std::size_t groups = h / h_kv;  // query heads per kv head
  check_size("attn_scores", {B, h, T, T}, opts.shapes_only, "--batch, --heads, --seq-len");
  check_size("W_query.weight", {h * d_k, d_in}, opts.shapes_only, "--d-in");

  // Four bias-free layers, drawn in the order a GQA module's __init__ builds them.
  recipe::Recipe steps = in.recipe;
  TorchGenerator gen(seed);
  steps.seed(gen, seed);
  GqaModel m;
  m.heads = h;
  m.kv_heads = h_kv;
  m.W_query = linear_weights(opts, "W_query", d_in, h * d_k, false, gen, steps);     // weight (h * d_k, d_in)
  m.W_key = linear_weights(opts, "W_key", d_in, h_kv * d_k, false, gen, steps);      // weight (h_kv * d_k, d_in)
  m.W_value = linear_weights(opts, "W_value", d_in, h_kv * d_k, false, gen, steps);  // weight (h_kv * d_k, d_in)
  m.out_proj = linear_weights(opts, "out_proj", h * d_k, d_in, false, gen, steps);   // weight (d_in, h * d_k)

  std::vector<std::string> setting;
  if (steps.uses_seed()) setting.push_back("seed " + std::to_string(seed));
  setting.push_back("batch " + std::to_string(B));
  setting.push_back("tokens " + std::to_string(T));
  setting.push_back("d_in " + std::to_string(d_in));
  setting.push_back("heads " + std::to_string(h));
  setting.push_back("kv_heads " + std::to_string(h_kv));
  setting.push_back("d_k " + std::to_string(d_k));
  setting.push_back("causal True");
  out.header = {"gqa", "Grouped-query attention: from multi-head to multi-query",
                "Ainslie et al. 2023, GQA; the Llama-3.2-3B attention block", setting, steps.lines()};

  const Ten3& x = in.x;                        // (B, T, d_in)
  const GqaForward f = gqa_forward(m, x, true);  // every stage, (B, T, d_in) -> (B, T, d_in)
  const std::string H = std::to_string(h), HKV = std::to_string(h_kv), DK = std::to_string(d_k),
                    G = std::to_string(groups);

  inputs_stage(out, BatchView(true), in, "Inputs: a batch of token embeddings");

  {
    auto& s = out.stage("Projections: queries h * d_k wide, keys and values only h_kv * d_k",
                        "queries = x @ W_query.weight^T   # W_query = nn.Linear(d_in, h*d_k, bias=False)\n"
                        "keys = x @ W_key.weight^T; values = x @ W_value.weight^T   # nn.Linear(d_in, h_kv*d_k, bias=False)");
    s.in("x", x);
    s.show("W_query.weight", m.W_query.weight).show("W_key.weight", m.W_key.weight);
    s.show("W_value.weight", m.W_value.weight).show("out_proj.weight", m.out_proj.weight);
    s.show("queries", f.queries, tok).show("keys", f.keys, tok).show("values", f.values, tok);
    s.note("W_query has " + std::to_string(h * d_k) + " rows (" + H + " heads of " + DK + "); W_key and W_value have " +
           std::to_string(h_kv * d_k) + " (" + HKV + " heads of " + DK + "), so the key and value projections are " +
           ratio_text(h, h_kv) + " narrower than the query projection.");
  }

  {
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < h; ++i) rows.push_back({std::to_string(i), std::to_string(kv_head_of(i, h, h_kv))});
    auto& s = out.stage("Split into heads: " + H + " query heads, " + HKV + " key/value heads",
                        "q_heads = queries.view(B, T, h, d_k).transpose(1, 2)\n"
                        "k_heads = keys.view(B, T, h_kv, d_k).transpose(1, 2)   # likewise v_heads");
    s.in("queries", f.queries).in("keys", f.keys);
    s.show("q_heads", f.q_heads, tok).show("k_heads", f.k_heads, tok).show("v_heads", f.v_heads, tok);
    s.table({"query head i", "reads kv head i // " + G}, rows);
    s.note("Query heads " + std::string(groups > 1 ? "sit in groups of " + G + " next to each other" : "each have their own kv head") +
           ": query head i reads key/value head i // " + G + ". " +
           (h_kv == h ? "With h_kv = h this is ordinary multi-head attention."
                      : h_kv == 1 ? "With h_kv = 1 all of them read the same one: multi-query attention."
                                  : "This is grouped-query attention."));
  }

  const Ten4 k_rep = repeat_kv_heads(f.k_heads, groups);  // (B, h_kv, T, d_k) -> (B, h, T, d_k)
  const Ten4 v_rep = repeat_kv_heads(f.v_heads, groups);  // (B, h, T, d_k)
  const Attention copied = scaled_dot_product_attention(f.q_heads, k_rep, v_rep, true);  // context (B, h, T, d_k)
  {
    auto& s = out.stage("The copy PyTorch code makes, and why core does not need it",
                        "k_rep = k_heads.repeat_interleave(h // h_kv, dim=1)   # likewise v_rep\n"
                        "context = softmax(causal(q_heads @ k_rep.transpose(2, 3)) / sqrt(d_k)) @ v_rep");
    s.in("k_heads", f.k_heads);
    s.show("k_rep", k_rep, tok);
    check_close(s, "attention read in place (no copy) equals attention on the repeated copy", f.attn.context,
                copied.context);
    if (groups > 1)
      s.note("The copy holds " + std::to_string(k_rep.size()) + " numbers per role where " +
             std::to_string(f.k_heads.size()) + " are distinct: each kv head appears " + G +
             " times in a row. Core instead multiplies the " + G + " adjacent query heads of a group, one (" +
             std::to_string(groups * T) + ", " + DK + ") block, against their kv head directly.");
    else
      s.note("With h_kv = h, repeat_interleave(1, dim=1) copies nothing new: k_rep is k_heads, " +
             std::to_string(k_rep.size()) + " numbers, one kv head per query head.");
  }

  {
    auto& s = out.stage("Causal attention and the output projection",
                        "attn_weights = softmax(attn_scores.masked_fill(mask, -inf) / sqrt(d_k), dim=-1)\n"
                        "output = (attn_weights @ v_rep).transpose(1, 2).reshape(B, T, h*d_k) @ out_proj.weight^T");
    s.in("q_heads", f.q_heads).in("k_rep", k_rep);
    s.show("attn_scores", f.attn.attn_scores, tok, cols);
    s.show("attn_weights", f.attn.attn_weights, tok, cols);
    check_rows_sum_to_one(s, "attn_weights", f.attn.attn_weights);
    s.show("context", f.context, tok);
    s.show("output", f.output, tok);
    double worst = 0.0;  // largest difference between two query heads sharing a kv head
    if (groups > 1)
      for (std::size_t i = 1; i < h; ++i)
        if (kv_head_of(i, h, h_kv) == kv_head_of(i - 1, h, h_kv)) {
          const auto a = xt::view(f.attn.attn_weights, xt::all(), i, xt::all(), xt::all());
          const auto b = xt::view(f.attn.attn_weights, xt::all(), i - 1, xt::all(), xt::all());
          worst = std::fmax(worst, static_cast<double>(xt::amax(xt::abs(a - b))()));
        }
    if (groups > 1)
      s.note("Query heads that share keys still weigh them differently: their own queries differ. The largest "
             "difference between the weights of two neighbouring heads in one group is " +
             report::fixed(worst, 4) + ".");
  }

  // h_kv = h: an MHA layer whose key/value weights are this layer's, one copy per query head.
  GqaModel mha = m;
  mha.kv_heads = h;
  mha.W_key = expand_kv_weight(m.W_key, h, h_kv, d_k);      // weight (h * d_k, d_in)
  mha.W_value = expand_kv_weight(m.W_value, h, h_kv, d_k);  // weight (h * d_k, d_in)
  const GqaForward f_mha = gqa_forward(mha, x, true);         // (B, T, d_in)
  // Ordinary multi-head attention, the heads lesson's route: split, attend per head, merge.
  const Ten4 q_plain = swap_token_head_axes(split_heads(linear(mha.W_query, x), h));  // (B, h, T, d_k)
  const Ten4 k_plain = swap_token_head_axes(split_heads(linear(mha.W_key, x), h));    // (B, h, T, d_k)
  const Ten4 v_plain = swap_token_head_axes(split_heads(linear(mha.W_value, x), h));  // (B, h, T, d_k)
  const Attention plain = scaled_dot_product_attention(q_plain, k_plain, v_plain, true);  // context (B, h, T, d_k)
  const Ten3 plain_out = linear(mha.out_proj, merge_heads(swap_token_head_axes(plain.context)));  // (B, T, d_in)
  {
    auto& s = out.stage("h_kv = h is multi-head attention; h_kv = 1 is multi-query attention",
                        "W_key_mha.weight = W_key.weight.view(h_kv, d_k, d_in).repeat_interleave(h // h_kv, dim=0)"
                        ".reshape(h*d_k, d_in)");
    s.in("W_key.weight", m.W_key.weight);
    s.show("W_key_mha.weight", mha.W_key.weight);
    check_close(s, "GQA run with h_kv = h equals ordinary multi-head attention (split, attend, merge)", f_mha.output,
                plain_out);
    check_close(s, "this GQA layer equals the multi-head layer whose key/value heads are its kv heads repeated",
                f.output, f_mha.output);
    s.note("GQA is multi-head attention with tied key/value weights: the " + std::to_string(h) +
           "-head layer above has " + std::to_string(h * d_k) + " key rows but only " + std::to_string(h_kv * d_k) +
           " distinct ones. At the other end, --kv-heads 1 is multi-query attention (Shazeer 2019): W_key would be (" +
           DK + ", " + std::to_string(d_in) + ") and all " + H + " query heads would read one key/value head.");
  }

  {
    const std::uint64_t context = 131072;
    std::vector<std::vector<std::string>> rows;
    auto add = [&](const std::string& model, const std::string& kind, std::uint64_t layers, std::uint64_t kv,
                   std::uint64_t dk, std::uint64_t dtype, const std::string& dname, std::uint64_t mha_bytes,
                   bool long_context) {
      const std::uint64_t per = kv_cache_bytes_per_token(layers, kv, dk, dtype);
      rows.push_back({model, kind, std::to_string(kv), dname, with_commas(per),
                      long_context ? human_bytes(kv_cache_bytes(per, context)) : "-", ratio_text(mha_bytes, per)});
      return per;
    };
    // This lesson's layer: 1 layer, float32.
    const std::uint64_t here_mha = kv_cache_bytes_per_token(1, h, d_k, 4);
    add("this lesson (1 layer)", "MHA", 1, h, d_k, 4, "float32", here_mha, false);
    const std::uint64_t here_gqa =
        h_kv != h && h_kv != 1 ? add("this lesson (1 layer)", "GQA", 1, h_kv, d_k, 4, "float32", here_mha, false) : 0;
    add("this lesson (1 layer)", "MQA", 1, 1, d_k, 4, "float32", here_mha, false);
    // Llama-3.2-3B: 28 layers, 24 query heads, 8 kv heads of 128, bf16.
    const std::uint64_t llama_mha = kv_cache_bytes_per_token(28, 24, 128, 2);
    add("Llama-3.2-3B (28 layers)", "MHA", 28, 24, 128, 2, "bf16", llama_mha, true);
    const std::uint64_t llama_gqa = add("Llama-3.2-3B (28 layers)", "GQA (real)", 28, 8, 128, 2, "bf16", llama_mha, true);
    const std::uint64_t llama_mqa = add("Llama-3.2-3B (28 layers)", "MQA", 28, 1, 128, 2, "bf16", llama_mha, true);

    auto& s = out.stage("What sharing buys: the KV cache",
                        "bytes per token = 2 (K and V) * layers * h_kv * d_k * bytes per number");
    s.table({"model", "attention", "kv heads", "dtype", "bytes per token", "cache at 131,072 tokens", "MHA / this"},
            rows);
    s.check("Llama-3.2-3B's GQA cache is 114,688 bytes per token (2 * 28 * 8 * 128 * 2)", "|computed - 114,688|",
            std::fabs(static_cast<double>(llama_gqa) - 114688.0), Relation::AtMost, 0.0);
    s.check("sharing divides the cache by h / h_kv exactly: Llama's MHA needs 24 / 8 = 3 times GQA's bytes",
            "|MHA - 3 * GQA| bytes", std::fabs(static_cast<double>(llama_mha) - 3.0 * static_cast<double>(llama_gqa)),
            Relation::AtMost, 0.0);
    const std::uint64_t full_gqa = kv_cache_bytes(llama_gqa, context), full_mha = kv_cache_bytes(llama_mha, context);
    s.note("At Llama-3.2-3B's full context of " + with_commas(context) + " tokens the GQA cache holds " +
           human_bytes(full_gqa) + " for one sequence; with a key/value head per query head it would hold " +
           human_bytes(full_mha) + ", " + human_bytes(full_mha - full_gqa) + " more; with a single one (MQA) " +
           human_bytes(kv_cache_bytes(llama_mqa, context)) + ". Its k_proj is Linear(3072 -> 1024): 8 kv heads of 128.");
    s.note("Here the layer is tiny: " + with_commas(here_mha) + " bytes per token for MHA" +
           (here_gqa ? ", " + with_commas(here_gqa) + " for GQA with " + HKV + " kv heads" : std::string()) + ", " +
           with_commas(kv_cache_bytes_per_token(1, 1, d_k, 4)) +
           " for MQA. The cache shrinks by the same factor h / h_kv at every size; the queries, and so the number of "
           "attention patterns, stay at " + H + ".");
  }
}

// Teaching order 660: after heads (600), before scaling (700); docs/gqa.md is its page.
ATTN_REGISTER_LESSON({660, "gqa", "Grouped-query attention: from multi-head to multi-query",
                      "h query heads share h_kv key/value heads; the repeat_interleave copy; the KV cache it shrinks",
                      "Ainslie et al. 2023, GQA; the Llama-3.2-3B attention block",
                      kSeed | kBatch | kSeqLen | kDIn | kHeads | kKvHeads | kTokens, lesson_gqa});

}  // namespace attn
