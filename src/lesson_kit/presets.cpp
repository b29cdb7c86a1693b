// --preset NAME: each article's configuration applied to LessonOptions, and article_model() (presets.hpp).
#include "lesson_kit/presets.hpp"

#include "lesson_kit/registry.hpp"

#include <algorithm>
#include <sstream>

namespace attn {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Phillips' X = pe(lut(tensor_sequences)) as the article prints it (3, 6, 8), to 2 decimals.
std::vector<float> phillips_x() {
  return {-3.45f, -1.34f, 4.12f,  -3.33f, -0.81f, -1.93f, -0.28f, 8.25f,   // "i"
          7.36f,  -1.09f, 2.32f,  1.52f,  3.50f,  1.42f,  0.46f,  -0.95f,  // "wonder"
          -2.26f, 0.53f,  -1.02f, 1.49f,  -3.97f, -2.19f, 2.86f,  -0.59f,  // "what"
          -3.87f, -2.02f, 1.46f,  6.78f,  0.88f,  1.08f,  -2.97f, 1.45f,   // "will"
          1.12f,  -2.09f, 1.19f,  3.87f,  -0.00f, 3.73f,  -0.88f, 1.12f,   // "come"
          -0.35f, -0.02f, 3.98f,  -0.20f, 7.05f,  1.55f,  0.00f,  -0.83f,  // "next"
          -4.27f, 0.17f,  -2.08f, 0.94f,  -6.35f, 1.99f,  5.23f,  5.18f,   // "this"
          -0.00f, -5.05f, -7.19f, 3.27f,  1.49f,  -7.11f, -0.59f, 0.52f,   // "is"
          0.54f,  -2.33f, -1.10f, -2.02f, -0.88f, -3.15f, 0.38f,  5.26f,   // "a"
          0.87f,  -2.98f, 2.67f,  3.32f,  1.16f,  0.00f,  1.74f,  5.28f,   // "basic"
          -5.58f, -2.09f, 0.96f,  -2.05f, -4.23f, 2.11f,  -0.00f, 0.61f,   // "example"
          6.39f,  2.15f,  -2.78f, 2.45f,  0.30f,  1.58f,  2.12f,  3.20f,   // "paragraph"
          4.51f,  -1.22f, 2.04f,  3.48f,  1.63f,  3.42f,  1.21f,  2.33f,   // "hello"
          -2.34f, 0.00f,  -1.13f, 1.51f,  -3.99f, -2.19f, 2.86f,  -0.59f,  // "what"
          -4.65f, -6.12f, -7.08f, 3.26f,  1.50f,  -7.11f, -0.59f, 0.52f,   // "is"
          -0.32f, -2.97f, -0.99f, -2.05f, -0.87f, -0.00f, 0.39f,  5.26f,   // "a"
          -0.12f, -2.61f, 2.77f,  3.28f,  1.17f,  0.00f,  1.74f,  5.28f,   // "basic"
          -5.64f, 0.49f,  2.32f,  -0.00f, -0.44f, 4.06f,  3.33f,  3.11f};  // "split"
}

template <class T>
void fill(std::optional<T>& field, T value) {
  if (!field) field = std::move(value);
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = {
      {"raschka", "Raschka, Build a Large Language Model (From Scratch), ch. 3",
       {"self-attention", "causal", "heads"},
       "the six tokens \"Your journey starts with one step\" and the book's seed for each section"},
      {"phillips", "Phillips, The Implemented Transformer: Multi-Head Attention",
       {"heads"},
       "the article's printed X (3, 6, 8), 4 heads of 2, biases on all four projections, no mask"},
      {"rakesh", "Rakesh, Transformer Block - Multihead Attention",
       {"heads"},
       "the article's literal x of shape (1, 3, 6), 2 heads of 3, causal; its missing transpose(1, 2) shown"},
      {"llama", "MultiHead Attention, visualised on Llama-3.2-3B",
       {"heads", "gqa"},
       "Llama-3.2-3B's sizes: 24 query heads of 128, 8 key/value heads, bias-free, shapes only; in heads the "
       "walk-through's mask == 0 filled with -1e9"},
      {"evolution", "Evolution of Attention Mechanism, the Attention class",
       {"causal"},
       "torch.manual_seed(0) in __init__, wk drawn before wq and wv; its mask triu(attn_score) shown next to the fix"},
  };
  return table;
}

const LlamaSizes& llama_3_2_3b() {
  static const LlamaSizes sizes;
  return sizes;
}

const char* preset_follows(const std::string& name) {
  if (name == "raschka") return nullptr;  // the lessons already name the book's section
  for (const auto& p : presets())
    if (name == p.name) return p.follows;
  return nullptr;
}

ArticleModel article_model(const std::string& name) {
  ArticleModel m;
  if (name == "phillips") {
    // scaled_dot_prod.masked_fill(mask == 0, -1e10), on the scaled scores; Wq, Wk, Wv, Wo.
    m.mask = MaskConvention::HideWhereZero;
    m.fill = -1e10f;
    m.fill_text = "-1e10";
    m.fill_after_scaling = true;
    m.query = "Wq", m.key = "Wk", m.value = "Wv", m.output = "Wo";
  } else if (name == "rakesh") {
    // mask = torch.triu(torch.ones(3, 3), diagonal=1).bool(); att_score.masked_fill_(mask, float('-inf')).
    m.query = "W_Query", m.key = "W_Key", m.value = "W_Value";
    m.missing_transpose = true;
  } else if (name == "llama") {
    // The model printed: q_proj, k_proj, v_proj, o_proj, all bias=False. The walk-through's code:
    // attention_scores.masked_fill(mask == 0, -1e9) on the scaled scores, and a combine_heads
    // without return.
    m.mask = MaskConvention::HideWhereZero;
    m.fill = -1e9f;
    m.fill_text = "-1e9";
    m.fill_after_scaling = true;
    m.out_proj_bias = false;
    m.query = "q_proj", m.key = "k_proj", m.value = "v_proj", m.output = "o_proj";
    m.combine_heads_returns_none = true;
  } else if (name == "evolution") {
    // attn_score = q @ k^T / sqrt(d_k); attn_score[torch.triu(attn_score, diagonal=1).bool()] = -inf.
    m.mask = MaskConvention::FromScores;
    m.fill_after_scaling = true;
    m.key_before_query = true;
    m.query = "wq", m.key = "wk", m.value = "wv";
  }
  return m;
}

void apply_preset(const std::string& name, const std::string& lesson, bool values_requested, LessonOptions& opts) {
  const auto& all = presets();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return name == p.name; });
  std::string names;
  for (const auto& p : all) names += (names.empty() ? "" : ", ") + std::string(p.name);
  if (it == all.end()) {
    std::vector<std::string> candidates;
    for (const auto& p : all) candidates.push_back(p.name);
    const std::string near = closest_name(name, candidates);
    throw UsageError("unknown preset '" + name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                     "--preset", "one of " + names, name);
  }
  if (std::find(it->lessons.begin(), it->lessons.end(), lesson) == it->lessons.end()) {
    std::string for_lessons;
    for (const char* l : it->lessons) for_lessons += (for_lessons.empty() ? "" : ", ") + std::string(l);
    throw UsageError("preset '" + name + "' does not configure lesson '" + lesson + "'", "--preset",
                     "a lesson among " + for_lessons, lesson);
  }
  opts.preset = name;
  const std::string from = std::string("Preset ") + name + " (" + it->follows + "): ";

  if (name == "raschka") {
    // The defaults already follow the book; the preset names the section each seed comes from.
    if (lesson == "self-attention") {
      fill(opts.seed, std::uint64_t{123});
      opts.preset_notes.push_back(from + "section 3.4, torch.manual_seed(123), d_in 3, d_out 2.");
    } else if (lesson == "causal") {
      fill(opts.seed, std::uint64_t{789});
      opts.preset_notes.push_back(from + "section 3.5, torch.manual_seed(789), d_in 3, d_out 2.");
    } else {
      fill(opts.seed, std::uint64_t{123});
      fill(opts.batch, std::size_t{2});
      fill(opts.d_out, std::size_t{2});
      fill(opts.heads, std::size_t{2});
      opts.preset_notes.push_back(from + "section 3.6.2, torch.manual_seed(123), the six tokens stacked twice, "
                                         "d_out 2, 2 heads, causal.");
    }
  } else if (name == "phillips") {
    if (!opts.tokens && !opts.input) {
      opts.tokens = words("i wonder what will come next");
      opts.more_sentences = {words("this is a basic example paragraph"), words("hello what is a basic split")};
      opts.input = ExternalTensor{"preset phillips (the article's printed X)", Shape{3, 6, 8}, phillips_x()};
    }
    if (!opts.input) fill(opts.d_in, std::size_t{8});
    fill(opts.seed, std::uint64_t{0});
    fill(opts.d_out, std::size_t{8});
    fill(opts.heads, std::size_t{4});
    fill(opts.causal, false);
    opts.qkv_bias = true;
    opts.preset_notes.push_back(
        from + "X = pe(lut(tensor_sequences)) for three sentences of 6 words, d_model 8, 4 heads of d_key 2, "
               "nn.Linear with bias for Wq, Wk, Wv and Wo, no mask (mask=None): (3, 6, 8) -> (3, 6, 4, 2) -> "
               "(3, 4, 6, 2) -> scores (3, 4, 6, 6) -> (3, 6, 8). X holds the numbers the article prints, to its "
               "2 decimals (a printed -0.00 is stored as -0.0). The article sets no seed and prints only Wq's "
               "weight, so the four layers here are drawn after torch.manual_seed(0): from Q on, the shapes "
               "are the article's and the numbers are not.");
    opts.preset_notes.push_back(
        "Printing: the article calls torch.set_printoptions(precision=2, sci_mode=False). attn prints the way "
        "PyTorch does by default (sci_mode=None): a tensor switches to e-notation when its smallest nonzero "
        "|value| is below 1e-4 or its largest is more than 1000 times its smallest. Where a tensor below prints "
        "in e-notation, PyTorch's default print would too.");
  } else if (name == "rakesh") {
    if (!opts.input) {
      opts.input = ExternalTensor{"preset rakesh (the article's literal x)", Shape{1, 3, 6},
                                  {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.10f, 0.11f, 0.12f,
                                   0.13f, 0.14f, 0.15f, 0.16f, 0.17f, 0.18f}};
    }
    fill(opts.seed, std::uint64_t{123});
    fill(opts.d_out, std::size_t{6});
    fill(opts.heads, std::size_t{2});
    fill(opts.causal, true);
    opts.preset_notes.push_back(from + "x = torch.tensor([[[0.1, ..., 0.6], [0.7, ..., 0.12], [0.13, ..., 0.18]]]) "
                                       "of shape (1, 3, 6), d_out 6, 2 heads of 3, bias-free projections, causal. "
                                       "The article sets no seed; this uses 123. Its code leaves out "
                                       ".transpose(1, 2) before the scores: a stage below shows what PyTorch "
                                       "does with it. The article stops at context_vector: its optional projection line, "
                                       "torch.nn.Module.out_proj, raises AttributeError (type object 'Module' has no "
                                       "attribute 'out_proj'), so the out_proj stage here is the book's.");
  } else if (name == "llama") {
    const LlamaSizes& L = llama_3_2_3b();
    const bool own_tokens = !opts.tokens && !opts.input;
    std::string sentence;  // what x embeds, for the note
    if (own_tokens) {
      opts.tokens = words("<|begin_of_text|> the financial bank is located on river bank");
      const std::size_t given = opts.tokens->size();
      sentence = "the " + std::to_string(given) +
                 " tokens of \"the financial bank is located on river bank\" with its begin-of-text token";
      if (opts.seq_len && *opts.seq_len != given) {
        // --seq-len: real context lengths. The walk-through's tokens cut short, or followed by
        // numbered ones (each with its own seeded vector, as --seq-len past the book's six does).
        const std::size_t T = *opts.seq_len;
        if (T < given) opts.tokens->resize(T);
        for (std::size_t t = given; t < T; ++t) opts.tokens->push_back("tok" + std::to_string(t + 1));
        sentence = std::to_string(T) + " tokens: " +
                   (T < given ? "the first " + std::to_string(T) + " of the walk-through's " + std::to_string(given)
                              : "the walk-through's " + std::to_string(given) + ", then tok" + std::to_string(given + 1) +
                                    " .. tok" + std::to_string(T));
      }
    }
    fill(opts.seed, std::uint64_t{0});
    fill(opts.batch, std::size_t{1});
    fill(opts.d_in, L.hidden);
    fill(opts.heads, L.heads);
    fill(opts.kv_heads, L.kv_heads);
    if (!values_requested) opts.shapes_only = true;
    // Llama's sizes as its printed model names them, from the one table both lessons read.
    const std::string hidden = std::to_string(L.hidden), kv_width = std::to_string(L.kv_heads * L.head_dim);
    const std::string sizes =
        "hidden size " + hidden + ", q_proj " + hidden + " -> " + std::to_string(L.heads * L.head_dim) + " (" +
        std::to_string(L.heads) + " heads of " + std::to_string(L.head_dim) + "), k_proj and v_proj " + hidden +
        " -> " + kv_width + " (" + std::to_string(L.kv_heads) + " key/value heads, each read by " +
        std::to_string(L.heads / L.kv_heads) + " query heads)";
    const std::string T = own_tokens ? std::to_string(opts.tokens->size()) : "";
    const std::string random = "The weights and embeddings are random, NOT Llama's: the shapes are real, the numbers "
                               "are not. Shapes only by default; add --values to print the values.";
    if (lesson == "heads") {
      fill(opts.d_out, L.heads * L.head_dim);
      fill(opts.causal, true);
      opts.qkv_bias = false;
      opts.preset_notes.push_back(
          from + "Llama-3.2-3B's attention sizes: " + sizes +
          (own_tokens ? ", attention weights (1, " + std::to_string(L.heads) + ", " + T + ", " + T + ") for " + sentence
                      : std::string()) +
          "; q_proj, k_proj, v_proj and o_proj all without bias, as the printed model "
          "has them; and the walk-through's mask, masked_fill(mask == 0, -1e9) on the scaled scores. "
          "(The walk-through's own MultiHeadAttention class builds nn.Linear with the default bias=True; "
          "the preset follows the model it visualises.) No rotary position embedding: the walk-through's "
          "class has none, while the model applies LlamaRotaryEmbedding to queries and keys. " + random);
    } else {
      opts.preset_notes.push_back(
          from + "Llama-3.2-3B's attention sizes: " + sizes + ", o_proj " + hidden + " -> " + hidden +
          ", all without bias" + (own_tokens ? "; x embeds " + sentence : std::string()) + ". x and the four layers are made exactly as heads --preset llama "
          "makes them (the same words, torch.manual_seed(0), then q_proj, k_proj, v_proj, o_proj), so with the "
          "same options the two lessons print the same x, weights, attn_weights and output; this lesson masks "
          "with -inf where heads fills -1e9, as the walk-through does. No rotary position embedding, as in heads: "
          "the model rotates queries and keys first (attn lesson rope). " + random);
    }
  } else if (name == "evolution") {
    fill(opts.seed, std::uint64_t{0});
    opts.preset_notes.push_back(
        from + "Attention(embedding_dim, attention_dim) calls torch.manual_seed(0) in __init__ and builds "
               "wk, then wq, then wv (nn.Linear, bias=False), so seed 0 draws the key weights first. Its forward "
               "scales the scores, then masks with torch.triu(attn_score, diagonal=1).bool(). The article gives "
               "no sizes and no input: this uses the book's six tokens, embedding_dim 3 and attention_dim 2 "
               "unless --tokens, --d-in, --d-out or --input say otherwise.");
  }
}

}  // namespace attn
