// The fast attention core (see fast_attention.hpp for the plan and its memory bound).
//
// Legend: B batch, h query heads, h_kv key/value heads, T query tokens, S key tokens, d_k
// query/key width, d_v value width, rq <= block rows of one unit, n keys its last row sees.
//
// Everything works on raw buffers through strides: the same kernel serves (B, h, T, d) tensors
// and (B, T, h * d) projections, and a KV head is read in place by every query head of its
// group. The row loops are written so that the compiler vectorises them: the `omp simd` pragmas
// need only -fopenmp-simd, no OpenMP runtime, and -fno-trapping-math lets the compiler turn the
// selects (`x < -87 ? ...`) into vector blends; CMakeLists.txt sets both for this file.
#include "core/fast_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/matmul.hpp"

namespace attn {
namespace {

// Where one role's heads live: element (b, head, t, c) at data[b * batch + head * head_step +
// t * row + c].
struct Operand {
  const float* data;
  std::size_t batch, head_step, row;
};

using ExpRow = float (*)(float*, std::size_t);

struct Problem {
  Operand q, k, v;
  float* out;  // (b, head, t, c) at out[b * out_batch + head * out_head + t * out_row + c]
  std::size_t out_batch, out_head, out_row;
  std::size_t B, h, h_kv, T, S, d_k, d_v;
  bool causal;
  float scale;  // 1 / sqrt(d_k), as sgemm's alpha
  ExpRow exp_row = nullptr;  // the row softmax's exps, compiled for one instruction set
};

// Keys query row i may see: 0 .. i + (S - T) when causal, all S otherwise.
std::size_t visible(const Problem& p, std::size_t i) { return p.causal ? i + (p.S - p.T) + 1 : p.S; }

// exp(x) for x <= 0, the shifted scores of a softmax row, in a form the compiler vectorises:
// x = n ln 2 + r with |r| <= ln 2 / 2, exp(r) by Cephes' degree-7 expf polynomial, 2^n put
// straight into the exponent bits. Relative error below 2e-7 on [-87, 0]; below -87 exp(x) is
// under 1.7e-38 and 0 is returned (as float32 rounds exp of anything below -103.97).
inline float exp_nonpositive(float x) {
  const float xc = x < -87.0f ? -87.0f : x;  // keeps n in [-126, 0], a normal exponent
  constexpr float kRound = 12582912.0f;       // 1.5 * 2^23: adding it rounds to an integer
  const float fn = (xc * 1.44269504088896341f + kRound) - kRound;  // n = round(x / ln 2)
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440e-4f;  // x - n ln 2, in two parts
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;  // exp(r)
  const std::int32_t bits = (static_cast<std::int32_t>(fn) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);  // 2^n
  return x < -87.0f ? 0.0f : y * two_n;
}

// One row of scores, n visible: replaced by exp(s - max(s)); returns 1 / sum of them, or NaN
// when the row holds NaN or its max is infinite (softmax_rows gives a NaN row then too).
// These exps cost as much as the two sgemms together, so the body is compiled three times below,
// for AVX-512, AVX2 and plain x86-64 (16, 8 or 4 floats at a time), and the widest the CPU has
// runs unless FastAttentionOptions::isa asks for another (the tests run all three). All three do
// the same operations on each element; only the order in which the sum adds up its partial sums
// differs.
__attribute__((always_inline)) inline float exp_row_body(float* row, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int nans = 0;
#pragma omp simd reduction(max : m) reduction(+ : nans)
  for (std::size_t j = 0; j < n; ++j) {
    m = row[j] > m ? row[j] : m;
    nans += row[j] != row[j];
  }
  if (nans != 0 || !std::isfinite(m)) {
    std::fill(row, row + n, 0.0f);
    return std::numeric_limits<float>::quiet_NaN();
  }
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (std::size_t j = 0; j < n; ++j) {
    const float e = exp_nonpositive(row[j] - m);
    row[j] = e;
    sum += e;
  }
  return 1.0f / sum;
}

__attribute__((target("avx512f"))) float exp_row_avx512(float* row, std::size_t n) { return exp_row_body(row, n); }
__attribute__((target("avx2,fma"))) float exp_row_avx2(float* row, std::size_t n) { return exp_row_body(row, n); }
float exp_row_baseline(float* row, std::size_t n) { return exp_row_body(row, n); }

ExpRow exp_row_for(FastAttentionIsa isa) {
  switch (isa) {
    case FastAttentionIsa::avx512: return exp_row_avx512;
    case FastAttentionIsa::avx2: return exp_row_avx2;
    case FastAttentionIsa::baseline: return exp_row_baseline;
    case FastAttentionIsa::best: break;
  }
  return exp_row_for(fast_attention_isas().front());
}

// One unit: query rows [i0, i0 + rq) of query head `head` in batch entry b. s holds rq * n
// floats, inv rq.
void run_unit(const Problem& p, std::size_t b, std::size_t head, std::size_t i0, std::size_t rq, float* s,
              float* inv) {
  const std::size_t g = head / (p.h / p.h_kv);  // the key/value head this query head reads
  const float* q = p.q.data + b * p.q.batch + head * p.q.head_step + i0 * p.q.row;  // (rq, d_k)
  const float* k = p.k.data + b * p.k.batch + g * p.k.head_step;                     // (S, d_k)
  const float* v = p.v.data + b * p.v.batch + g * p.v.head_step;                     // (S, d_v)
  float* o = p.out + b * p.out_batch + head * p.out_head + i0 * p.out_row;           // (rq, d_v)
  const std::size_t n = visible(p, i0 + rq - 1);  // keys the unit's last row sees
  sgemm(rq, n, p.d_k, p.scale, q, p.q.row, k, p.k.row, true, 0.0f, s, n);  // (rq, n) = Q K[:n]^T / sqrt(d_k)
  for (std::size_t r = 0; r < rq; ++r) {
    float* row = s + r * n;
    const std::size_t live = visible(p, i0 + r);
    inv[r] = p.exp_row(row, live);
    std::fill(row + live, row + n, 0.0f);  // masked: weight exactly 0, never exponentiated
  }
  sgemm(rq, p.d_v, n, 1.0f, s, n, v, p.v.row, false, 0.0f, o, p.out_row);  // (rq, d_v) = P V[:n]
  for (std::size_t r = 0; r < rq; ++r) {
    float* o_row = o + r * p.out_row;
    const float f = inv[r];
#pragma omp simd
    for (std::size_t c = 0; c < p.d_v; ++c) o_row[c] *= f;
  }
}

struct Unit {
  std::size_t b, head, i0, rq;
};

void run(Problem p, const FastAttentionOptions& options, FastAttentionStats* stats) {
  p.exp_row = exp_row_for(options.isa);
  const std::size_t block = options.block ? options.block : kDefaultBlock;
  const std::size_t blocks = (p.T + block - 1) / block;
  // Most expensive first (causal: the last query blocks see the most keys), so that the threads
  // finish together; within a block, the query heads of one key/value head side by side.
  std::vector<Unit> units;
  units.reserve(p.B * p.h * blocks);
  for (std::size_t blk = blocks; blk-- > 0;)
    for (std::size_t b = 0; b < p.B; ++b)
      for (std::size_t head = 0; head < p.h; ++head)
        units.push_back({b, head, blk * block, std::min(block, p.T - blk * block)});
  std::size_t threads = options.threads ? options.threads : blas_threads();
  threads = std::max<std::size_t>(1, std::min(threads, units.size()));
  const std::size_t rows = std::min(block, p.T);
  // Every buffer is allocated here, before any thread starts: an allocation failure throws in
  // the caller's thread, and the workers cannot fail.
  std::vector<std::vector<float>> scratch(threads, std::vector<float>(rows * p.S + rows));

  if (stats) {
    FastAttentionStats st;
    st.threads = threads;
    st.block = block;
    st.units = units.size();
    for (const Unit& u : units) st.scores_computed += u.rq * visible(p, u.i0 + u.rq - 1);
    st.scores_full = p.B * p.h * p.T * p.S;
    st.scratch_bytes = threads * (rows * p.S + rows) * sizeof(float);
    *stats = st;
  }
  auto work = [&](std::vector<float>& buf, std::atomic<std::size_t>& next) {
    for (std::size_t u = next++; u < units.size(); u = next++)
      run_unit(p, units[u].b, units[u].head, units[u].i0, units[u].rq, buf.data(), buf.data() + rows * p.S);
  };
  std::atomic<std::size_t> next{0};
  if (threads == 1) {
    work(scratch[0], next);  // OpenBLAS keeps its own threads for these sgemms
    return;
  }
  const BlasThreadsScope one_blas_thread(1);  // our threads share the cores; each sgemm takes one
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(scratch[t]), std::ref(next));
  work(scratch[0], next);
  for (std::thread& th : pool) th.join();
}

[[noreturn]] void refuse(const std::string& fn, const std::string& what, const std::string& shapes) {
  throw std::invalid_argument(fn + ": " + what + ": " + shapes);
}

// The checks both entry points share, on the sizes they read.
void check(const std::string& fn, const std::string& shapes, std::size_t h, std::size_t h_kv, std::size_t T,
           std::size_t S, std::size_t d_k, bool causal, FastAttentionIsa isa) {
  const std::vector<FastAttentionIsa> here = fast_attention_isas();
  if (std::find(here.begin(), here.end(), isa) == here.end() && isa != FastAttentionIsa::best)
    refuse(fn, std::string("this CPU does not run the ") + fast_attention_isa_name(isa) + " code", shapes);
  if (h_kv == 0 || h % h_kv != 0)
    refuse(fn, std::to_string(h_kv) + " key/value heads do not divide " + std::to_string(h) + " query heads", shapes);
  if (d_k == 0) refuse(fn, "head width 0", shapes);
  if (S == 0) refuse(fn, "no keys to attend to", shapes);
  if (causal && S < T)
    refuse(fn, "causal attention needs at least as many keys as queries (the queries are the last T positions)",
           shapes);
}

}  // namespace

std::vector<FastAttentionIsa> fast_attention_isas() {
  std::vector<FastAttentionIsa> isas;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) isas.push_back(FastAttentionIsa::avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back(FastAttentionIsa::avx2);
  isas.push_back(FastAttentionIsa::baseline);
  return isas;
}

const char* fast_attention_isa_name(FastAttentionIsa isa) {
  switch (isa) {
    case FastAttentionIsa::best: return fast_attention_isa_name(fast_attention_isas().front());
    case FastAttentionIsa::avx512: return "AVX-512";
    case FastAttentionIsa::avx2: return "AVX2";
    case FastAttentionIsa::baseline: return "x86-64 (SSE2)";
  }
  return "?";
}

Ten4 attention_context(const Ten4& q, const Ten4& k, const Ten4& v, bool causal, const FastAttentionOptions& options,
                       FastAttentionStats* stats) {
  const std::string fn = "attention_context";
  const std::string shapes = "q " + shape_of(q) + ", k " + shape_of(k) + ", v " + shape_of(v);
  const std::size_t B = q.shape()[0], h = q.shape()[1], T = q.shape()[2], d_k = q.shape()[3];
  const std::size_t h_kv = k.shape()[1], S = k.shape()[2], d_v = v.shape()[3];
  if (k.shape()[0] != B || v.shape()[0] != B || k.shape()[3] != d_k || v.shape()[1] != h_kv || v.shape()[2] != S)
    refuse(fn, "shapes do not fit (q (B, h, T, d_k), k (B, h_kv, S, d_k), v (B, h_kv, S, d_v))", shapes);
  check(fn, shapes, h, h_kv, T, S, d_k, causal, options.isa);
  Ten4 context = xt::empty<float>({B, h, T, d_v});  // (B, h, T, d_v)
  const Problem p{{q.data(), h * T * d_k, T * d_k, d_k},
                  {k.data(), h_kv * S * d_k, S * d_k, d_k},
                  {v.data(), h_kv * S * d_v, S * d_v, d_v},
                  context.data(), h * T * d_v, T * d_v, d_v,
                  B, h, h_kv, T, S, d_k, d_v, causal,
                  1.0f / std::sqrt(static_cast<float>(d_k))};
  if (B * h * T * d_v != 0) run(p, options, stats);
  if (stats) stats->output_bytes = context.size() * sizeof(float);
  return context;
}

Ten3 attention_context_merged(const Ten3& queries, const Ten3& keys, const Ten3& values, std::size_t h,
                              std::size_t h_kv, bool causal, const FastAttentionOptions& options,
                              FastAttentionStats* stats) {
  const std::string fn = "attention_context_merged";
  const std::string shapes = "queries " + shape_of(queries) + ", keys " + shape_of(keys) + ", values " +
                             shape_of(values) + ", h " + std::to_string(h) + ", h_kv " + std::to_string(h_kv);
  const std::size_t B = queries.shape()[0], T = queries.shape()[1], S = keys.shape()[1];
  if (h == 0 || h_kv == 0 || queries.shape()[2] % h != 0 || keys.shape()[2] % h_kv != 0 ||
      values.shape()[2] % h_kv != 0)
    refuse(fn, "the heads do not divide the widths", shapes);
  const std::size_t d_k = queries.shape()[2] / h, d_v = values.shape()[2] / h_kv;
  if (keys.shape()[0] != B || values.shape()[0] != B || values.shape()[1] != S || keys.shape()[2] != h_kv * d_k)
    refuse(fn, "shapes do not fit (queries (B, T, h * d_k), keys (B, S, h_kv * d_k), values (B, S, h_kv * d_v))",
           shapes);
  check(fn, shapes, h, h_kv, T, S, d_k, causal, options.isa);
  Ten3 context = xt::empty<float>({B, T, h * d_v});  // (B, T, h * d_v)
  const std::size_t wq = h * d_k, wk = h_kv * d_k, wv = h_kv * d_v, wo = h * d_v;  // row widths
  const Problem p{{queries.data(), T * wq, d_k, wq},
                  {keys.data(), S * wk, d_k, wk},
                  {values.data(), S * wv, d_v, wv},
                  context.data(), T * wo, d_v, wo,
                  B, h, h_kv, T, S, d_k, d_v, causal,
                  1.0f / std::sqrt(static_cast<float>(d_k))};
  if (B * h * T * d_v != 0) run(p, options, stats);
  if (stats) stats->output_bytes = context.size() * sizeof(float);
  return context;
}

}  // namespace attn
