// --preset NAME: the exact configurations of the articles, by name. A preset fills in the
// options the learner did not give (what they give explicitly wins), and says on screen what it
// took from the article and what it could not.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"

namespace attn {

struct Preset {
  const char* name;
  const char* follows;                // the article and section
  std::vector<const char*> lessons;   // lessons it configures
  const char* summary;                // one line for `attn list --presets`
};

const std::vector<Preset>& presets();

// Llama-3.2-3B's attention block, as its config.json gives it. `--preset llama` (heads, gqa) and
// gqa's KV-cache table all read these numbers, so the lessons cannot describe two different models.
struct LlamaSizes {
  std::size_t hidden = 3072;     // hidden_size: d_in, and q_proj's and o_proj's width
  std::size_t heads = 24;        // num_attention_heads
  std::size_t kv_heads = 8;      // num_key_value_heads
  std::size_t head_dim = 128;    // hidden / heads
  std::size_t layers = 28;       // num_hidden_layers
  std::size_t dtype_bytes = 2;   // torch_dtype bfloat16
  std::size_t context = 131072;  // max_position_embeddings
};
const LlamaSizes& llama_3_2_3b();

// How an article writes its mask: which entries are hidden, and how the code says so.
enum class MaskConvention {
  HideWhereOne,   // mask = torch.triu(torch.ones(T, T), diagonal=1); masked_fill(mask.bool(), fill): 1 = hidden
  HideWhereZero,  // mask = torch.tril(torch.ones(T, T)); masked_fill(mask == 0, fill): 0 = hidden
  FromScores,     // torch.triu(attn_score, diagonal=1).bool(): hidden where a score above the diagonal is nonzero
};

// What a preset's article does differently from the lessons' defaults (Raschka's book): the
// lessons read it to draw, mask and name things the article's way.
struct ArticleModel {
  MaskConvention mask = MaskConvention::HideWhereOne;
  float fill = -std::numeric_limits<float>::infinity();
  std::string fill_text = "-inf";
  bool fill_after_scaling = false;  // masked_fill on attn_scores / sqrt(d_k) (else on attn_scores)
  bool out_proj_bias = true;        // heads: the output layer's bias
  bool key_before_query = false;    // causal: the key layer is constructed (drawn) before the query layer
  // Layer names as the article prints them: query, key, value, output.
  std::string query = "W_query", key = "W_key", value = "W_value", output = "out_proj";
  // Mistakes in the article's code that the lessons show next to the fix.
  bool missing_transpose = false;  // rakesh: query.view(B, T, h, d_k) @ keys.view(...).transpose(2, 3)
  bool combine_heads_returns_none = false;  // llama walk-through: combine_heads has no return
};

// The model of preset `name` ("" or an unknown name: the defaults).
ArticleModel article_model(const std::string& name);
// The `follows:` line of a preset, or nullptr for "", an unknown name, or raschka (whose lessons
// already name the book and its section).
const char* preset_follows(const std::string& name);

// Fills `opts` for `lesson` from preset `name`. `values_requested` (--values) keeps the values of
// a preset that shows shapes only by default. Throws UsageError for an unknown preset (with the
// nearest name) or one that does not configure this lesson.
void apply_preset(const std::string& name, const std::string& lesson, bool values_requested, LessonOptions& opts);

}  // namespace attn
