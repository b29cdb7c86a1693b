// Head roles, --query/--key and the logit lens of a model run (model_heads.hpp).
//
// Legend: L layers, h query heads, T tokens, d hidden size, V vocabulary size.
#include "cli/model_heads.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "io/npy.hpp"  // escaped_for_message
#include "lesson_kit/options.hpp"  // UsageError

namespace attn::cli {
namespace {

using report::Labels;
using report::Relation;

constexpr std::size_t kRanked = 5;       // heads listed per role
constexpr std::size_t kQueryRanked = 10; // links listed by --query
constexpr std::size_t kLensColumns = 7;  // positions in the logit lens's grid: 80 columns

// "5.1": layer 5, head 1, both from 0 (TransformerLens's and outputs.attentions' counting).
std::string head_id(std::size_t layer, std::size_t head) { return std::to_string(layer) + "." + std::to_string(head); }

Labels numbers(std::size_t n) {
  Labels l;
  for (std::size_t i = 0; i < n; ++i) l.push_back(std::to_string(i));
  return l;
}

// A (L, h) map with the layers counted from 0.
void show_map(report::Stage& s, const std::string& name, const xt::xtensor<float, 2>& map, const std::string& value) {
  s.layer_head_map(name, map, numbers(map.shape()[0]), value);
}

// A head spreading its weight evenly over the keys it may see: query t gives 1 / (t + 1) to each.
HeadRoleScores uniform_scores(std::size_t T, const std::vector<InductionPair>& pairs) {
  std::vector<double> w(T * T, 0.0);  // (T, T) causal uniform weights
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j <= t; ++j) w[t * T + j] = 1.0 / double(t + 1);
  return head_role_scores(w.data(), T, pairs);
}

}  // namespace

std::string fixed_or_dash(double v, int decimals) { return std::isnan(v) ? "-" : report::fixed(v, decimals); }

void head_roles_stage(report::Report& out, const RoleMaps& maps, const std::vector<InductionPair>& pairs,
                      const TokenNames& tokens, std::size_t probe) {
  const std::size_t L = maps.layers, h = maps.heads, T = tokens.pieces.size();
  auto& s = out.stage("Head roles: what each head does, measured",
                      "previous = mean_t w[t, t-1]   first = mean_t w[t, 0]   (queries t >= 1)\n"
                      "self = mean_t w[t, t]   entropy = mean_t -sum_j w[t, j] log w[t, j]   (every query)\n"
                      "induction = mean over pairs of w[t, j+1], t's token seen once before, at j < t - 1");
  s.in_shape("attn_weights, every layer", {L, 1, h, T, T});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Role {
    const char* name;     // the tensor: "roles.previous_token"
    const char* title;    // the ranked list's row
    double HeadRoleScores::*score;
    bool map;             // drawn as a heatmap in the text
    bool lowest_first;    // entropy: the most focused heads first
  };
  const Role roles[] = {
      {"roles.previous_token", "previous token", &HeadRoleScores::previous, true, false},
      {"roles.first_token", "first token (sink)", &HeadRoleScores::first, true, false},
      {"roles.induction", "induction", &HeadRoleScores::induction, !pairs.empty(), false},
      {"roles.self", "self", &HeadRoleScores::self, false, false},
      {"roles.entropy", "entropy (lowest)", &HeadRoleScores::entropy, false, true},
  };
  std::size_t measured = 0;
  for (const auto& r : maps.roles) measured += !r.empty();
  const HeadRoleScores chance = uniform_scores(T, pairs);
  std::vector<std::vector<std::string>> ranked;
  for (const Role& role : roles) {
    if (role.score == &HeadRoleScores::induction && pairs.empty()) continue;
    xt::xtensor<float, 2> map = xt::empty<float>({L, h});  // (L, h), NaN where not measured
    std::vector<std::pair<double, std::size_t>> order;     // (score, layer * h + head)
    for (std::size_t n = 0; n < L; ++n)
      for (std::size_t i = 0; i < h; ++i) {
        const double v = maps.roles[n].empty() ? nan : maps.roles[n][i].*role.score;
        map(n, i) = static_cast<float>(v);
        if (!std::isnan(v)) order.push_back({v, n * h + i});
      }
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      return role.lowest_first ? a.first < b.first : a.first > b.first;
    });
    std::string list;
    for (std::size_t k = 0; k < std::min(kRanked, order.size()); ++k)
      list += (k ? ", " : "") + head_id(order[k].second / h, order[k].second % h) + " " + fixed_or_dash(order[k].first, 2);
    ranked.push_back({role.title, fixed_or_dash(chance.*role.score, 2), list.empty() ? "-" : list});
    if (role.map) show_map(s, role.name, map, std::string(role.title) + " score");
    else s.keep(role.name, map);
  }
  s.table({"role", "uniform", "strongest heads (layer.head score, from 0)"}, ranked);
  if (measured < L)
    s.note(std::to_string(L - measured) + " of " + std::to_string(L) +
           " layers were not measured (shown as -): their (h, T, T) weights were too large to keep for this prompt.");
  if (T < 2) {
    s.note("With one token every head puts all its weight on it: the scores say nothing yet.");
  } else if (pairs.empty()) {
    s.note("No token of this prompt occurs exactly once before a later one, so there is no induction pair to score. "
           "--probe induction runs a sequence of random tokens written twice, the test Olsson et al. used.");
  } else if (probe) {
    s.note("The induction probe: " + std::to_string(probe) + " random tokens written twice. " + std::to_string(pairs.size()) +
           " pairs: each token of the second copy looks, in an induction head, at the token that followed its first "
           "occurrence, which is also the token it should predict next.");
  } else {
    const InductionPair& p = pairs.front();
    s.note(std::to_string(pairs.size()) + " induction pair" + (pairs.size() == 1 ? "" : "s") + " in this prompt, such as query " +
           std::to_string(p.query) + " " + tokens.pieces[p.query] + " -> key " + std::to_string(p.key) + " " +
           tokens.pieces[p.key] + ", the token after its earlier occurrence.");
  }
  s.note("A head that spread its weight evenly over the keys it may see would score the 'uniform' column: a score well "
         "above it is a head with that job. Layer.head counts both from 0, as TransformerLens names GPT-2's heads (5.1 "
         "is layer 5, head 1).");
}

std::size_t pick_token(const std::string& spec, const TokenNames& tokens, const std::string& option,
                       std::optional<std::size_t> before) {
  const std::size_t T = tokens.labels.size();
  const std::size_t last = before ? *before : T - 1;
  if (!spec.empty() && spec.size() <= 9 && spec.find_first_not_of("0123456789") == std::string::npos) {
    const std::size_t pos = std::stoul(spec);
    if (pos > last)
      throw UsageError(option + " names a position past " + (before ? "the query" : "the prompt"), option,
                       "a position 0.." + std::to_string(last) + " or a word of the prompt", spec);
    return pos;
  }
  for (std::size_t t = last + 1; t-- > 0;)
    if (tokens.labels[t] == spec) return t;
  std::string words;
  for (std::size_t t = 0; t <= last && words.size() < 60; ++t) words += (t ? " " : "") + tokens.labels[t];
  throw UsageError(option + " names no token of the prompt" + (before ? " at or before the query" : ""), option,
                   "a position 0.." + std::to_string(last) + " or one of: " + escaped_for_message(words, 70),
                   "'" + escaped_for_message(spec, 40, true) + "'");
}

void query_stage(report::Report& out, const Ten3& rows, std::size_t q, std::optional<std::size_t> key,
                 const TokenNames& tokens) {
  const std::size_t L = rows.shape()[0], h = rows.shape()[1], T = rows.shape()[2];
  const std::string qn = "query " + std::to_string(q) + " " + tokens.pieces[q];
  if (key) {
    const std::size_t k = *key;
    auto& s = out.stage("Which heads tie " + tokens.pieces[q] + " to " + tokens.pieces[k],
                        "link[layer, head] = outputs.attentions[layer][0, head, " + std::to_string(q) + ", " +
                            std::to_string(k) + "]   # query " + std::to_string(q) + " -> key " + std::to_string(k));
    s.in_shape("attn_weights, every layer", {L, 1, h, T, T});
    xt::xtensor<float, 2> link = xt::empty<float>({L, h});  // (L, h)
    std::vector<std::pair<float, std::size_t>> order;
    for (std::size_t n = 0; n < L; ++n)
      for (std::size_t i = 0; i < h; ++i) {
        link(n, i) = rows(n, i, k);
        order.push_back({link(n, i), n * h + i});
      }
    show_map(s, "query.link", link, "weight " + tokens.labels[q] + " -> " + tokens.labels[k]);
    s.keep("query.weights", rows);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::vector<std::string>> table;
    for (std::size_t r = 0; r < std::min(kQueryRanked, order.size()); ++r) {
      const std::size_t n = order[r].second / h, i = order[r].second % h;
      // where else this head looks from the query: its largest weight and the key it falls on
      const float* row = rows.data() + (n * h + i) * T;
      const std::size_t best = static_cast<std::size_t>(std::max_element(row, row + q + 1) - row);
      table.push_back({std::to_string(r + 1), head_id(n, i), fixed_or_dash(order[r].first, 3),
                       best == k ? "this key" : std::to_string(best) + " " + tokens.pieces[best] + " " + fixed_or_dash(row[best], 3)});
    }
    s.table({"rank", "layer.head", "weight", "the head's largest weight"}, table);
    const double even = 1.0 / double(q + 1);
    std::size_t above = 0;
    for (const auto& o : order) above += o.first > 2 * even;
    s.note("Ranked by the weight " + qn + " puts on key " + std::to_string(k) + " " + tokens.pieces[k] + ". Spread evenly over its " +
           std::to_string(q + 1) + " keys a head would give " + fixed_or_dash(even, 3) + "; " + std::to_string(above) + " of " +
           std::to_string(L * h) + " heads give more than twice that. --layer " + std::to_string(order[0].second / h) +
           " --head " + std::to_string(order[0].second % h) + " shows the strongest in full.");
    return;
  }
  auto& s = out.stage("Where " + tokens.pieces[q] + " looks, in every layer and head",
                      "row[layer, head] = outputs.attentions[layer][0, head, " + std::to_string(q) + "]   # (T,) over the keys");
  s.in_shape("attn_weights, every layer", {L, 1, h, T, T});
  s.keep("query.weights", rows);
  // The strongest links leaving out key 0 (where most heads park their weight) and the query itself.
  std::vector<std::pair<float, std::size_t>> links;  // (weight, (layer * h + head) * T + key)
  for (std::size_t n = 0; n < L; ++n)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t k = 1; k < q; ++k) links.push_back({rows(n, i, k), (n * h + i) * T + k});
  std::stable_sort(links.begin(), links.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<std::string>> table;
  for (std::size_t r = 0; r < std::min(kQueryRanked, links.size()); ++r) {
    const std::size_t k = links[r].second % T, nh = links[r].second / T;
    table.push_back({std::to_string(r + 1), head_id(nh / h, nh % h), std::to_string(k) + " " + tokens.pieces[k], fixed_or_dash(links[r].first, 3)});
  }
  if (!table.empty()) s.table({"rank", "layer.head", "key", "weight"}, table);
  // Per layer: the key the heads agree on most (mean over heads), leaving out nothing.
  std::vector<std::vector<std::string>> per_layer;
  for (std::size_t n = 0; n < L; ++n) {
    std::vector<double> mean(q + 1, 0.0);
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t k = 0; k <= q; ++k) mean[k] += rows(n, i, k) / double(h);
    const std::size_t k = static_cast<std::size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());
    std::size_t bi = 0, bk = 1;
    float bw = -1;
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t kk = 1; kk < q; ++kk)
        if (rows(n, i, kk) > bw) bw = rows(n, i, kk), bi = i, bk = kk;
    per_layer.push_back({std::to_string(n), std::to_string(k) + " " + tokens.pieces[k], fixed_or_dash(mean[k], 3),
                         q > 1 ? "head " + std::to_string(bi) + ": " + std::to_string(bk) + " " + tokens.pieces[bk] + " " + fixed_or_dash(bw, 3) : "-"});
  }
  s.table({"layer", "key with most weight (mean over heads)", "weight", "strongest other link"}, per_layer);
  s.note(q > 1 ? "The ranked links leave out key 0, where many heads put most of their weight whatever the text (the attention "
                 "sink), and the query itself. --key WORD ranks every head by the weight on one key."
               : "The query is one of the first two tokens: there is no key besides the first and itself.");
}

LogitLens logit_lens(const Mat& x, const std::vector<std::size_t>& answers, const Mat& answer_rows,
                     const LogitBlocks& logits_of) {
  const std::size_t R = x.shape()[0], d = x.shape()[1], T = answers.size(), L = R / T;
  // The answer's logit at every row first, (L * T, d) . (T, d)[r % T]: the ranks below need it.
  std::vector<double> answer(R, 0.0);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t i = 0; i < d; ++i) answer[r] += double(x(r, i)) * answer_rows(r % T, i);
  // Then per row, online over the vocabulary's blocks: the largest logit and its id, the sum of
  // exp(z - max), and how many other tokens score above the answer.
  std::vector<double> mx(R, -INFINITY), z(R, 0.0);
  std::vector<std::size_t> arg(R, 0), higher(R, 0);
  logits_of(x, [&](std::size_t r0, std::size_t n, const float* zb) {
    for (std::size_t r = 0; r < R; ++r) {
      const float* row = zb + r * n;
      const std::size_t a = answers[r % T];
      for (std::size_t v = 0; v < n; ++v) {
        const double zv = row[v];
        if (zv > mx[r]) {
          z[r] = z[r] * std::exp(mx[r] - zv) + 1.0;
          mx[r] = zv, arg[r] = r0 + v;
        } else {
          z[r] += std::exp(zv - mx[r]);
        }
        higher[r] += r0 + v != a && zv > answer[r];
      }
    }
  });
  LogitLens lens;
  lens.d = d;
  lens.top_id = xt::empty<float>({L, T});       // (L, T)
  lens.top_p = xt::empty<float>({L, T});        // (L, T)
  lens.answer_p = xt::empty<float>({L, T});     // (L, T)
  lens.answer_rank = xt::empty<float>({L, T});  // (L, T)
  for (std::size_t r = 0; r < R; ++r) {
    lens.top_id.data()[r] = static_cast<float>(arg[r]);
    lens.top_p.data()[r] = static_cast<float>(1.0 / z[r]);
    lens.answer_p.data()[r] = static_cast<float>(std::exp(answer[r] - mx[r]) / z[r]);
    lens.answer_rank.data()[r] = static_cast<float>(higher[r] + 1);
  }
  return lens;
}

void logit_lens_stage(report::Report& out, const LogitLens& lens, const std::vector<std::size_t>& answers,
                      const std::vector<double>& answer_p_model, const TokenNames& tokens,
                      const std::function<std::string(std::size_t)>& piece_of, const std::string& norm_name,
                      const std::string& head_name) {
  const std::size_t L = lens.top_id.shape()[0], T = lens.top_id.shape()[1];
  auto& s = out.stage("The logit lens: what each layer would predict",
                      "lens[n] = softmax(" + norm_name + "(output of layer n) @ " + head_name +
                          "^T)   # (L, T, d) -> (L, T, V), top token per layer and position");
  s.in_shape("every layer's output, after " + norm_name, {L, std::size_t{1}, T, lens.d});
  s.keep("logit_lens.top_id", lens.top_id).keep("logit_lens.top_p", lens.top_p);
  s.keep("logit_lens.answer_p", lens.answer_p).keep("logit_lens.answer_rank", lens.answer_rank);
  const std::size_t t = T - 1;
  const std::string answer = piece_of(answers[t]);
  std::vector<std::vector<std::string>> rows;
  std::size_t settled = L;  // the first layer from which the answer stays first
  for (std::size_t n = L; n-- > 0;) {
    if (lens.answer_rank(n, t) != 1) break;
    settled = n;
  }
  for (std::size_t n = 0; n < L; ++n)
    rows.push_back({std::to_string(n), piece_of(static_cast<std::size_t>(lens.top_id(n, t))), fixed_or_dash(lens.top_p(n, t), 3),
                    fixed_or_dash(lens.answer_p(n, t), 3), std::to_string(static_cast<std::size_t>(lens.answer_rank(n, t)))});
  s.table({"layer", "top token after " + tokens.labels[t], "p", "p of " + answer, "its rank"}, rows);
  const double worst = std::abs(double(lens.top_id(L - 1, t)) - double(answers[t])) +
                       std::abs(double(lens.answer_p(L - 1, t)) - answer_p_model[t]);
  s.check("the last layer's lens is the model's own prediction (same token, same p)", "|id difference| + |p difference|", worst,
          Relation::AtMost, 1e-5);
  {
    // The last positions (as many as fit 80 columns), every layer.
    const std::size_t from = T > kLensColumns ? T - kLensColumns : 0;
    std::vector<std::string> header = {"layer"};
    for (std::size_t p = from; p < T; ++p) header.push_back(tokens.labels[p].substr(0, 8));
    std::vector<std::vector<std::string>> grid;
    for (std::size_t n = 0; n < L; ++n) {
      std::vector<std::string> r = {std::to_string(n)};
      for (std::size_t p = from; p < T; ++p) {
        std::string w = piece_of(static_cast<std::size_t>(lens.top_id(n, p)));
        if (w.size() > 2 && w.front() == '"') w = w.substr(1, w.size() - 2);
        r.push_back(w.size() > 8 ? w.substr(0, 7) + "~" : w);
      }
      grid.push_back(r);
    }
    s.table(header, grid);
    s.note("Each column is a position of the prompt (its token on top), each row the layer whose output is read: the "
           "token that layer's output, put through the final norm and the unembedding, ranks first." +
           (from ? " The last " + std::to_string(kLensColumns) + " of " + std::to_string(T) +
                       " positions are shown; logit_lens.top_id (L, T) holds them all (--dump, --npz, --format json)."
                 : std::string()));
  }
  s.note(settled < L ? "After " + tokens.pieces[t] + " the model's answer " + answer + " ranks first from layer " +
                           std::to_string(settled) + " on (of " + std::to_string(L) + ")."
                     : "The model's answer " + answer + " never ranks first before the last layer's output.");
}

}  // namespace attn::cli
