// attn model DIR --text / --ids (model_run.hpp): the prompt, the limits, the layers run one by one,
// and the stages a learner reads. The arithmetic is core's (decoder_layer.hpp, norm.hpp, rope.hpp);
// this file decides what is shown and says what the numbers mean.
//
// Tensors are named after the Hugging Face module whose output they are, as the checkpoint names
// it (docs/model.md, "Names"): model.layers.3.self_attn.q_proj is what a forward hook on that
// module returns; q, k, v (after RoPE), scores, attn_weights, context and residual name the
// intermediates inside a layer that no module returns.
//
// Legend: T tokens (batch 1), d hidden size, h query heads, h_kv key/value heads, hd head width,
// f the MLP's width, V vocabulary size, L layers.
#include "cli/model_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

#include "cli/model_heads.hpp"
#include "cli/tokenize_command.hpp"
#include "core/decoder_layer.hpp"
#include "core/generator.hpp"
#include "core/head_roles.hpp"
#include "core/norm.hpp"
#include "core/rope.hpp"
#include "io/checkpoint.hpp"
#include "io/model_weights.hpp"
#include "io/npy.hpp"  // escaped_for_message
#include "lesson_kit/checks.hpp"
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/recipe.hpp"
#include "lesson_kit/options.hpp"  // UsageError
#include "report/stage.hpp"

namespace attn::cli {
namespace {

using report::Labels;
using report::Relation;
using report::Stage;

// ---------------------------------------------------------------------------------------------
// The prompt

struct Prompt {
  std::vector<std::size_t> ids;
  std::vector<bool> added;          // put there by the tokenizer's template (BOS)
  std::vector<std::string> pieces;  // each token as text, quoted: "\" bank\""
  Labels labels;                    // each token for row and column labels: "bank"
  std::optional<std::string> text;  // the text, when the ids came from one
  std::size_t probe = 0;            // --probe induction: its n random ids (the prompt is BOS, n, n again)
  std::shared_ptr<const Tokenizer> tokenizer;  // DIR's tokenizer.json, or none
  // A token as text, quoted: "\" bank\"", or <id N> without a tokenizer or for an id it lacks.
  std::string piece(std::size_t id) const {
    const auto t = static_cast<TokenId>(id);
    return tokenizer && tokenizer->token(t) ? "\"" + tokenizer->readable(t) + "\"" : "<id " + std::to_string(id) + ">";
  }
};

std::string label_of(const std::string& piece) {
  std::size_t a = 0, b = piece.size();
  while (a < b && piece[a] == ' ') ++a;
  while (b > a && piece[b - 1] == ' ') --b;
  std::string s = piece.substr(a, b - a);
  if (s.empty()) return "'" + piece + "'";
  return s.size() > 24 ? s.substr(0, 21) + "..." : s;
}

// 1 when the induction probe starts with config.json's bos_token_id, 0 without one or with --no-bos.
std::size_t probe_bos(const ModelConfig& config, const ModelRunOptions& o) { return config.bos_token_id && !o.no_bos ? 1 : 0; }

Prompt read_prompt(const ModelRunOptions& o, const ModelConfig& config, const std::string& dir) {
  Prompt p;
  const int sources = o.text.has_value() + o.text_file.has_value() + o.ids.has_value() + o.probe.has_value();
  if (sources != 1)
    throw UsageError("attn model needs one of --text, --text-file, --ids, --probe to run (or none of them, with --summary)",
                     o.probe ? "--probe" : "--text", "one of them", "more");
  if (!o.probe && (o.probe_length_given || o.seed_given))
    throw UsageError(std::string(o.seed_given ? "--seed" : "--probe-length") + " applies to --probe", o.seed_given ? "--seed" : "--probe-length",
                     "--probe induction beside it", "no --probe");
  const std::string option = o.text_file ? "--text-file" : "--text";
  std::vector<TokenId> raw;
  if (o.probe) {
    if (*o.probe != "induction")
      throw UsageError("unknown --probe", "--probe", "induction", "'" + escaped_for_message(*o.probe, 40, true) + "'");
    // BOS (config.json's bos_token_id; --no-bos leaves it out), n ids drawn as
    // torch.randint(0, V, (n,), generator=torch.Generator().manual_seed(seed)) draws them, and the same n again.
    const std::size_t n = o.probe_length, bos = probe_bos(config, o);
    if (bos + 2 * n > std::min<std::size_t>(config.context, kModelMaxTokens))
      throw UsageError("--probe-length makes a probe longer than the model's context", "--probe-length",
                       "at most " + std::to_string((std::min<std::size_t>(config.context, kModelMaxTokens) - bos) / 2) +
                           " (2 N" + (bos ? " + 1" : "") + " tokens)",
                       std::to_string(n));
    TorchGenerator g(o.seed);
    const std::vector<std::size_t> r = g.randint(0, config.vocab, n);
    if (bos) raw.push_back(static_cast<TokenId>(*config.bos_token_id));
    for (int copy = 0; copy < 2; ++copy)
      for (std::size_t id : r) raw.push_back(static_cast<TokenId>(id));
    p.added.assign(raw.size(), false);
    if (bos) p.added[0] = true;
    p.probe = n;
  } else if (o.ids) {
    if (o.no_bos) throw UsageError("--no-bos applies to a text or a probe", "--no-bos", "--text, --text-file or --probe", "--ids");
    raw = parse_ids(*o.ids);
    for (TokenId id : raw)
      if (id >= config.vocab)
        throw UsageError("--ids names an id past the model's vocabulary", "--ids",
                         "ids below " + std::to_string(config.vocab) + " (config.json's vocab_size)", std::to_string(id));
  } else {
    p.text = o.text_file ? read_text_file(*o.text_file) : *o.text;
    check_text(*p.text, option);
  }
  std::optional<TokenizerFolder> folder;
  std::optional<Tokenizer> tok;
  try {
    if (p.text || std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json")) {
      folder = find_tokenizer(dir);
      tok = Tokenizer::load(folder->tokenizer_json);
    }
  } catch (const TokenizerError& e) {
    throw UsageError(e.what());
  }
  if (p.text) {
    TokenizeOptions t;
    t.text = p.text;
    if (o.no_bos) t.bos = TokenizeOptions::Bos::Drop;
    try {
      const EncodedPrompt e = encode_prompt(t, *tok, *folder, option);
      raw = e.ids;
      p.added = e.added;
    } catch (const TokenizerError& e) {
      throw UsageError(e.what());
    }
    for (TokenId id : raw)
      if (id >= config.vocab)
        throw UsageError("the tokenizer made an id past the model's vocabulary", option,
                         "ids below " + std::to_string(config.vocab) + " (config.json's vocab_size)", std::to_string(id));
  } else if (!o.probe) {
    p.added.assign(raw.size(), false);
  }
  if (tok) p.tokenizer = std::make_shared<const Tokenizer>(std::move(*tok));
  for (TokenId id : raw) {
    p.ids.push_back(id);
    p.pieces.push_back(p.piece(id));
    p.labels.push_back(label_of(p.tokenizer && p.tokenizer->token(id) ? p.tokenizer->readable(id) : p.pieces.back()));
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// --layer

// Which layers are shown in full. Layers are counted from 0, as Hugging Face indexes
// outputs.attentions; "--layer 27" is the article's "Layer 28" of 28.
std::vector<bool> chosen_layers(const std::optional<std::string>& spec, std::size_t L) {
  std::vector<bool> shown(L, false);
  if (!spec) {
    shown[L - 1] = true;
    return shown;
  }
  const std::string range = "0.." + std::to_string(L - 1);
  const std::string expected = "a layer " + range + " (counted from 0, as outputs.attentions), A-B, a list, all or none";
  if (*spec == "all") return std::vector<bool>(L, true);
  if (*spec == "none") return shown;
  std::size_t at = 0;
  auto number = [&](const std::string& s) -> std::size_t {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--layer expects layer numbers", "--layer", expected, "'" + escaped_for_message(s, 40, true) + "'");
    const std::size_t n = std::stoul(s);
    if (n >= L)
      throw UsageError("--layer is past the last layer", "--layer",
                       range + " (counted from 0; the last, " + std::to_string(L - 1) + ", is Layer " + std::to_string(L) +
                           " counted from 1)",
                       s);
    return n;
  };
  while (at <= spec->size()) {
    const std::size_t comma = std::min(spec->find(',', at), spec->size());
    const std::string item = spec->substr(at, comma - at);
    const std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      shown[number(item)] = true;
    } else {
      const std::size_t a = number(item.substr(0, dash)), b = number(item.substr(dash + 1));
      if (a > b) throw UsageError("--layer range runs backwards", "--layer", "A-B with A <= B", item);
      for (std::size_t n = a; n <= b; ++n) shown[n] = true;
    }
    at = comma + 1;
  }
  return shown;
}

// ---------------------------------------------------------------------------------------------
// Numbers about one layer's attention, for its line in the overview and the notes.

struct Glance {
  double hidden_norm = 0;    // mean over tokens of |layer output row|
  double entropy = NAN;      // mean over heads and queries of -sum w log w (nats); NaN: not measured
  double entropy_min = NAN;  // per head, the lowest and highest mean
  double entropy_max = NAN;
  double first_weight = NAN; // mean weight on token 0 over heads and queries 1..T-1
  std::size_t prev_heads = 0;      // heads whose largest weight is on the token before, for most queries
  std::size_t first_heads = 0;     // heads whose largest weight is on token 0, for most queries 1..T-1
  bool measured = false;
};

double mean_row_norm(const Ten3& x) {
  const std::size_t rows = x.shape()[0] * x.shape()[1], d = x.shape()[2];
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::size_t i = 0; i < d; ++i) s += double(x.data()[r * d + i]) * x.data()[r * d + i];
    total += std::sqrt(s);
  }
  return rows ? total / double(rows) : 0.0;
}

// w (1, h, T, T); roles: its heads' scores (head_roles.hpp), whose entropy and first-token
// weight the overview averages.
Glance glance(const Ten4& w, const std::vector<HeadRoleScores>& roles, const Ten3& output) {
  Glance g;
  g.hidden_norm = mean_row_norm(output);
  if (w.size() == 0) return g;
  const std::size_t h = w.shape()[1], T = w.shape()[2];
  g.measured = true;
  double all = 0, first = 0;
  g.entropy_min = INFINITY;
  g.entropy_max = -INFINITY;
  for (std::size_t i = 0; i < h; ++i) {
    std::size_t prev = 0, sink = 0;  // queries whose largest weight is on the token before, on token 0
    for (std::size_t t = 1; t < T; ++t) {
      const float* row = w.data() + (i * T + t) * T;
      const std::size_t best = static_cast<std::size_t>(std::max_element(row, row + t + 1) - row);
      prev += best == t - 1;
      sink += best == 0;
    }
    all += roles[i].entropy;
    first += roles[i].first;
    g.entropy_min = std::min(g.entropy_min, roles[i].entropy);
    g.entropy_max = std::max(g.entropy_max, roles[i].entropy);
    if (T > 2 && 2 * prev > T - 1) ++g.prev_heads;  // most of the T - 1 queries that have a token before
    if (T > 2 && 2 * sink > T - 1) ++g.first_heads;
  }
  g.entropy = all / double(h);
  g.first_weight = T > 1 ? first / double(h) : NAN;
  return g;
}

// ---------------------------------------------------------------------------------------------
// Sizes and memory, checked before any layer runs.

std::uint64_t run_bytes(const ModelConfig& c, std::size_t T, std::size_t shown, bool keep_attentions, bool lens,
                        std::size_t layer_bytes) {
  const std::uint64_t d = c.hidden, f = c.intermediate, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  const std::uint64_t tt = std::uint64_t(c.heads) * T * T * 4;                 // one (1, h, T, T) tensor
  const std::uint64_t acts = std::uint64_t(T) * (10 * d + 3 * f + 4 * qd + 4 * kvd) * 4;  // one layer at work
  const std::uint64_t kept = shown * (std::uint64_t(T) * (8 * d + 3 * qd + 6 * kvd) * 4 + 2 * tt);
  const std::uint64_t attentions = keep_attentions ? std::uint64_t(c.layers) * tt : 0;
  const std::uint64_t logits = 2 * std::uint64_t(T) * c.vocab * 4 + 4096 * d * 4;
  // --logit-lens: every layer's output, the normed (L * T, d) matrix, room for one more, and a block of logits
  const std::uint64_t lens_bytes = lens ? 3 * std::uint64_t(c.layers) * T * d * 4 + std::uint64_t(c.layers) * T * 4096 * 4 : 0;
  // The stages copy what they show (the report owns its values): the kept tensors twice.
  return layer_bytes + acts + 3 * tt + 2 * kept + 2 * attentions + logits + lens_bytes;
}

// ---------------------------------------------------------------------------------------------
// The header: what ran, and the transformers lines that rebuild the same numbers.

std::string id_list(const std::vector<std::size_t>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s;
}

std::vector<std::string> reproduce_lines(const Checkpoint& ck, const Prompt& p, const ModelRunOptions& o,
                                         std::size_t last_shown) {
  const std::string dir = recipe::py_string(ck.dir, false);
  std::vector<std::string> r = {
      "import torch",
      "from transformers import AutoModelForCausalLM, AutoTokenizer",
      "# float32 and the eager attention, which returns the weights; transformers before 4.56: torch_dtype=",
      "model = AutoModelForCausalLM.from_pretrained(" + dir + ", dtype=torch.float32, attn_implementation=\"eager\")",
  };
  if (p.probe) {
    r.push_back("g = torch.Generator().manual_seed(" + std::to_string(o.seed) + ")");
    r.push_back("r = torch.randint(0, " + std::to_string(ck.config.vocab) + ", (" + std::to_string(p.probe) + ",), generator=g)");
    r.push_back(p.added.front() ? "ids = torch.cat([torch.tensor([" + std::to_string(p.ids.front()) + "]), r, r])[None]  # BOS, r, r again"
                                : "ids = torch.cat([r, r])[None]  # r, r again");
  } else if (p.text) {
    r.push_back("tok = AutoTokenizer.from_pretrained(" + dir + ")");
    r.push_back("ids = tok(" + recipe::py_string(*p.text, false) + (o.no_bos ? ", add_special_tokens=False" : "") +
                ", return_tensors=\"pt\").input_ids" + (o.no_bos ? "  # --no-bos" : ""));
  } else {
    r.push_back("ids = torch.tensor([[" + id_list(p.ids) + "]])");
  }
  r.push_back("out = model(ids, output_attentions=True, output_hidden_states=True)");
  const std::string L = std::to_string(ck.config.layers), n = std::to_string(last_shown);
  r.push_back("print(len(out.attentions), out.attentions[" + n + "].shape)  # " + L + " layers, (1, " +
              std::to_string(ck.config.heads) + ", " + std::to_string(p.ids.size()) + ", " + std::to_string(p.ids.size()) + ")");
  r.push_back("print(out.attentions[" + n + "][0, :, -1])  # layer " + n + ": where the last token looks, per head");
  r.push_back("print(out.logits[0, -1].softmax(-1).topk(" + std::to_string(o.top_k) + "))  # the next token");
  return r;
}

// ---------------------------------------------------------------------------------------------
// The run

// (T, d) -> (1, T, d)
Ten3 batch_of_one(const Mat& m) {
  Ten3 x = xt::empty<float>({std::size_t{1}, m.shape()[0], m.shape()[1]});  // (1, T, d)
  std::copy(m.begin(), m.end(), x.begin());
  return x;
}

// The largest relative change of a head's vector length through RoPE: before (1, T, n * hd) as
// projected, after (1, n, T, hd) rotated. A rotation keeps lengths.
double rope_length_change(const Ten3& before, const Ten4& after) {
  const std::size_t n = after.shape()[1], T = after.shape()[2], hd = after.shape()[3];
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < T; ++t) {
      double a = 0, b = 0;
      for (std::size_t j = 0; j < hd; ++j) {
        const double x = before.data()[t * n * hd + i * hd + j], y = after.data()[((i * T) + t) * hd + j];
        a += x * x;
        b += y * y;
      }
      if (a > 0) worst = std::max(worst, std::abs(std::sqrt(b) - std::sqrt(a)) / std::sqrt(a));
    }
  return worst;
}

struct LayerNames {
  std::string base;  // "model.layers.3." / "h.3." / "transformer.h.3."
  std::string norm1, q, k, v, attn, o, norm2, mlp;
};

LayerNames layer_names(const ModelWeights& w, std::size_t n) {
  const bool gpt2 = w.checkpoint().config.family == ModelFamily::Gpt2;
  LayerNames m;
  m.base = gpt2 ? w.name("h." + std::to_string(n) + ".") : "model.layers." + std::to_string(n) + ".";
  m.norm1 = m.base + (gpt2 ? "ln_1" : "input_layernorm");
  m.attn = m.base + (gpt2 ? "attn." : "self_attn.");
  m.q = m.attn + "q_proj";
  m.k = m.attn + "k_proj";
  m.v = m.attn + "v_proj";
  m.o = m.attn + (gpt2 ? "c_proj" : "o_proj");
  m.norm2 = m.base + (gpt2 ? "ln_2" : "post_attention_layernorm");
  m.mlp = m.base + "mlp";
  return m;
}

class ModelRun {
 public:
  ModelRun(const ModelWeights& w, const Prompt& p, const ModelRunOptions& o, std::vector<bool> shown, bool keep_attentions,
           std::optional<std::size_t> query, std::optional<std::size_t> key, report::Report& out)
      : c_(w.checkpoint().config), w_(w), p_(p), o_(o), shown_(std::move(shown)), keep_attentions_(keep_attentions),
        query_(query), key_(key), out_(out) {}

  void run();

 private:
  bool gpt2() const { return c_.family == ModelFamily::Gpt2; }
  std::string layer_title(std::size_t n) const {
    return "Layer " + std::to_string(n) + " (Layer " + std::to_string(n + 1) + " counted from 1)";
  }
  void tokens_stage();
  Ten3 embeddings_stage();
  void layer_stages(std::size_t n, const Ten3& x, const LayerTrace& t, const Glance& g, const std::string& x_name);
  void overview_stage();
  void logit_lens_stages(const std::vector<std::size_t>& answers, const std::vector<double>& answer_p);
  // The final norm, the logits, the next token; returns each position's top token and its p.
  std::pair<std::vector<std::size_t>, std::vector<double>> head_stages(const Ten3& x);
  TokenNames names() const { return {p_.pieces, p_.labels}; }

  const ModelConfig& c_;
  const ModelWeights& w_;
  const Prompt& p_;
  const ModelRunOptions& o_;
  std::vector<bool> shown_;
  bool keep_attentions_;
  std::optional<std::size_t> query_, key_;  // --query, --key as positions
  report::Report& out_;
  std::vector<Glance> glances_;
  xt::xtensor<float, 5> attentions_;  // (L, 1, h, T, T) when kept
  RoleMaps roles_;                     // every measured layer's head roles
  Ten3 query_rows_;                    // (L, h, T) --query's row of attn_weights in every layer
  Ten3 layer_outputs_;                 // (L, T, d) every layer's output, for --logit-lens
};

void ModelRun::tokens_stage() {
  const std::size_t T = p_.ids.size();
  std::size_t added = 0;
  for (bool a : p_.added) added += a;
  auto& s = out_.stage("Tokens: " + std::to_string(T) + " ids" + (p_.text ? " from the text" : p_.probe ? ", the induction probe" : ""),
                       p_.text    ? "ids = tokenizer(text).input_ids   # tokenizer.json: pre-tokenizer, BPE, template"
                       : p_.probe ? "ids = [bos] + r + r,  r = torch.randint(0, V, (n,), generator)   # n = " + std::to_string(p_.probe)
                                  : "ids = --ids as given");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < T; ++i)
    rows.push_back({std::to_string(i), std::to_string(p_.ids[i]), p_.pieces[i], p_.added[i] ? (p_.probe ? "config.json's bos_token_id" : "added by the template") : p_.probe ? (i + p_.probe < T ? "first copy" : "second copy") : ""});
  Vec ids = xt::empty<float>({T});  // (T,) exact in float32: every id is below 2^24
  for (std::size_t i = 0; i < T; ++i) ids(i) = static_cast<float>(p_.ids[i]);
  s.keep("input_ids", ids);
  s.table({"pos", "id", "token", ""}, rows);
  if (p_.probe)
    s.note("The induction probe: " + std::to_string(p_.probe) + " ids drawn at random from the whole vocabulary (seed " +
           std::to_string(o_.seed) + "), then the same " + std::to_string(p_.probe) + " again" +
           (added ? ", after config.json's bos_token_id " + p_.pieces.front() : "") +
           ". Nothing in the first copy can be predicted; every token of the second copy can, by a head that finds the "
           "earlier occurrence and copies what followed it.");
  else if (p_.text)
    s.note(std::to_string(T - added) + " tokens come from the text" +
           (added ? " and " + std::to_string(added) + " from the tokenizer's template (" + p_.pieces.front() +
                        ", the token the template puts before every text; --no-bos leaves it out)"
                  : "; the tokenizer's template adds none") + ".");
  else if (!p_.tokenizer)
    s.note("The checkpoint folder has no tokenizer.json, so the tokens are named by their ids.");
  s.note("The model's context is " + with_commas(c_.context) + " tokens (config.json's " +
         (gpt2() ? "n_positions" : "max_position_embeddings") + "); this prompt uses " + std::to_string(T) + ".");
}

Ten3 ModelRun::embeddings_stage() {
  const std::size_t T = p_.ids.size(), d = c_.hidden;
  if (!gpt2()) {
    Ten3 x = batch_of_one(w_.token_embeddings(p_.ids));  // (V, d)[ids] -> (1, T, d)
    auto& s = out_.stage("Embeddings: one row of embed_tokens per token",
                         "x = model.embed_tokens.weight[ids]   # (V, d)[ids] -> (1, T, d); RoPE adds the positions later");
    s.in_shape("model.embed_tokens.weight", {c_.vocab, d});
    s.show("model.embed_tokens", x, p_.labels);
    s.note("Llama and Qwen2 add no position vector here: each layer rotates q and k by their positions instead (RoPE).");
    return x;
  }
  const Ten3 tok = batch_of_one(w_.token_embeddings(p_.ids));  // (1, T, d)
  const Ten3 pos = batch_of_one(w_.position_embeddings(T));     // (1, T, d)
  Ten3 x = tok + pos;                                           // (1, T, d)
  auto& s = out_.stage("Embeddings: token plus learned position",
                       "x = wte.weight[ids] + wpe.weight[0:T]   # (1, T, d) + (1, T, d)");
  s.in_shape(w_.name("wte.weight"), {c_.vocab, d}).in_shape(w_.name("wpe.weight"), {c_.context, d});
  s.show(w_.name("wte"), tok, p_.labels).show(w_.name("wpe"), pos, p_.labels).show("embeddings", x, p_.labels);
  s.note("GPT-2 learned one vector per position (" + with_commas(c_.context) +
         " of them) and adds it to the token's vector: the same token at two positions enters the first layer as two vectors.");
  return x;
}

void ModelRun::layer_stages(std::size_t n, const Ten3& x, const LayerTrace& t, const Glance& g, const std::string& x_name) {
  const LayerNames m = layer_names(w_, n);
  const std::size_t T = p_.ids.size(), h = c_.heads, h_kv = c_.kv_heads, hd = c_.head_dim, d = c_.hidden;
  const std::string H = std::to_string(h), HKV = std::to_string(h_kv), HD = std::to_string(hd);
  const std::string title = layer_title(n) + ": ";
  const Labels& tok = p_.labels;
  const std::string eps = report::scientific(c_.norm_eps, 0);

  {
    auto& s = out_.stage(title + (gpt2() ? "ln_1, a LayerNorm" : "input_layernorm, an RMSNorm"),
                         gpt2() ? "a = (x - mean(x)) / sqrt(var(x) + eps) * ln_1.weight + ln_1.bias   # eps " + eps
                                : "a = x / sqrt(mean(x^2) + eps) * input_layernorm.weight   # eps " + eps + ", in float32");
    s.in(x_name, x);
    s.show(m.norm1, t.normed, tok);
    s.note("Every token's vector is rescaled on its own (mean |x| " + fixed_or_dash(mean_row_norm(x), 2) + " before, " +
           fixed_or_dash(mean_row_norm(t.normed), 2) + " after), so the layer sees vectors of a steady size however large the residual stream grows.");
  }
  {
    auto& s = out_.stage(title + "queries, keys and values",
                         gpt2() ? "q, k, v = c_attn(a).split(d, dim=2)   # c_attn: Conv1D (d, 3d), a @ W + b"
                                : std::string("q = q_proj(a); k = k_proj(a); v = v_proj(a)   # a @ W^T") + (c_.qkv_bias ? " + b" : ""));
    s.in(m.norm1, t.normed);
    if (gpt2()) {
      s.show(m.attn + "c_attn.q", t.q_proj, tok).show(m.attn + "c_attn.k", t.k_proj, tok).show(m.attn + "c_attn.v", t.v_proj, tok);
      s.note("One matrix makes all three: c_attn's " + std::to_string(3 * d) + " outputs are q, k and v side by side, each " +
             std::to_string(d) + " wide = " + H + " heads of " + HD + ".");
    } else {
      s.show(m.q, t.q_proj, tok).show(m.k, t.k_proj, tok).show(m.v, t.v_proj, tok);
      s.note("q is " + std::to_string(h * hd) + " wide, viewed as " + H + " heads of " + HD + "; k and v are " +
             std::to_string(h_kv * hd) + " wide, " + HKV + " key/value heads" +
             (h_kv == h ? " (one per query head)."
                        : ", each read by " + std::to_string(h / h_kv) + " query heads (query head i reads kv head i // " +
                              std::to_string(h / h_kv) + ")."));
    }
  }
  {
    auto& s = out_.stage(title + (gpt2() ? "split into heads" : "split into heads and rotate by position (RoPE)"),
                         gpt2() ? "q = q.view(1, T, h, hd).transpose(1, 2)   # likewise k, v: (1, h, T, hd)"
                                : "q = rope(q.view(1, T, h, hd).transpose(1, 2))   # k likewise with h_kv heads; v not rotated\n"
                                  "rope(x) = x * cos + rotate_half(x) * sin   # pairs (i, i + hd/2)");
    s.in(gpt2() ? m.attn + "c_attn.q" : m.q, t.q_proj);
    s.show(m.attn + "q", t.q, tok).show(m.attn + "k", t.k, tok).show(m.attn + "v", t.v, tok);
    if (!gpt2()) {
      const double change = std::max(rope_length_change(t.q_proj, t.q), rope_length_change(t.k_proj, t.k));
      s.check("RoPE only rotates: every head's q and k keep their lengths", "max relative change", change, Relation::AtMost, 1e-5);
      std::string scaling = "no rope_scaling";
      if (c_.rope_scaling.llama3)
        scaling = "rope_scaling llama3 (factor " + report::fixed(c_.rope_scaling.factor, 0) + ", original context " +
                  std::to_string(c_.rope_scaling.original_max_position_embeddings) + ": the slow pairs turn slower still)";
      s.note("Each pair (i, i + " + std::to_string(hd / 2) + ") turns by position x theta_i, theta_i = " +
             report::fixed(c_.rope_theta, 0) + "^(-2i/" + HD + "), " + scaling + ". The scores below then depend on how far apart two tokens are.");
    }
  }
  {
    auto& s = out_.stage(title + "scores and the causal mask",
                         "scores = q @ k^T / sqrt(hd)   # hd = " + HD + (h_kv != h ? "; query head i reads kv head i // " + std::to_string(h / h_kv) : "") +
                             "\nscores = scores.masked_fill(j > i, -inf)   # transformers fills with float32's lowest; softmax gives 0 either way");
    s.in(m.attn + "q", t.q).in(m.attn + "k", t.k);
    s.show(m.attn + "scores", t.scores, tok, tok);
  }
  {
    auto& s = out_.stage(title + "softmax: the attention weights",
                         "attn_weights = softmax(scores, dim=-1)   # = outputs.attentions[" + std::to_string(n) + "], (1, h, T, T)");
    s.in(m.attn + "scores", t.scores);
    s.show(m.attn + "attn_weights", t.attn_weights, tok, tok).attention_weights(report::Training{}, "queries", "keys");
    check_rows_sum_to_one(s, "attn_weights", t.attn_weights);
    if (T > 1)
      s.note("Averaged over the " + H + " heads and the queries after the first, the first token " + p_.pieces.front() +
             " gets weight " + fixed_or_dash(g.first_weight, 3) + " (uniform would give " +
             fixed_or_dash([&] { double u = 0; for (std::size_t q = 1; q < T; ++q) u += 1.0 / double(q + 1); return u / double(T - 1); }(), 3) +
             "). " + std::to_string(g.first_heads) + " of " + H + " heads put their largest weight on it for most queries, " +
             std::to_string(g.prev_heads) + " on the token just before.");
    // The strongest link between two different tokens that are not the first: what a head ties together.
    float best = -1;
    std::size_t bi = 0, bq = 0, bk = 0;
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t q = 2; q < T; ++q)
        for (std::size_t k = 1; k + 1 < q; ++k) {
          const float v = t.attn_weights.data()[((i * T) + q) * T + k];
          if (v > best) best = v, bi = i, bq = q, bk = k;
        }
    if (best >= 0)
      s.note("Leaving out the first token and the one just before, the strongest weight is head " + std::to_string(bi) +
             ": query " + std::to_string(bq) + " " + p_.pieces[bq] + " -> key " + std::to_string(bk) + " " + p_.pieces[bk] +
             ", " + fixed_or_dash(best, 3) + ". --head N draws one head; --svg DIR writes every head as a picture.");
  }
  {
    auto& s = out_.stage(title + "context, output projection and residual",
                         std::string("context = (attn_weights @ v).transpose(1, 2).reshape(1, T, h * hd)\n") +
                             "attn_out = " + (gpt2() ? "c_proj(context)" : "o_proj(context)") + "; residual = x + attn_out");
    s.in(m.attn + "attn_weights", t.attn_weights).in(m.attn + "v", t.v).in(x_name, x);
    s.show(m.attn + "context", t.context, tok).show(m.o, t.attn_out, tok).show(m.base + "residual", t.residual, tok);
    s.note("Attention adds to the residual stream, it does not replace it: mean |attn_out| " + fixed_or_dash(mean_row_norm(t.attn_out), 2) +
           " against mean |x| " + fixed_or_dash(mean_row_norm(x), 2) + ".");
  }
  {
    auto& s = out_.stage(title + "MLP and second residual",
                         gpt2() ? "b = ln_2(residual); mlp = c_proj(gelu_new(c_fc(b)))   # (1, T, d) -> (1, T, f) -> (1, T, d)\n"
                                  "output = residual + mlp"
                                : "b = post_attention_layernorm(residual); mlp = down_proj(silu(gate_proj(b)) * up_proj(b))\n"
                                  "output = residual + mlp   # (1, T, d) -> (1, T, f) -> (1, T, d)");
    s.in(m.base + "residual", t.residual);
    s.show(m.norm2, t.mlp_normed, tok).show(m.mlp, t.mlp_out, tok).show(m.base.substr(0, m.base.size() - 1), t.output, tok);
    s.note("The MLP works on each token alone, " + std::to_string(c_.intermediate) + " wide inside; mean |output| " +
           fixed_or_dash(mean_row_norm(t.output), 2) + " leaves this layer for the next.");
  }
}

void ModelRun::overview_stage() {
  const std::size_t L = c_.layers;
  auto& s = out_.stage("Every layer at a glance",
                       "entropy = -sum_j w_ij log w_ij   # nats, per query, averaged; log(T) would be uniform");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t n = 0; n < L; ++n) {
    const Glance& g = glances_[n];
    rows.push_back({std::to_string(n), std::to_string(n + 1), fixed_or_dash(g.hidden_norm, 2), fixed_or_dash(g.entropy, 3),
                    g.measured ? fixed_or_dash(g.entropy_min, 2) + ".." + fixed_or_dash(g.entropy_max, 2) : "-", fixed_or_dash(g.first_weight, 3),
                    g.measured ? std::to_string(g.prev_heads) : "-", shown_[n] ? "yes" : ""});
  }
  s.table({"layer", "from 1", "mean |out|", "entropy", "heads min..max", "w on token 0", "prev-token heads", "shown"}, rows);
  if (keep_attentions_ && attentions_.size()) {
    s.keep("attentions", attentions_);
    s.note("attentions (" + std::to_string(L) + ", 1, " + std::to_string(c_.heads) + ", T, T) holds every layer's weights, as outputs.attentions stacks them (--dump, --npz, --format json).");
  }
  s.note("Layers are counted from 0 here, as outputs.attentions[n] and model.layers.n count them; the article's 'Layer " +
         std::to_string(L) + "' is layer " + std::to_string(L - 1) + ". --layer N (or A-B, all) shows a layer in full.");
}

std::pair<std::vector<std::size_t>, std::vector<double>> ModelRun::head_stages(const Ten3& x) {
  const std::size_t T = p_.ids.size(), V = c_.vocab;
  const std::string last_layer = gpt2() ? w_.name("h." + std::to_string(c_.layers - 1)) : "model.layers." + std::to_string(c_.layers - 1);
  Ten3 final_hidden;  // (1, T, d)
  if (gpt2()) final_hidden = layer_norm(w_.gpt2_final_norm(), x);
  else final_hidden = rms_norm(w_.llama_final_norm(), x);
  const std::string norm_name = gpt2() ? w_.name("ln_f") : "model.norm";
  {
    auto& s = out_.stage("Final norm", gpt2() ? "final = ln_f(x)   # LayerNorm" : "final = model.norm(x)   # RMSNorm");
    s.in(last_layer, x);
    s.show(norm_name, final_hidden, p_.labels);
  }
  const Ten3 logits = w_.logits(final_hidden);  // (1, T, d) @ (V, d)^T -> (1, T, V)
  const std::string head = w_.head_name();
  {
    auto& s = out_.stage("Logits: a score for every token of the vocabulary",
                         "logits = final @ " + head + "^T   # (1, T, d) @ (V, d)^T -> (1, T, V)" +
                             (head == "lm_head.weight" ? "" : "; lm_head is tied to the embedding"));
    s.in(norm_name, final_hidden).in_shape(head, {V, c_.hidden});
    s.show("lm_head", logits, p_.labels);
  }
  // Probabilities per position, in double: softmax over V.
  auto& s = out_.stage("The next token", "p = softmax(logits[0, t], dim=-1); top-k of the last position");
  s.in("lm_head", logits);
  std::vector<std::vector<std::string>> per_position, top;
  std::vector<std::size_t> answers;  // (T,) each position's most likely next token
  std::vector<double> answer_p;      // (T,) its p
  double worst = 0;
  for (std::size_t t = 0; t < T; ++t) {
    const float* row = logits.data() + t * V;
    const double mx = *std::max_element(row, row + V);
    double z = 0;
    for (std::size_t v = 0; v < V; ++v) z += std::exp(double(row[v]) - mx);
    const std::size_t best = std::max_element(row, row + V) - row;
    answers.push_back(best);
    answer_p.push_back(std::exp(double(row[best]) - mx) / z);
    per_position.push_back({std::to_string(t), p_.pieces[t], std::to_string(best),
                            "", report::fixed(std::exp(double(row[best]) - mx) / z, 4)});
    if (t + 1 == T) {
      std::vector<std::size_t> order(V);
      std::iota(order.begin(), order.end(), 0);
      const std::size_t k = std::min(o_.top_k, V);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](std::size_t a, std::size_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      double sum = 0;
      for (std::size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - mx) / z;
      worst = std::abs(sum - 1.0);
      for (std::size_t i = 0; i < k; ++i)
        top.push_back({std::to_string(i + 1), std::to_string(order[i]), "", report::fixed(row[order[i]], 4),
                       report::fixed(std::exp(double(row[order[i]]) - mx) / z, 4)});
      per_position.back()[3] = "";
      s.note("After " + p_.pieces.back() + " the model's most likely next token is id " + std::to_string(order[0]) + ", p = " +
             report::fixed(std::exp(double(row[order[0]]) - mx) / z, 4) + ".");
    }
  }
  for (auto& r : top) r[2] = p_.piece(std::stoul(r[1]));
  for (auto& r : per_position) r[3] = p_.piece(std::stoul(r[2]));
  s.table({"rank", "id", "token", "logit", "p"}, top);
  s.table({"pos", "token", "predicts id", "predicts", "p"}, per_position);
  s.check("the last position's probabilities sum to 1", "|sum - 1|", worst, Relation::AtMost, 1e-6);
  return {answers, answer_p};
}

void ModelRun::logit_lens_stages(const std::vector<std::size_t>& answers, const std::vector<double>& answer_p) {
  const std::size_t L = c_.layers, T = p_.ids.size(), d = c_.hidden;
  Mat normed = xt::empty<float>({L * T, d});  // (L * T, d): every layer's output through the final norm
  for (std::size_t n = 0; n < L; ++n) {
    Ten3 one = xt::empty<float>({std::size_t{1}, T, d});  // (1, T, d)
    std::copy_n(layer_outputs_.data() + n * T * d, T * d, one.data());
    const Ten3 y = gpt2() ? layer_norm(w_.gpt2_final_norm(), one) : rms_norm(w_.llama_final_norm(), one);  // (1, T, d)
    std::copy(y.begin(), y.end(), normed.data() + n * T * d);
  }
  const Mat answer_rows = w_.rows(w_.head_name(), answers);  // (T, d): the head's rows of the answers
  const LogitLens lens = logit_lens(normed, answers, answer_rows, [&](const Mat& x, const auto& visit) {
    w_.for_each_logit_block(x, visit);
  });
  logit_lens_stage(out_, lens, answers, answer_p, names(), [&](std::size_t id) { return p_.piece(id); },
                   gpt2() ? w_.name("ln_f") : "model.norm", w_.head_name());
}

void ModelRun::run() {
  const std::size_t T = p_.ids.size(), L = c_.layers, h = c_.heads, hd = c_.head_dim;
  tokens_stage();
  Ten3 x = embeddings_stage();  // (1, T, d)
  std::string x_name = gpt2() ? "embeddings" : "model.embed_tokens";
  RopeTables rope;  // cos, sin (T, hd): one set for every layer
  if (!gpt2()) {
    const float theta = static_cast<float>(c_.rope_theta);
    const RopeScalingConfig& sc = c_.rope_scaling;
    const Vec inv_freq = sc.llama3 ? rope_inv_freq_llama3(hd, theta, {static_cast<float>(sc.factor), static_cast<float>(sc.low_freq_factor),
                                                                       static_cast<float>(sc.high_freq_factor),
                                                                       static_cast<float>(sc.original_max_position_embeddings)})
                                   : rope_inv_freq(hd, theta);  // (hd / 2,)
    rope = rope_tables_from_inv_freq(inv_freq, T, 0, theta);
  }
  // The lessons' path (every intermediate, the (h, T, T) weights) for the layers shown and, while
  // they are small, for the others too, whose weights give their line of the overview; past that,
  // the fast path, which never holds a (T, T) matrix.
  const bool small = std::uint64_t(h) * T * T * 4 <= kModelTracedAttention;
  if (keep_attentions_) attentions_ = xt::zeros<float>({L, std::size_t{1}, h, T, T});  // (L, 1, h, T, T)
  const std::vector<InductionPair> pairs = induction_pairs(p_.ids);
  roles_ = {L, h, std::vector<std::vector<HeadRoleScores>>(L)};
  if (query_) query_rows_ = xt::zeros<float>({L, h, T});                  // (L, h, T)
  if (o_.logit_lens) layer_outputs_ = xt::empty<float>({L, T, c_.hidden}); // (L, T, d)
  // One layer's weights at a time, read into the same buffers for every layer.
  Gpt2Layer gpt2_layer;
  LlamaLayer llama_layer;
  for (std::size_t n = 0; n < L; ++n) {
    const bool traced = shown_[n] || keep_attentions_ || small;
    LayerTrace t;
    Ten3 next;  // (1, T, d)
    if (gpt2()) {
      w_.gpt2_layer(n, gpt2_layer);
      next = gpt2_layer_forward(gpt2_layer, x, traced ? &t : nullptr);
    } else {
      w_.llama_layer(n, llama_layer);
      next = llama_layer_forward(llama_layer, x, rope, traced ? &t : nullptr);
    }
    if (traced)
      for (std::size_t i = 0; i < h; ++i) roles_.roles[n].push_back(head_role_scores(t.attn_weights.data() + i * T * T, T, pairs));
    if (query_ && traced)
      for (std::size_t i = 0; i < h; ++i)
        std::copy_n(t.attn_weights.data() + (i * T + *query_) * T, T, query_rows_.data() + (n * h + i) * T);
    if (o_.logit_lens) std::copy(next.begin(), next.end(), layer_outputs_.data() + n * T * c_.hidden);
    glances_.push_back(glance(traced ? t.attn_weights : Ten4{}, roles_.roles[n], next));
    if (keep_attentions_) std::copy(t.attn_weights.begin(), t.attn_weights.end(), attentions_.data() + n * h * T * T);
    if (shown_[n]) layer_stages(n, x, t, glances_.back(), x_name);
    x = std::move(next);
    x_name = layer_names(w_, n).base;
    x_name.pop_back();  // "model.layers.3"
  }
  overview_stage();
  head_roles_stage(out_, roles_, pairs, names(), p_.probe);
  if (query_) query_stage(out_, query_rows_, *query_, key_, names());
  const auto [answers, answer_p] = head_stages(x);
  if (o_.logit_lens) logit_lens_stages(answers, answer_p);
  out_.name_files_after_tensors();  // every name is unique in a run
}

std::string stored_dtypes(const Checkpoint& ck) {
  std::map<std::string, std::size_t> n;
  for (const auto& t : ck.tensors) ++n[dtype_name(t.dtype)];
  std::string s;
  for (const auto& [k, v] : n) s += (s.empty() ? "" : "+") + k;
  return s;
}

}  // namespace

int run_model(const ModelRunOptions& o, const OutputOptions& output) {
  if (o.top_k == 0) throw UsageError("--top-k must be at least 1", "--top-k", "1..100", "0");
  check_output(output);
  try {
    const Checkpoint ck = open_checkpoint(o.dir);
    const ModelConfig& c = ck.config;
    const Prompt p = read_prompt(o, c, o.dir);
    const std::size_t T = p.ids.size();
    const std::string source = p.text ? (o.text_file ? "--text-file" : "--text") : "--ids";
    if (T == 0) throw UsageError("the prompt has no tokens", source, "a text that makes at least one token", "none");
    if (T > c.context)
      throw UsageError("the prompt is longer than the model's context", source,
                       "at most " + std::to_string(c.context) + " tokens (config.json)", std::to_string(T) + " tokens");
    if (T > kModelMaxTokens)
      throw UsageError("the prompt is longer than attn model runs", source, "at most " + std::to_string(kModelMaxTokens) + " tokens",
                       std::to_string(T) + " tokens");
    const std::vector<bool> shown = chosen_layers(o.layer, c.layers);
    const std::size_t n_shown = static_cast<std::size_t>(std::count(shown.begin(), shown.end(), true));
    const std::uint64_t tt = std::uint64_t(c.heads) * T * T * 4;
    if (n_shown && tt > kModelMaxShownAttention)
      throw UsageError("a shown layer's attention weights would not fit", "--layer",
                       "(1, h, T, T) at most " + with_commas(kModelMaxShownAttention) + " bytes: fewer tokens, or --layer none",
                       with_commas(tt) + " bytes for T = " + std::to_string(T));
    const bool wants_all = output.dump || output.npz || output.format == OutputFormat::json || output.html;
    const bool keep_attentions = wants_all && std::uint64_t(c.layers) * tt <= (std::uint64_t{1} << 30);
    // --query and --key: positions, and every layer's weights to read them from.
    if (o.key && !o.query) throw UsageError("--key needs --query", "--key", "--query WORD|POS beside it", "no --query");
    std::optional<std::size_t> query, key;
    const TokenNames names{p.pieces, p.labels};
    if (o.query) query = pick_token(*o.query, names, "--query");
    if (o.key) key = pick_token(*o.key, names, "--key", query);
    if (query && tt > kModelTracedAttention && !keep_attentions)
      throw UsageError("--query reads every layer's attention weights, too large for this prompt", "--query",
                       "(1, h, T, T) at most " + with_commas(kModelTracedAttention) + " bytes: fewer tokens",
                       with_commas(tt) + " bytes for T = " + std::to_string(T));
    const ModelWeights weights(ck);
    require_memory(run_bytes(c, T, n_shown, keep_attentions, o.logit_lens, weights.layer_f32_bytes()), mem_available(),
                   "run " + escaped_for_message(o.dir, 60) + " on " + std::to_string(T) + (T == 1 ? " token" : " tokens"));

    report::Report report;
    report.keep_values = !output.shapes_only;
    std::size_t last_shown = c.layers - 1;
    for (std::size_t n = 0; n < c.layers; ++n)
      if (shown[n]) last_shown = n;
    std::vector<std::string> setting = {"tokens " + std::to_string(T), "layers " + std::to_string(c.layers),
                                        "d " + std::to_string(c.hidden), "heads " + std::to_string(c.heads)};
    if (c.family != ModelFamily::Gpt2) setting.push_back("kv_heads " + std::to_string(c.kv_heads));
    setting.push_back("head_dim " + std::to_string(c.head_dim));
    setting.push_back("mlp " + std::to_string(c.intermediate));
    setting.push_back("vocab " + std::to_string(c.vocab));
    setting.push_back("stored " + stored_dtypes(ck));
    setting.push_back("run float32");
    std::string layers_line = "shown ";
    if (n_shown == 0) layers_line += "none";
    else if (n_shown == c.layers) layers_line += "all";
    else
      for (std::size_t n = 0, k = 0; n < c.layers; ++n)
        if (shown[n]) layers_line += (k++ ? "," : "") + std::to_string(n);
    setting.push_back(layers_line);
    report.header = {"model", std::string(family_name(c.family)) + " checkpoint " + escaped_for_message(o.dir, 60),
                     "Hugging Face's modeling_" + c.model_type + ".py in float32 with the eager attention",
                     setting, reproduce_lines(ck, p, o, last_shown)};
    report.header.command = "attn model";
    ModelRun(weights, p, o, shown, keep_attentions, query, key, report).run();
    select_stages(report, output);
    render(report, output);
    return failed_checks_status(report);
  } catch (const CheckpointError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace attn::cli
