// attn model DIR --text "..." | --ids 1,2,3: a Hugging Face checkpoint run stage by stage
// (docs/model.md). The tokens, the embeddings, every stage of the layers chosen with --layer (norm,
// q/k/v, RoPE, scores and mask, the attention weights, context and o_proj, residual, MLP,
// residual), one line for each layer, the final norm, the logits and the next token, rendered by
// the same sinks as a lesson's stages (--stage, --step, --dump, --npz, --format json, --svg, ...).
//
// The layers run one at a time: each is read from the files and upcast to float32 just before it
// runs and dropped after (io/model_weights.hpp), so memory holds one layer, not the model.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cli/render.hpp"

namespace attn::cli {

struct ModelRunOptions {
  std::string dir;
  std::optional<std::string> text;       // --text
  std::optional<std::string> text_file;  // --text-file
  std::optional<std::string> ids;        // --ids 1,2,3
  std::optional<std::string> layer;      // --layer N | A-B | N,M | all | none (default: the last)
  std::size_t top_k = 5;                 // --top-k
  bool no_bos = false;                   // --no-bos: leave out what the template puts before the text
  std::optional<std::string> probe;      // --probe induction: BOS, n random ids, the same n again
  std::size_t probe_length = 50;         // --probe-length n
  std::uint64_t seed = 0;                // --seed: the probe's torch.Generator seed
  bool probe_length_given = false, seed_given = false;  // refused without --probe
  std::optional<std::string> query;      // --query WORD|POS: where that token looks
  std::optional<std::string> key;        // --key WORD|POS: with --query, the heads that tie the two
  bool logit_lens = false;               // --logit-lens: what each layer would predict
};

// Largest prompt a run takes, whatever the model's context: its (h, T, T) weights for one layer
// must stay printable and in memory.
constexpr std::size_t kModelMaxTokens = 4096;
// Largest (1, h, T, T) attention tensor a shown layer may hold, in bytes.
constexpr std::size_t kModelMaxShownAttention = std::size_t{256} << 20;
// Largest (1, h, T, T) tensor every layer computes on the lessons' path, whose weights give the
// head roles and --query; past it, layers not shown take the fast path that holds no (T, T).
constexpr std::size_t kModelTracedAttention = std::size_t{64} << 20;

// Checks every input, runs the model, renders the stages. Throws UsageError (one line) for every
// refusal, before anything is written.
int run_model(const ModelRunOptions& options, const OutputOptions& output);

}  // namespace attn::cli
