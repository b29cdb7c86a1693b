#include "lessons/presets.hpp"

#include "lessons/registry.hpp"

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
       "X (3, 6, 8) from three 6-word sentences, 4 heads of 2, biases on all four projections, no mask"},
      {"rakesh", "Rakesh, Transformer Block - Multihead Attention",
       {"heads"},
       "the article's literal x of shape (1, 3, 6), 2 heads of 3, causal"},
      {"llama", "MultiHead Attention, visualised on Llama-3.2-3B",
       {"heads"},
       "Llama-3.2-3B's sizes: d_model 3072, 24 query heads of 128, 8 key/value heads, 9 tokens; shapes only"},
  };
  return table;
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
    }
    fill(opts.seed, std::uint64_t{0});
    fill(opts.d_in, std::size_t{8});
    fill(opts.d_out, std::size_t{8});
    fill(opts.heads, std::size_t{4});
    fill(opts.causal, false);
    opts.qkv_bias = true;
    opts.preset_notes.push_back(
        from + "three sentences of 6 words, d_model 8, 4 heads of d_key 2, nn.Linear with bias for all four "
               "projections, no mask: (3, 6, 8) -> (3, 6, 4, 2) -> (3, 4, 6, 2) -> scores (3, 4, 6, 6) -> (3, 6, 8). "
               "The article's X comes from a trained embedding table plus positional encoding; here each word "
               "gets its own seeded vector, so the shapes are the article's and the numbers are not.");
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
                                       "The article sets no seed; this uses 123.");
  } else if (name == "llama") {
    if (!opts.tokens && !opts.input)
      opts.tokens = words("<|begin_of_text|> the financial bank is located on river bank");
    fill(opts.seed, std::uint64_t{0});
    fill(opts.batch, std::size_t{1});
    fill(opts.d_in, std::size_t{3072});
    fill(opts.d_out, std::size_t{3072});
    fill(opts.heads, std::size_t{24});
    fill(opts.kv_heads, std::size_t{8});
    fill(opts.causal, true);
    if (!values_requested) opts.shapes_only = true;
    opts.preset_notes.push_back(
        from + "Llama-3.2-3B's attention sizes: hidden size 3072, q_proj 3072 -> 3072 (24 heads of 128), k_proj "
               "and v_proj 3072 -> 1024 (8 key/value heads, each read by 3 query heads), attention weights "
               "(1, 24, 9, 9) for the 9 tokens of \"the financial bank is located on river bank\" with its "
               "begin-of-text token. The weights and embeddings are random, NOT Llama's: the shapes are real, "
               "the numbers are not. Shapes only by default; add --values to print the values.");
  }
}

}  // namespace attn
