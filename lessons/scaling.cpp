// Lesson: why attention scores are divided by sqrt(d_k) (Phillips, appendix on scaling).
//
// If the entries of q and k are independent with mean 0 and variance 1, q . k is a sum of d_k
// such products, so its variance is d_k: wide heads give large scores. Softmax of large scores
// is nearly one-hot, its entropy collapses and its Jacobian (the gradient that flows back to the
// scores) nearly vanishes. Dividing by sqrt(d_k) brings the variance back to 1 for every d_k.
// The lesson measures all of this instead of asserting it.
//
// Legend: N samples, d_k head width, T keys in one example row.
#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "core/stats.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

constexpr std::size_t kWidths[] = {2, 8, 32, 128, 512};
constexpr std::size_t kRows = 256;      // query rows per d_k in the softmax comparison
constexpr std::size_t kTableRows = 16;  // rows of the side-by-side table before "..."
constexpr std::size_t kMaxKeys = 4096;   // --seq-len's limit here (the work is kRows * T * five widths)

// Row-wise dot products: (N, d) . (N, d) -> (N,)
Vec row_dots(const Mat& q, const Mat& k) {
  Vec out = xt::zeros<float>({q.shape()[0]});  // (N,)
  for (std::size_t n = 0; n < q.shape()[0]; ++n) {
    float s = 0.0f;
    for (std::size_t i = 0; i < q.shape()[1]; ++i) s += q(n, i) * k(n, i);
    out(n) = s;
  }
  return out;
}

std::string f(double v, int decimals) { return report::fixed(v, decimals); }

// Part 1's measurements: the variance of q . k for each width, and the d_k = 8 samples shown.
struct VarianceSweep {
  std::vector<std::vector<std::string>> rows;  // the table, one row per width
  Vec var_raw;                                 // (5,)
  Vec var_scaled;                              // (5,)
  Mat q8, k8;                                  // (3, 8) each: the first d_k = 8 samples
  Vec dots8;                                   // (3,)
  std::vector<double> scaled_variances;        // one per width, for the checks
  std::vector<double> raw_variances;           // one per width, for the notes
};

// Part 2's measurements: softmax statistics with and without scaling, averaged over kRows rows.
struct RowStats {
  double max_raw, max_scaled, j_raw, j_scaled;  // means over the kRows rows
};
struct SoftmaxSweep {
  std::vector<std::vector<std::string>> table;      // one row per width
  std::vector<RowStats> stats;                      // one per width
  Vec example_scores, example_raw, example_scaled;  // (T,) each: the first row at d_k = 512
};

// What the stages share: the sizes, the key labels and both measurements.
struct ScalingLesson {
  std::uint64_t seed;
  std::size_t N;  // pairs (q, k) per width
  std::size_t T;  // keys per row
  report::Labels keys_labels;
  VarianceSweep variance;
  SoftmaxSweep softmax;
};

// The options, checked before anything is drawn, and the header.
ScalingLesson setup(const LessonOptions& opts, report::Report& out) {
  ScalingLesson r;
  r.seed = opts.seed.value_or(0);
  const std::uint64_t seed = r.seed;
  // N pairs (q, k) per d_k (--samples, this lesson's own option): at 4096 the variance is known to ~2%.
  const std::size_t N = r.N = static_cast<std::size_t>(opts.integer("--samples"));
  check_size("q and k at d_k = 512", {N, 512}, /*shapes_only=*/true, "--samples");  // held, 3 rows printed
  const std::size_t T = r.T = size_option(opts.seq_len, 8, "--seq-len");
  // Every key is scored by 256 query rows at five widths and every statistic reads all of them,
  // so the work grows with T whatever is printed (--shapes-only too). 4096 keys take about half a
  // second; 65536 took 7 to 11 s for tables that look the same.
  if (T > kMaxKeys)
    throw UsageError("--seq-len is out of range for scaling: each of " + std::to_string(kRows) +
                         " query rows is scored against every key at five widths",
                     "--seq-len", "1.." + std::to_string(kMaxKeys), std::to_string(T));
  check_size("scores", {kRows, T}, /*shapes_only=*/true, "--seq-len");  // held, never printed whole
  check_size("softmax(scores)", {T}, opts.shapes_only, "--seq-len");
  for (std::size_t t = 0; t < T; ++t) r.keys_labels.push_back("k" + std::to_string(t + 1));

  out.header = {"scaling", "Why scores are divided by sqrt(d_k)",
                "Phillips, The Implemented Transformer, appendix on scaling",
                {"seed " + std::to_string(seed), "samples " + std::to_string(N),
                 "d_k in (2, 8, 32, 128, 512)", "keys per row " + std::to_string(T)},
                {"import torch", "torch.manual_seed(" + std::to_string(seed) + ")",
                 "for d_k in (2, 8, 32, 128, 512): q = torch.randn(" + std::to_string(N) +
                     ", d_k); k = torch.randn(" + std::to_string(N) +
                     ", d_k); dots = (q * k).sum(dim=-1); dots.var(unbiased=False)",
                 "for d_k in (2, 8, 32, 128, 512): queries = torch.randn(" + std::to_string(kRows) +
                     ", d_k); keys = torch.randn(" + std::to_string(T) + ", d_k)"}};
  return r;
}

// Part 1: the variance of q . k, measured for each width.
VarianceSweep measure_variance(TorchGenerator& gen, std::size_t N) {
  VarianceSweep v;
  v.var_raw = xt::zeros<float>({std::size(kWidths)});     // (5,)
  v.var_scaled = xt::zeros<float>({std::size(kWidths)});  // (5,)
  for (std::size_t w = 0; w < std::size(kWidths); ++w) {
    const std::size_t d_k = kWidths[w];
    const Mat q = gen.randn(N, d_k);  // (N, d_k)
    const Mat k = gen.randn(N, d_k);  // (N, d_k)
    const Vec dots = row_dots(q, k);  // (N,)
    const Vec scaled = dots / static_cast<float>(std::sqrt(static_cast<double>(d_k)));  // (N,)
    const Moments raw = moments(dots), sc = moments(scaled);
    v.var_raw(w) = static_cast<float>(raw.variance);
    v.var_scaled(w) = static_cast<float>(sc.variance);
    v.scaled_variances.push_back(sc.variance);
    v.raw_variances.push_back(raw.variance);
    v.rows.push_back({std::to_string(d_k), f(raw.mean, 3), f(raw.variance, 2),
                      f(std::sqrt(raw.variance), 2), f(sc.variance, 3)});
    if (d_k == 8) {
      v.q8 = xt::view(q, xt::range(0, 3), xt::all());  // (3, 8)
      v.k8 = xt::view(k, xt::range(0, 3), xt::all());  // (3, 8)
      v.dots8 = xt::view(dots, xt::range(0, 3));       // (3,)
    }
  }
  return v;
}

void stage_dot_products(const ScalingLesson& r, report::Report& out) {
  auto& s = out.stage("Dot products of random vectors", "q . k = sum_i q_i * k_i,  q_i, k_i ~ N(0, 1)");
  s.show("q[:3]", r.variance.q8).show("k[:3]", r.variance.k8).show("(q[:3] * k[:3]).sum(dim=-1)", r.variance.dots8);
  s.note("Shown: the first 3 of the " + std::to_string(r.N) + " pairs drawn at d_k = 8.");
  s.note("Each entry is drawn with mean 0 and variance 1, the scale of a well-initialised "
         "layer's outputs. Each product q_i * k_i then has variance 1 too, and a dot product "
         "adds d_k of them.");
}

void stage_variance(const ScalingLesson& r, report::Report& out) {
  const std::size_t N = r.N;
  const VarianceSweep& v = r.variance;
  auto& s = out.stage("The variance of q . k grows with d_k",
                      "Var(q . k) = d_k;   Var(q . k / sqrt(d_k)) = 1");
  s.table({"d_k", "mean(q.k)", "Var(q.k)", "std(q.k)", "Var(q.k / sqrt(d_k))"}, v.rows);
  s.show("dots.var(unbiased=False)", v.var_raw).show("(dots / sqrt(d_k)).var(unbiased=False)", v.var_scaled);
  // The bound is sampling error, not a round 10%. z = q.k / sqrt(d_k) has E[z^2] = 1 and
  // E[z^4] = 3 + 6/d_k, so the variance of N samples has a standard error of
  // sqrt((2 + 6/d_k) / N): 0.035 at d_k = 2 and N = 4096. Five standard errors would be
  // exceeded by chance about once in a million widths.
  for (std::size_t w = 0; w < std::size(kWidths); ++w) {
    const double d_k = static_cast<double>(kWidths[w]);
    const double standard_error = std::sqrt((2.0 + 6.0 / d_k) / static_cast<double>(N));
    s.check("at d_k = " + std::to_string(kWidths[w]) + " the scaled variance is 1 within 5 standard errors",
            "|Var - 1|", std::fabs(v.scaled_variances[w] - 1.0), Relation::AtMost,
            std::round(5.0 * standard_error * 1000.0) / 1000.0);
  }
  s.note("Var is the population variance, as torch's dots.var(unbiased=False); dots.var() "
         "divides by N - 1 = " + std::to_string(N - 1) + " and gives values larger by "
         "a factor " + std::to_string(N) + "/" + std::to_string(N - 1) + ".");
  const auto [lo, hi] = std::minmax_element(v.scaled_variances.begin(), v.scaled_variances.end());
  s.note("Measured over " + std::to_string(N) + " pairs per width. The raw variance "
         "tracks d_k, so at d_k = 512 a typical score (one standard deviation) is about +-" +
         f(std::sqrt(v.raw_variances.back()), 1) + "; after dividing by sqrt(d_k) it is between +-" +
         f(std::sqrt(*lo), 2) + " and +-" + f(std::sqrt(*hi), 2) + " at every width.");
}

// Part 2: rows of T scores per width, softmax with and without scaling. Each statistic is
// averaged over kRows query rows, so the trend is not one row's luck.
SoftmaxSweep measure_softmax(TorchGenerator& gen, std::size_t T) {
  SoftmaxSweep sw;
  // Three (R, T) buffers made once and refilled for every width: at --seq-len 65536 each is 64 MB,
  // and fresh ones per width (plus a copy per row) cost more than the arithmetic.
  Mat scores = xt::empty<float>({kRows, T});    // (R, T)
  Mat p_raw = xt::empty<float>({kRows, T});     // (R, T)
  Mat p_scaled = xt::empty<float>({kRows, T});  // (R, T)
  // The largest of n values, NaN ignored as xt::amax's comparisons do.
  auto row_max = [](const float* v, std::size_t n) {
    float m = v[0];
    for (std::size_t j = 1; j < n; ++j) m = v[j] > m ? v[j] : m;
    return m;
  };
  for (std::size_t d_k : kWidths) {
    const Mat queries = gen.randn(kRows, d_k);  // (R, d_k)
    const Mat keys = gen.randn(T, d_k);         // (T, d_k)
    sgemm(kRows, T, d_k, 1.0f, queries.data(), d_k, keys.data(), d_k, true, 0.0f, scores.data(), T);  // (R, d_k) @ (d_k, T) -> (R, T)
    std::copy(scores.begin(), scores.end(), p_raw.begin());
    softmax_rows_inplace(p_raw.data(), kRows, T);  // softmax(scores)
    const float root = std::sqrt(static_cast<float>(d_k));
    for (std::size_t i = 0; i < scores.size(); ++i) p_scaled.data()[i] = scores.data()[i] / root;  // scale_scores
    softmax_rows_inplace(p_scaled.data(), kRows, T);  // softmax(scores / sqrt(d_k))
    double max_raw = 0, max_scaled = 0, h_raw = 0, h_scaled = 0, j_raw = 0, j_scaled = 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      const float* a = p_raw.data() + r * T;     // (T,) row r, read in place
      const float* b = p_scaled.data() + r * T;  // (T,)
      max_raw += row_max(a, T);
      max_scaled += row_max(b, T);
      h_raw += entropy(a, T);
      h_scaled += entropy(b, T);
      j_raw += softmax_jacobian_norm(a, T);
      j_scaled += softmax_jacobian_norm(b, T);
    }
    const double n = kRows;
    sw.stats.push_back({max_raw / n, max_scaled / n, j_raw / n, j_scaled / n});
    sw.table.push_back({std::to_string(d_k), f(max_raw / n, 4), f(max_scaled / n, 4), f(h_raw / n, 3),
                        f(h_scaled / n, 3), f(j_raw / n, 4), f(j_scaled / n, 4)});
    if (d_k == 512) {
      sw.example_scores = xt::view(scores, 0);  // (T,)
      sw.example_raw = xt::view(p_raw, 0);      // (T,)
      sw.example_scaled = xt::view(p_scaled, 0);  // (T,)
    }
  }
  return sw;
}

void stage_softmax_sweep(const ScalingLesson& r, report::Report& out) {
  const std::size_t T = r.T;
  const std::vector<RowStats>& stats = r.softmax.stats;
  auto& s = out.stage("Softmax of rows of " + std::to_string(T) + " scores, unscaled vs scaled",
                      "p = softmax(q @ keys^T)  vs  p = softmax(q @ keys^T / sqrt(d_k));  J = diag(p) - p p^T");
  s.table({"d_k", "max p raw", "max p scaled", "entropy raw", "entropy scaled", "||J|| raw", "||J|| scaled"},
          r.softmax.table);
  s.note("Each column is the mean over " + std::to_string(kRows) + " query rows against the same " +
         std::to_string(T) + " keys. Entropy is at most log(" + std::to_string(T) + ") = " +
         f(std::log(static_cast<double>(T)), 3) + " (all keys equal) and 0 for a one-hot row. ||J|| "
         "is the Frobenius norm of the softmax Jacobian, which multiplies the gradient the scores "
         "receive in training.");
  if (T == 1) {
    s.note("With one key per row softmax gives that key 1 whatever its score, so every column is "
           "the same: add keys (--seq-len) to see scaling matter.");
  } else {
    double lo_max = 1, hi_max = 0, lo_j = 1e300, hi_j = 0;  // scaled columns over the widths
    for (const auto& st : stats) {
      lo_max = std::min(lo_max, st.max_scaled), hi_max = std::max(hi_max, st.max_scaled);
      lo_j = std::min(lo_j, st.j_scaled), hi_j = std::max(hi_j, st.j_scaled);
    }
    const RowStats& narrow = stats.front();
    const RowStats& wide = stats.back();
    s.note("Unscaled, the spread of the scores grows like sqrt(d_k): from d_k = 2 to 512 the mean largest "
           "weight goes from " + f(narrow.max_raw, 4) + " to " + f(wide.max_raw, 4) + " and ||J|| from " +
           f(narrow.j_raw, 4) + " to " + f(wide.j_raw, 4) +
           (wide.max_raw >= 0.9 ? ": the rows turn nearly one-hot and the gradient to the scores fades." : ".") +
           " Scaled, the mean largest weight stays between " + f(lo_max, 4) + " and " + f(hi_max, 4) +
           " and ||J|| between " + f(lo_j, 4) + " and " + f(hi_j, 4) + " at every width.");
  }
}

void stage_one_row(const ScalingLesson& r, report::Report& out) {
  const std::size_t T = r.T;
  const report::Labels& keys_labels = r.keys_labels;
  const Vec& example_scores = r.softmax.example_scores;  // (T,)
  const Vec& example_raw = r.softmax.example_raw;        // (T,)
  const Vec& example_scaled = r.softmax.example_scaled;  // (T,)
  auto& s = out.stage("One row both ways (d_k = 512)", "scores = queries[0] @ keys^T;  scores / sqrt(512)");
  std::vector<std::vector<std::string>> rows;
  const float root = std::sqrt(512.0f);
  for (std::size_t t = 0; t < T && t < kTableRows; ++t)
    rows.push_back({keys_labels[t], f(example_scores(t), 2), f(example_raw(t), 4),
                    f(example_scores(t) / root, 4), f(example_scaled(t), 4)});
  if (T > kTableRows) rows.push_back({"...", "", "", "", ""});
  s.table({"key", "score", "softmax(score)", "score / sqrt(d_k)", "softmax(score / sqrt(d_k))"}, rows);
  s.show("softmax(scores)", example_raw, {}, keys_labels);
  s.show("softmax(scores / sqrt(d_k))", example_scaled, {}, keys_labels);
  // The two rows stacked are one query's attention weights both ways: drawn as one heatmap (and
  // one --svg picture) on a shared scale, a single bright cell above a spread.
  Mat both = xt::empty<float>({std::size_t{2}, T});  // (2, T)
  xt::view(both, 0) = example_raw;
  xt::view(both, 1) = example_scaled;
  s.show("torch.stack((softmax(scores), softmax(scores / sqrt(d_k))))", both, {"unscaled", "scaled"}, keys_labels)
      .attention_weights({}, "one query");  // random q, k: no weights
  // What this one row shows, measured: the largest weight both ways, and how many keys each
  // way get less than 0.00005 (printed as 0.0000).
  std::size_t tiny_raw = 0, tiny_scaled = 0;
  for (std::size_t t = 0; t < T; ++t) {
    tiny_raw += example_raw(t) < 5e-5f;
    tiny_scaled += example_scaled(t) < 5e-5f;
  }
  const auto count = [&](std::size_t n) { return std::to_string(n) + " of " + std::to_string(T); };
  s.note("Same query, same keys, the same ranking both ways. Unscaled, the largest score takes " +
         f(xt::amax(example_raw)(), 4) + " of the weight and " + count(tiny_raw) +
         " keys get less than 0.00005; scaled, the largest takes " + f(xt::amax(example_scaled)(), 4) + " and " +
         count(tiny_scaled) + " keys get less than 0.00005.");
}

}  // namespace

// The lesson as its table of contents: both measurements draw from one generator, in this order.
void lesson_scaling(const LessonOptions& opts, report::Report& out) {
  ScalingLesson r = setup(opts, out);
  TorchGenerator gen(r.seed);
  // Part 1: the variance of q . k.
  r.variance = measure_variance(gen, r.N);
  stage_dot_products(r, out);
  stage_variance(r, out);
  // Part 2: what that variance does to softmax.
  r.softmax = measure_softmax(gen, r.T);
  stage_softmax_sweep(r, out);
  stage_one_row(r, out);
}

// Teaching order 700: see `attn list`; docs/scaling.md is its page.
ATTN_REGISTER_LESSON({700, "scaling", "Why scores are divided by sqrt(d_k)",
                      "the variance of q.k grows with d_k; unscaled softmax saturates and the gradient vanishes",
                      "Phillips, The Implemented Transformer, appendix on scaling",
                      kSeed | kSeqLen, lesson_scaling,
                      {{"--samples", OptionType::Integer, 16, 65536, 4096,
                        "Pairs (q, k) drawn per d_k to measure Var(q . k)"}}});

}  // namespace attn
