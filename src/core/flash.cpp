// Flash-style tiled attention (see flash.hpp for the algorithm and its memory bound).
//
// Legend: B batch, h heads, T query tokens, S key tokens, d_k query/key width, d_v value width,
// rq <= tile_q rows of one query block, rk <= tile_k rows of one key tile.
//
// Everything below works on raw row-major buffers: the tile loops run T/tile_q * S/tile_k times,
// and per-tile xtensor views or copies would cost more than the tile's GEMMs
// (docs/architecture.md, "Performance"). The products go through matmul.hpp's strided sgemm.
#include "core/flash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/matmul.hpp"

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// c (m, n) = a (m, kk) @ op(b) + beta * c; op(b) = b (kk, n), or b^T with b (n, kk).
// Rows of a, b and c are contiguous with leading dimensions kk, (kk or n) and n.
void sgemm(const float* a, const float* b, float* c, std::size_t m, std::size_t kk, std::size_t n,
           bool b_transposed, float beta) {
  attn::sgemm(m, n, kk, 1.0f, a, kk, b, b_transposed ? kk : n, b_transposed, beta, c, n);
}

// One (batch, head) problem on contiguous buffers.
struct Problem {
  const float* q;  // (T, d_k)
  const float* k;  // (S, d_k)
  const float* v;  // (S, d_v)
  std::size_t T, S, d_k, d_v;
  bool causal;
};

void check_tiles(std::size_t tile_q, std::size_t tile_k, const char* fn) {
  if (tile_q == 0 || tile_k == 0)
    throw std::invalid_argument(std::string(fn) + ": tile sizes must be at least 1 (tile_q " +
                                std::to_string(tile_q) + ", tile_k " + std::to_string(tile_k) + ")");
}

// q (..., T, d_k), k (..., S, d_k), v (..., S, d_v), with equal leading axes; causal needs S = T.
void check_shapes(const Shape& q, const Shape& k, const Shape& v, bool causal, const char* fn) {
  const std::size_t N = q.size();
  bool fits = k.size() == N && v.size() == N && k[N - 1] == q[N - 1] && v[N - 2] == k[N - 2];
  for (std::size_t d = 0; fits && d + 2 < N; ++d) fits = k[d] == q[d] && v[d] == q[d];
  const std::string shapes = "q " + shape_str(q) + ", k " + shape_str(k) + ", v " + shape_str(v);
  if (!fits)
    throw std::invalid_argument(std::string(fn) + ": " + shapes +
                                " do not fit (q (..., T, d_k), k (..., S, d_k), v (..., S, d_v))");
  if (k[N - 2] == 0) throw std::invalid_argument(std::string(fn) + ": no keys to attend to: " + shapes);
  if (causal && k[N - 2] != q[N - 2])
    throw std::invalid_argument(std::string(fn) + ": causal attention needs as many keys as queries: " +
                                shapes);
}

// Causal: the tile's first key comes after the block's last query (i_end - 1), so every score
// in it is masked. Tiles are visited left to right, so all later tiles of the block are too.
bool tile_in_future(bool causal, std::size_t i_end, std::size_t j0) { return causal && j0 >= i_end; }
bool tile_in_future(const Problem& p, std::size_t i_end, std::size_t j0) {
  return tile_in_future(p.causal, i_end, j0);
}

// Causal: the tile's last key (j0 + rk - 1) comes after the block's first query i0, so at least
// that score is masked; score_tile finds the same by masking.
bool tile_crosses_diagonal(bool causal, std::size_t i0, std::size_t j0, std::size_t rk) {
  return causal && j0 + rk - 1 > i0;
}

// s (rq, rk) = Q[i0:i0+rq] @ K[j0:j0+rk]^T / sqrt(d_k), -inf where key j > query i (causal).
// Divides by the root in float, as scale_scores (and PyTorch) does. Returns whether any score
// was masked.
bool score_tile(const Problem& p, std::size_t i0, std::size_t rq, std::size_t j0, std::size_t rk,
                float* s) {
  sgemm(p.q + i0 * p.d_k, p.k + j0 * p.d_k, s, rq, p.d_k, rk, true, 0.0f);
  const float root = std::sqrt(static_cast<float>(p.d_k));
  bool masked = false;
  for (std::size_t r = 0; r < rq; ++r) {
    float* row = s + r * rk;
    for (std::size_t c = 0; c < rk; ++c) {
      if (p.causal && j0 + c > i0 + r) {
        row[c] = kNegInf;
        masked = true;
      } else {
        row[c] /= root;
      }
    }
  }
  return masked;
}

// The online-softmax update for one scored tile: turns s into p = exp(s - m_new) in place,
// rescales l and o by alpha = exp(m - m_new), then adds rowsum(p) to l and p @ V_tile to o.
// m, l, alpha: rq floats; o: (rq, d_v) with rows d_v apart.
void absorb_tile(const Problem& p, std::size_t rq, std::size_t j0, std::size_t rk, float* s,
                 float* m, float* l, float* alpha, float* o) {
  for (std::size_t r = 0; r < rq; ++r) {
    float* row = s + r * rk;
    float tile_max = kNegInf;
    for (std::size_t c = 0; c < rk; ++c) tile_max = std::fmax(tile_max, row[c]);
    const float m_new = std::fmax(m[r], tile_max);
    if (m_new == kNegInf) {
      // Nothing visible to this row yet (cannot happen in causal self-attention, see flash.hpp):
      // exp(-inf - -inf) would be NaN, so contribute nothing and leave l = 0, o = 0.
      alpha[r] = 1.0f;
      std::fill(row, row + rk, 0.0f);
      continue;
    }
    alpha[r] = std::exp(m[r] - m_new);  // 0 on the first tile (m = -inf), 1 if the max held
    m[r] = m_new;
    float sum = 0.0f;
    for (std::size_t c = 0; c < rk; ++c) {
      row[c] = std::exp(row[c] - m_new);  // masked scores give exp(-inf) = 0
      sum += row[c];
    }
    l[r] = alpha[r] * l[r] + sum;
    float* o_row = o + r * p.d_v;
    for (std::size_t c = 0; c < p.d_v; ++c) o_row[c] *= alpha[r];
  }
  sgemm(s, p.v + j0 * p.d_v, o, rq, rk, p.d_v, false, 1.0f);  // o += p @ V_tile
}

// o /= l row by row. l = 0 (no visible key) gives 0 * inf = NaN, as softmax of an all -inf row.
void finish_block(const Problem& p, std::size_t rq, const float* l, float* o) {
  for (std::size_t r = 0; r < rq; ++r) {
    const float inv = 1.0f / l[r];
    float* o_row = o + r * p.d_v;
    for (std::size_t c = 0; c < p.d_v; ++c) o_row[c] *= inv;
  }
}

// The working memory of one call, sized for the largest tile actually used and reused by every
// query block and every (batch, head).
struct Scratch {
  std::vector<float> s, m, l, alpha;
  Scratch(std::size_t tq, std::size_t tk) : s(tq * tk), m(tq), l(tq), alpha(tq) {}
  std::size_t bytes() const {
    return (s.capacity() + m.capacity() + l.capacity() + alpha.capacity()) * sizeof(float);
  }
};

// The whole of one (batch, head): out (T, d_v) is overwritten.
void flash_one(const Problem& p, std::size_t tile_q, std::size_t tile_k, float* out, Scratch& sc,
               FlashStats& stats) {
  for (std::size_t i0 = 0; i0 < p.T; i0 += tile_q) {
    const std::size_t rq = std::min(tile_q, p.T - i0);
    float* o = out + i0 * p.d_v;  // (rq, d_v): o accumulates in the output itself
    std::fill(o, o + rq * p.d_v, 0.0f);
    std::fill(sc.m.begin(), sc.m.begin() + rq, kNegInf);
    std::fill(sc.l.begin(), sc.l.begin() + rq, 0.0f);
    ++stats.query_blocks;
    for (std::size_t j0 = 0; j0 < p.S; j0 += tile_k) {
      ++stats.key_tiles;
      if (tile_in_future(p, i0 + rq, j0)) {
        ++stats.key_tiles_skipped;
        continue;
      }
      const std::size_t rk = std::min(tile_k, p.S - j0);
      ++stats.key_tiles_computed;
      if (score_tile(p, i0, rq, j0, rk, sc.s.data())) ++stats.key_tiles_masked;
      absorb_tile(p, rq, j0, rk, sc.s.data(), sc.m.data(), sc.l.data(), sc.alpha.data(), o);
    }
    finish_block(p, rq, sc.l.data(), o);
  }
}

Vec vec_of(const float* x, std::size_t n) {
  Vec out = xt::empty<float>({n});  // (n,)
  std::copy(x, x + n, out.begin());
  return out;
}

Mat mat_of(const float* x, std::size_t rows, std::size_t cols) {
  Mat out = xt::empty<float>({rows, cols});  // (rows, cols)
  std::copy(x, x + rows * cols, out.begin());
  return out;
}

}  // namespace

std::size_t materialised_attention_bytes(std::size_t T, std::size_t S) {
  return 2 * T * S * sizeof(float);  // scores (T, S) + weights (T, S)
}

std::size_t flash_scratch_bytes(std::size_t T, std::size_t S, std::size_t tile_q, std::size_t tile_k) {
  check_tiles(tile_q, tile_k, "flash_scratch_bytes");
  const std::size_t tq = std::min(tile_q, T), tk = std::min(tile_k, S);
  return (tq * tk + 3 * tq) * sizeof(float);  // Scratch: s (tq, tk), then m, l and alpha (tq,)
}

std::vector<std::vector<FlashTile>> flash_tile_plan(std::size_t T, std::size_t S, bool causal,
                                                    std::size_t tile_q, std::size_t tile_k) {
  check_tiles(tile_q, tile_k, "flash_tile_plan");
  if (S == 0) throw std::invalid_argument("flash_tile_plan: no keys to attend to (S 0)");
  if (causal && S != T)
    throw std::invalid_argument("flash_tile_plan: causal attention needs as many keys as queries (T " +
                                std::to_string(T) + ", S " + std::to_string(S) + ")");
  std::vector<std::vector<FlashTile>> plan;
  for (std::size_t i0 = 0; i0 < T; i0 += tile_q) {
    const std::size_t i_end = std::min(T, i0 + tile_q);
    std::vector<FlashTile>& row = plan.emplace_back();
    for (std::size_t j0 = 0; j0 < S; j0 += tile_k) {
      const std::size_t rk = std::min(tile_k, S - j0);
      row.push_back(tile_in_future(causal, i_end, j0)             ? FlashTile::skipped
                    : tile_crosses_diagonal(causal, i0, j0, rk) ? FlashTile::masked
                                                                : FlashTile::full);
    }
  }
  return plan;
}

FlashTile flash_tile(std::size_t T, std::size_t S, bool causal, std::size_t tile_q, std::size_t tile_k,
                     std::size_t block, std::size_t tile) {
  check_tiles(tile_q, tile_k, "flash_tile");
  if (S == 0) throw std::invalid_argument("flash_tile: no keys to attend to (S 0)");
  if (causal && S != T)
    throw std::invalid_argument("flash_tile: causal attention needs as many keys as queries (T " + std::to_string(T) +
                                ", S " + std::to_string(S) + ")");
  const std::size_t i0 = block * tile_q, j0 = tile * tile_k;
  if (block >= (T + tile_q - 1) / tile_q || tile >= (S + tile_k - 1) / tile_k)
    throw std::invalid_argument("flash_tile: block " + std::to_string(block) + ", tile " + std::to_string(tile) +
                                " is past the plan of T " + std::to_string(T) + ", S " + std::to_string(S));
  const std::size_t i_end = std::min(T, i0 + tile_q), rk = std::min(tile_k, S - j0);
  return tile_in_future(causal, i_end, j0)             ? FlashTile::skipped
         : tile_crosses_diagonal(causal, i0, j0, rk) ? FlashTile::masked
                                                     : FlashTile::full;
}

FlashTileCounts flash_tile_counts(std::size_t T, std::size_t S, bool causal, std::size_t tile_q, std::size_t tile_k) {
  check_tiles(tile_q, tile_k, "flash_tile_counts");
  if (S == 0) throw std::invalid_argument("flash_tile_counts: no keys to attend to (S 0)");
  if (causal && S != T)
    throw std::invalid_argument("flash_tile_counts: causal attention needs as many keys as queries (T " +
                                std::to_string(T) + ", S " + std::to_string(S) + ")");
  const std::size_t key_tiles = (S + tile_k - 1) / tile_k;
  FlashTileCounts c;
  for (std::size_t i0 = 0; i0 < T; i0 += tile_q) {
    if (!causal) {
      c.full += key_tiles;
      continue;
    }
    const std::size_t i_end = std::min(T, i0 + tile_q);
    // Computed: the tiles whose first key j0 = t * tile_k is before i_end (tile_in_future).
    const std::size_t computed = std::min(key_tiles, (i_end + tile_k - 1) / tile_k);
    // Full: the tiles whose last key min(S, (t + 1) * tile_k) - 1 is at most i0 (tile_crosses_diagonal).
    const std::size_t full = i0 + 1 >= S ? key_tiles : (i0 + 1) / tile_k;
    c.full += full;
    c.masked += computed - full;
    c.skipped += key_tiles - computed;
  }
  return c;
}

FlashAttention flash_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal,
                               std::size_t tile_q, std::size_t tile_k) {
  check_tiles(tile_q, tile_k, "flash_attention");
  check_shapes(to_shape(q.shape()), to_shape(k.shape()), to_shape(v.shape()), causal, "flash_attention");
  const std::size_t B = q.shape()[0], h = q.shape()[1], T = q.shape()[2], d_k = q.shape()[3];
  const std::size_t S = k.shape()[2], d_v = v.shape()[3];
  FlashAttention fa;
  fa.context = xt::empty<float>({B, h, T, d_v});  // (B, h, T, d_v)
  Scratch sc(std::min(tile_q, T), std::min(tile_k, S));
  for (std::size_t bh = 0; bh < B * h; ++bh) {
    const Problem p{q.data() + bh * T * d_k, k.data() + bh * S * d_k, v.data() + bh * S * d_v,
                    T, S, d_k, d_v, causal};
    flash_one(p, tile_q, tile_k, fa.context.data() + bh * T * d_v, sc, fa.stats);
  }
  fa.stats.scratch_bytes = sc.bytes();
  fa.stats.output_bytes = fa.context.size() * sizeof(float);
  fa.stats.materialised_bytes = B * h * materialised_attention_bytes(T, S);
  return fa;
}

Mat flash_attention(const Mat& q, const Mat& k, const Mat& v, bool causal, std::size_t tile_q,
                    std::size_t tile_k, FlashStats* stats) {
  check_tiles(tile_q, tile_k, "flash_attention");
  check_shapes(to_shape(q.shape()), to_shape(k.shape()), to_shape(v.shape()), causal, "flash_attention");
  const std::size_t T = q.shape()[0], d_k = q.shape()[1], S = k.shape()[0], d_v = v.shape()[1];
  Mat context = xt::empty<float>({T, d_v});  // (T, d_v)
  Scratch sc(std::min(tile_q, T), std::min(tile_k, S));
  FlashStats st;
  flash_one(Problem{q.data(), k.data(), v.data(), T, S, d_k, d_v, causal}, tile_q, tile_k,
            context.data(), sc, st);
  st.scratch_bytes = sc.bytes();
  st.output_bytes = context.size() * sizeof(float);
  st.materialised_bytes = materialised_attention_bytes(T, S);
  if (stats) *stats = st;
  return context;
}

FlashTrace flash_attention_traced(const Mat& q, const Mat& k, const Mat& v, bool causal,
                                  std::size_t tile_q, std::size_t tile_k, std::size_t block) {
  check_tiles(tile_q, tile_k, "flash_attention_traced");
  check_shapes(to_shape(q.shape()), to_shape(k.shape()), to_shape(v.shape()), causal,
               "flash_attention_traced");
  const std::size_t T = q.shape()[0], d_k = q.shape()[1], S = k.shape()[0], d_v = v.shape()[1];
  const std::size_t blocks = (T + tile_q - 1) / tile_q;
  if (block >= blocks)
    throw std::invalid_argument("flash_attention_traced: query block " + std::to_string(block) +
                                " of q " + shape_of(q) + " with tile_q " + std::to_string(tile_q) +
                                " (" + std::to_string(blocks) + " blocks)");
  const Problem p{q.data(), k.data(), v.data(), T, S, d_k, d_v, causal};
  FlashTrace tr;
  tr.query_begin = block * tile_q;
  tr.query_end = std::min(T, tr.query_begin + tile_q);
  const std::size_t i0 = tr.query_begin, rq = tr.query_end - tr.query_begin;
  // The fast path's state, in the same layout, so that the same tile steps give the same bits.
  Scratch sc(rq, std::min(tile_k, S));
  std::fill(sc.m.begin(), sc.m.end(), kNegInf);
  Mat o = xt::zeros<float>({rq, d_v});  // (rq, d_v)
  for (std::size_t j0 = 0; j0 < S; j0 += tile_k) {
    const std::size_t rk = std::min(tile_k, S - j0);
    FlashTileStep step;
    step.key_begin = j0;
    step.key_end = j0 + rk;
    step.max_before = vec_of(sc.m.data(), rq);  // (rq,)
    if (tile_in_future(p, i0 + rq, j0)) {
      step.skipped = true;
      step.scores = xt::empty<float>({std::size_t{0}, std::size_t{0}});  // (0, 0): never computed
      step.p = step.scores;                                               // (0, 0)
      step.max_after = step.max_before;                                   // (rq,)
      step.rescale = xt::ones<float>({rq});                               // (rq,)
    } else {
      step.masked = score_tile(p, i0, rq, j0, rk, sc.s.data());
      step.scores = mat_of(sc.s.data(), rq, rk);  // (rq, rk)
      absorb_tile(p, rq, j0, rk, sc.s.data(), sc.m.data(), sc.l.data(), sc.alpha.data(), o.data());
      step.p = mat_of(sc.s.data(), rq, rk);         // (rq, rk)
      step.max_after = vec_of(sc.m.data(), rq);     // (rq,)
      step.rescale = vec_of(sc.alpha.data(), rq);   // (rq,)
    }
    step.sum = vec_of(sc.l.data(), rq);  // (rq,)
    step.partial = o;                    // (rq, d_v)
    tr.steps.push_back(std::move(step));
  }
  finish_block(p, rq, sc.l.data(), o.data());
  tr.output = o;  // (rq, d_v)
  return tr;
}

}  // namespace attn
