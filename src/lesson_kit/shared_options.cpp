// The one table of `attn lesson`'s shared options (see shared_options.hpp for who reads it).
#include "lesson_kit/shared_options.hpp"

#include "lesson_kit/options.hpp"

namespace attn {

const char* group_title(OptionGroup group) {
  switch (group) {
    case OptionGroup::Sizes: return "Sizes and model";
    case OptionGroup::Inputs: return "Inputs";
    case OptionGroup::Outputs: return "Outputs";
    case OptionGroup::Display: return "Display";
  }
  return "";
}

const std::vector<SharedOption>& shared_options() {
  using G = OptionGroup;
  // Group by group, in the order of --help and of the options a refusal lists as accepted.
  static const std::vector<SharedOption> table = {
      {"--batch", kBatch, G::Sizes, "INT", "Batch size B: the input stacked B times"},
      {"--seq-len", kSeqLen, G::Sizes, "INT", "Number of tokens T"},
      {"--d-in", kDIn, G::Sizes, "INT", "Embedding width d_in"},
      {"--d-out", kDOut, G::Sizes, "INT", "Projection width d_out (all heads together)"},
      {"--heads", kHeads, G::Sizes, "INT", "Number of heads h (must divide the width they split)"},
      {"--kv-heads", kKvHeads, G::Sizes, "INT", "Key/value heads, each shared by heads/kv-heads query heads"},
      {"--causal", kCausal, G::Sizes, nullptr, "Mask the future"},
      {"--no-causal", kCausal, G::Sizes, nullptr, "Let every token see every token"},
      {"--qkv-bias", kQkvBias, G::Sizes, nullptr, "Give W_query, W_key, W_value a bias"},
      {"--hidden", kHidden, G::Sizes, "INT", "Hidden width d_h of the RNNs"},
      {"--seed", kSeed, G::Inputs, "INT", "Seed for torch.manual_seed (default: the article's)"},
      {"--tokens", kTokens, G::Inputs, "WORDS", "Words to attend over, e.g. \"the cat sat\" (\"a b | c d\": one sentence per batch entry)"},
      {"--src", kSrc, G::Inputs, "WORDS", "Source sentence to translate"},
      {"--tgt", kTgt, G::Inputs, "WORDS", "Target sentence, its translation"},
      {"--input", kInput, G::Inputs, "FILE", "The lesson's x from a file: .npy (float32/64) or a text matrix"},
      {"--weights", kWeights, G::Inputs, "DIR",
       "Weights from DIR: W_query.npy, W_key.npy, W_value.npy, out_proj.npy (+ *_bias.npy); bahdanau W_a.npy, "
       "U_a.npy, v_a.npy; luong W_g.npy, W_c.npy, v_c.npy"},
      {"--weights-layout", kWeights, G::Inputs, "math|torch",
       "math: files are (in, out) as in Q = X W (default); torch: (out, in) as nn.Linear.weight"},
      {"--states", kStates, G::Inputs, "DIR",
       "Encoder states H.npy (S, d_enc) and decoder state s.npy (bahdanau) or h_t.npy (luong) from DIR, instead "
       "of the lesson's own RNNs"},
      {"--allow-nonfinite", kInput | kWeights | kStates, G::Inputs, nullptr,
       "Keep NaN and inf found in --input, --weights or --states (refused by default)"},
      {"--preset", 0, G::Inputs, "NAME", "An article's configuration (see attn list --presets)"},
      {"--stage", 0, G::Outputs, "SEL",
       "Only these stages, in every output: 5, 5-7, 2,5-7, or words of a title (softmax); the lesson still runs whole"},
      {"--dump", 0, G::Outputs, "DIR",
       "Write every tensor as .npy plus manifest.json into DIR (parents created; a previous dump there is replaced)"},
      {"--npz", 0, G::Outputs, "FILE",
       "The same files as --dump, in one .npz archive: numpy.load(FILE) (parents created; an existing FILE is replaced)"},
      {"--format", 0, G::Outputs, "text|json", "text (default) or json: the manifest with values inline, on stdout"},
      {"--full-json", 0, G::Outputs, nullptr,
       "With --format json: every value of every tensor (default: over 1000 values, a summary)"},
      {"--svg", 0, G::Outputs, "DIR", "Write each attention matrix as an SVG heatmap into DIR (created if missing)"},
      {"--html", 0, G::Outputs, "FILE",
       "Write one self-contained page to explore the run: every stage, each attention matrix as a heatmap with values on "
       "hover, a head view and (attn model) a layer x head model view (parents created; an existing FILE is replaced)"},
      {"--svg-panels", 0, G::Outputs, "LIST",
       "Only these panels of --svg: b0 (batch entry 0), h1 (head 1), b0-h1, comma-separated"},
      {"--values", 0, G::Display, nullptr, "Print values even where a preset shows shapes only (llama)"},
      {"--precision", 0, G::Display, "INT", "Decimals printed, 1..10 (default 4)"},
      {"--sci-mode", 0, G::Display, "auto|on|off",
       "Tensors in e-notation: on, off, or auto (default: PyTorch's choice, when a value is below 1e-4 or the "
       "largest is over 1000 times the smallest), as torch.set_printoptions(sci_mode=True/False/None)"},
      {"--full", 0, G::Display, nullptr,
       "Print every stage whole and every tensor: a lesson's default run folds stages that repeat an earlier one to "
       "their titles and leaves out tensors a line names, to fit one sitting"},
      {"--shapes-only", 0, G::Display, nullptr, "Names and shapes, no values, in every output (text, JSON, dump)"},
      {"--step", 0, G::Display, nullptr, "Pause after each stage: Enter/n next, p back, q quit (needs a terminal)"},
      {"--color", 0, G::Display, "auto|always|never",
       "Colour the heatmaps: auto (a terminal without NO_COLOR, or CLICOLOR_FORCE), always, never"},
      {"--heatmap-scale", 0, G::Display, "auto|global|row",
       "Heatmaps and --svg: global, one scale 0..max for the tensor; row, each row from its own min to max; auto "
       "(default), row when every weight is within 15% of uniform, else global"},
      {"--head", 0, G::Display, "HEAD",
       "Heatmaps and --svg of (B, h, T, S) weights: mean (averaged over heads, one per batch entry) or N (only head N)"},
  };
  return table;
}

const SharedOption* find_shared_option(const std::string& flag) {
  for (const auto& o : shared_options())
    if (flag == o.flag) return &o;
  return nullptr;
}

bool is_shared_flag(const std::string& flag) { return find_shared_option(flag) != nullptr || flag == "--help"; }

}  // namespace attn
