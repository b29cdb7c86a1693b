// What the heads of a model run do, measured (docs/model.md, "What the heads do"): the stages
// attn model adds after "Every layer at a glance".
//
//   Head roles       previous-token, first-token, self, induction scores and entropy for every
//                    layer and head (core/head_roles.hpp), as maps and ranked lists;
//   --query / --key  where one token looks in every layer and head, or which heads tie it to
//                    another token, ranked;
//   --logit-lens     the final norm and the unembedding applied to every layer's output: what
//                    the model would predict if it stopped there (nostalgebraist, 2020).
//
// model_run.cpp runs the layers and collects what these need; this file turns it into stages.
//
// Legend: L layers, h query heads, T tokens, d hidden size, V vocabulary size.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/head_roles.hpp"
#include "core/tensor.hpp"
#include "report/stage.hpp"

namespace attn::cli {

// A measured number with `decimals` decimals, or "-" for NaN (a score or a layer not measured).
std::string fixed_or_dash(double v, int decimals);

// The prompt's tokens as a stage names them.
struct TokenNames {
  const std::vector<std::string>& pieces;  // quoted: "\" bank\"", or <id N>
  const report::Labels& labels;            // for axes: "bank"
};

// Every layer's head role scores: roles[n] holds h scores, or is empty when layer n's weights
// were not kept (a long prompt's fast path).
struct RoleMaps {
  std::size_t layers = 0, heads = 0;
  std::vector<std::vector<HeadRoleScores>> roles;
};

// "Head roles": the maps, a ranked list per role, and what a head spreading its weight evenly
// would score. `probe` is the induction probe's n, or 0 for a prompt of the learner's.
void head_roles_stage(report::Report& out, const RoleMaps& maps, const std::vector<InductionPair>& pairs,
                      const TokenNames& tokens, std::size_t probe);

// --query / --key: a position 0..T-1, or a word naming the last token spelled so (at or before
// `before`, when given). Throws UsageError naming `option` when nothing matches.
std::size_t pick_token(const std::string& spec, const TokenNames& tokens, const std::string& option,
                       std::optional<std::size_t> before = std::nullopt);

// "Where <query> looks": `rows` (L, h, T) holds the query's attention row in every layer and head.
// With `key`: the weight from the query to that key, as a (L, h) map and a ranked list.
void query_stage(report::Report& out, const Ten3& rows, std::size_t query, std::optional<std::size_t> key,
                 const TokenNames& tokens);

// The logit lens over every layer's output. `logits_of(x, visit)` computes x (rows, d) against the
// head block by block, calling visit(r0, n, z) with z (rows, n) the logits of ids r0 .. r0 + n
// (ModelWeights::for_each_logit_block): the (L * T, V) logits are never held at once.
struct LogitLens {
  std::size_t d = 0;                      // the hidden size
  xt::xtensor<float, 2> top_id, top_p;    // (L, T) the most likely token at each layer and position, its p
  xt::xtensor<float, 2> answer_p;         // (L, T) p of the token the last layer ranks first
  xt::xtensor<float, 2> answer_rank;      // (L, T) its rank, 1 = first
};
using LogitBlocks = std::function<void(const Mat& x, const std::function<void(std::size_t r0, std::size_t n, const float* z)>& visit)>;
// normed (L * T, d): each layer's output after the final norm, layer after layer, all read in one
// pass over the head; answers (T,): the model's own top token at each position; answer_rows
// (T, d): the head's rows of those tokens.
LogitLens logit_lens(const Mat& normed, const std::vector<std::size_t>& answers, const Mat& answer_rows,
                     const LogitBlocks& logits_of);
void logit_lens_stage(report::Report& out, const LogitLens& lens, const std::vector<std::size_t>& answers,
                      const std::vector<double>& answer_p_model, const TokenNames& tokens,
                      const std::function<std::string(std::size_t)>& piece_of, const std::string& norm_name,
                      const std::string& head_name);

}  // namespace attn::cli
