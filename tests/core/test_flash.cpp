// Flash-style tiled attention (src/core/flash.*) against the materialised path
// (scaled_dot_product_attention): the same context to float32 rounding for many sizes and tile
// shapes, the traced block equal to the fast path bit for bit, the causal tile bookkeeping
// against a brute-force reading of causal_mask, the memory it allocates, and its refusals.
//
// Legend: B batch, h heads, T query tokens, S key tokens, d_k query/key width, d_v value width,
// rq rows of one query block, rk rows of one key tile.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/flash.hpp"
#include "core/generator.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "support.hpp"

using attn::FlashStats;
using attn::Mat;
using attn::Ten4;
using attn::Vec;
using attn::test::differences;

namespace {

// Largest |flash - materialised| accepted: a few float32 ulps of values of order 1 (the two
// paths sum the same exps in different orders and normalise at different points).
constexpr double kRounding = 2e-6;

// torch.randn(B, h, T, d) * scale, drawn row-major.
Ten4 randn4(attn::TorchGenerator& gen, std::size_t B, std::size_t h, std::size_t T, std::size_t d,
            float scale = 1.0f) {
  const Mat flat = gen.randn(B * h * T, d);  // (B*h*T, d)
  Ten4 t = xt::empty<float>({B, h, T, d});   // (B, h, T, d)
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = scale * flat.data()[i];
  return t;
}

// One (batch, head) of a (B, h, T, d) tensor, copied (contiguous).
Mat slice(const Ten4& t, std::size_t b, std::size_t h) {
  Mat m = xt::view(t, b, h, xt::all(), xt::all());  // (T, d)
  return m;
}

// Rows [r0, r1) of a matrix, copied.
Mat rows(const Mat& m, std::size_t r0, std::size_t r1) {
  Mat out = xt::view(m, xt::range(r0, r1), xt::all());  // (r1 - r0, cols)
  return out;
}

struct Tiles {
  std::size_t tile_q, tile_k;
};

// Tiles that divide T and tiles that do not, tile 1, and tiles at and past T.
std::vector<Tiles> tiles_for(std::size_t T) {
  return {{1, 1}, {2, 3}, {3, 2}, {4, 4}, {5, 7}, {T, T}, {T + 3, 100}, {1, T}, {T, 1}};
}

// softmax(q @ k^T / sqrt(d_k)) @ v materialised, for one (batch, head) with S != T allowed.
Mat reference_cross(const Mat& q, const Mat& k, const Mat& v) {
  const Mat weights = attn::softmax_rows(attn::scale_scores(attn::matmul_bt(q, k), q.shape()[1]));  // (T, S)
  return attn::matmul(weights, v);  // (T, S) @ (S, d_v) -> (T, d_v)
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("flash_attention equals scaled_dot_product_attention, causal and not, for many sizes and tiles") {
  attn::TorchGenerator gen(0);
  for (std::size_t T : {1, 2, 5, 7, 16, 33}) {
    for (std::size_t d_k : {1, 4, 8}) {
      const std::size_t B = 2, h = 3;
      const Ten4 q = randn4(gen, B, h, T, d_k, 2.0f);  // (B, h, T, d_k); x2 so the max moves
      const Ten4 k = randn4(gen, B, h, T, d_k, 2.0f);  // (B, h, T, d_k)
      const Ten4 v = randn4(gen, B, h, T, d_k);        // (B, h, T, d_k)
      for (bool causal : {false, true}) {
        const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
        for (const Tiles& t : tiles_for(T)) {
          INFO("T " << T << ", d_k " << d_k << ", causal " << causal << ", tile_q " << t.tile_q
                    << ", tile_k " << t.tile_k);
          const attn::FlashAttention fa = attn::flash_attention(q, k, v, causal, t.tile_q, t.tile_k);
          CHECK(differences(fa.context, expected, kRounding) == "");
          // The (batch, head) overload computes the same numbers.
          const Mat one = attn::flash_attention(slice(q, 1, 2), slice(k, 1, 2), slice(v, 1, 2),
                                                causal, t.tile_q, t.tile_k);  // (T, d_k)
          CHECK(differences(one, slice(fa.context, 1, 2), 0.0) == "");
        }
      }
    }
  }
}

TEST_CASE("flash_attention at a larger size: T 1024, d_k 64, tiles 64 x 128") {
  attn::TorchGenerator gen(1);
  const Ten4 q = randn4(gen, 1, 2, 1024, 64);  // (B, h, T, d_k)
  const Ten4 k = randn4(gen, 1, 2, 1024, 64);  // (B, h, T, d_k)
  const Ten4 v = randn4(gen, 1, 2, 1024, 64);  // (B, h, T, d_k)
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
    const attn::FlashAttention fa = attn::flash_attention(q, k, v, causal, 64, 128);
    CHECK(differences(fa.context, expected, kRounding) == "");
  }
}

TEST_CASE("flash_attention over keys of another length (cross-attention, S != T) and d_v != d_k") {
  attn::TorchGenerator gen(2);
  const Mat q = gen.randn(6, 4);  // (T, d_k)
  const Mat k = gen.randn(9, 4);  // (S, d_k)
  const Mat v = gen.randn(9, 3);  // (S, d_v)
  const Mat expected = reference_cross(q, k, v);  // (T, d_v)
  for (const Tiles& t : std::vector<Tiles>{{1, 1}, {4, 2}, {6, 9}, {2, 10}}) {
    INFO("tile_q " << t.tile_q << ", tile_k " << t.tile_k);
    CHECK(differences(attn::flash_attention(q, k, v, false, t.tile_q, t.tile_k), expected, kRounding) == "");
  }
}

TEST_CASE("flash_attention stays exact when the running max jumps by a lot between tiles") {
  // Keys grow tile by tile, so every new tile raises the max by ~200 and rescales l and o to
  // (almost) nothing; without the rescale the first tiles' exps would be counted at full weight.
  attn::TorchGenerator gen(3);
  const std::size_t T = 12, d_k = 4;
  Mat q = xt::ones<float>({T, d_k});  // (T, d_k)
  Mat k = gen.rand(T, d_k);           // (T, d_k)
  for (std::size_t j = 0; j < T; ++j)
    for (std::size_t c = 0; c < d_k; ++c) k(j, c) += 25.0f * static_cast<float>(j);
  const Mat v = gen.randn(T, d_k);  // (T, d_k)
  const Mat expected = reference_cross(q, k, v);  // (T, d_k)
  CHECK(differences(attn::flash_attention(q, k, v, false, 3, 4), expected, kRounding) == "");
  const attn::FlashTrace tr = attn::flash_attention_traced(q, k, v, false, 3, 4, 0);
  REQUIRE(tr.steps.size() == 3);
  CHECK(tr.steps[0].rescale(0) == 0.0f);  // first tile: m was -inf, nothing to rescale
  // The max rose by ~200 (4 keys x 25 x 4 dims / sqrt(4)): exp(-200) underflows to 0.
  CHECK(tr.steps[1].rescale(0) < 1e-20f);
  CHECK(tr.steps[1].max_after(0) > tr.steps[1].max_before(0));
}

TEST_CASE("the traced block equals the fast path bit for bit, and each step shows the online softmax") {
  attn::TorchGenerator gen(4);
  const std::size_t T = 11, d_k = 4;
  const Ten4 q4 = randn4(gen, 1, 1, T, d_k, 2.0f);  // (1, 1, T, d_k)
  const Ten4 k4 = randn4(gen, 1, 1, T, d_k, 2.0f);  // (1, 1, T, d_k)
  const Ten4 v4 = randn4(gen, 1, 1, T, d_k);        // (1, 1, T, d_k)
  const Mat q = slice(q4, 0, 0), k = slice(k4, 0, 0), v = slice(v4, 0, 0);  // (T, d_k) each
  for (bool causal : {false, true}) {
    const attn::Attention full = attn::scaled_dot_product_attention(q4, k4, v4, causal);
    const Mat scaled = slice(full.scaled, 0, 0);  // (T, T), -inf above the diagonal if causal
    for (const Tiles& t : std::vector<Tiles>{{3, 4}, {4, 3}, {1, 1}, {11, 11}, {5, 20}}) {
      const Mat fast = attn::flash_attention(q, k, v, causal, t.tile_q, t.tile_k);  // (T, d_k)
      for (std::size_t block = 0; block < ceil_div(T, t.tile_q); ++block) {
        INFO("causal " << causal << ", tile_q " << t.tile_q << ", tile_k " << t.tile_k << ", block " << block);
        const attn::FlashTrace tr = attn::flash_attention_traced(q, k, v, causal, t.tile_q, t.tile_k, block);
        const std::size_t i0 = tr.query_begin, i1 = tr.query_end, rq = i1 - i0;
        CHECK(i0 == block * t.tile_q);
        CHECK(i1 == std::min(T, i0 + t.tile_q));
        CHECK(differences(tr.output, rows(fast, i0, i1), 0.0) == "");
        REQUIRE(tr.steps.size() == ceil_div(T, t.tile_k));
        for (std::size_t s = 0; s < tr.steps.size(); ++s) {
          const attn::FlashTileStep& st = tr.steps[s];
          CAPTURE(s);
          CHECK(st.key_begin == s * t.tile_k);
          CHECK(st.key_end == std::min(T, st.key_begin + t.tile_k));
          CHECK(st.skipped == (causal && st.key_begin > i1 - 1));
          CHECK(st.max_before.size() == rq);
          CHECK(st.partial.shape()[0] == rq);
          if (s > 0) {
            CHECK(differences(st.max_before, tr.steps[s - 1].max_after, 0.0) == "");
          }
          if (st.skipped) {
            CHECK(st.scores.size() == 0);
            CHECK(differences(st.max_after, st.max_before, 0.0) == "");
            CHECK(differences(st.sum, tr.steps[s - 1].sum, 0.0) == "");
            CHECK(differences(st.partial, tr.steps[s - 1].partial, 0.0) == "");
            continue;
          }
          // The tile's scores are the materialised path's scaled scores, -inf included.
          const Mat expected_scores = xt::view(scaled, xt::range(i0, i1), xt::range(st.key_begin, st.key_end));  // (rq, rk)
          CHECK(differences(st.scores, expected_scores, kRounding) == "");
          bool any_masked = false;
          for (float x : st.scores) any_masked = any_masked || std::isinf(x);
          CHECK(st.masked == any_masked);
          for (std::size_t r = 0; r < rq; ++r) {
            CAPTURE(r);
            // A fully masked row cannot occur in causal: the max is finite from the first tile on.
            CHECK(std::isfinite(st.max_after(r)));
            CHECK(st.max_after(r) >= st.max_before(r));
            CHECK(st.rescale(r) == doctest::Approx(std::exp(st.max_before(r) - st.max_after(r))));
            for (std::size_t c = 0; c < st.key_end - st.key_begin; ++c)
              CHECK(st.p(r, c) == doctest::Approx(std::exp(st.scores(r, c) - st.max_after(r))));
          }
        }
        // After the last tile: m is the row max of the scaled scores, l the softmax denominator,
        // and partial / l the output.
        const attn::FlashTileStep& last = tr.steps.back();
        for (std::size_t r = 0; r < rq; ++r) {
          float row_max = -INFINITY;
          for (std::size_t j = 0; j < T; ++j) row_max = std::fmax(row_max, scaled(i0 + r, j));
          double denominator = 0.0;
          for (std::size_t j = 0; j < T; ++j) denominator += std::exp(double(scaled(i0 + r, j)) - row_max);
          CHECK(last.max_after(r) == doctest::Approx(row_max).epsilon(1e-6));
          CHECK(last.sum(r) == doctest::Approx(denominator).epsilon(1e-5));
          for (std::size_t c = 0; c < d_k; ++c)
            CHECK(last.partial(r, c) / last.sum(r) == doctest::Approx(tr.output(r, c)).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE("causal tiles: the skipped and masked counts, by hand and against causal_mask") {
  attn::TorchGenerator gen(5);
  SUBCASE("T 5, tiles 2 x 2: blocks [0,2) [2,4) [4,5) skip 2 + 1 + 0 tiles, mask 1 + 1 + 0") {
    const Ten4 x = randn4(gen, 2, 3, 5, 4);  // (B, h, T, d_k)
    const FlashStats st = attn::flash_attention(x, x, x, true, 2, 2).stats;
    CHECK(st.query_blocks == 2 * 3 * 3);
    CHECK(st.key_tiles == 2 * 3 * 9);
    CHECK(st.key_tiles_skipped == 2 * 3 * 3);
    CHECK(st.key_tiles_computed == 2 * 3 * 6);
    // [4,5) x [4,5) is on the diagonal but holds no future key: nothing to mask.
    CHECK(st.key_tiles_masked == 2 * 3 * 2);
  }
  SUBCASE("not causal: nothing skipped or masked") {
    const Ten4 x = randn4(gen, 1, 1, 7, 2);  // (B, h, T, d_k)
    const FlashStats st = attn::flash_attention(x, x, x, false, 2, 3).stats;
    CHECK(st.key_tiles == 4 * 3);
    CHECK(st.key_tiles_computed == 4 * 3);
    CHECK(st.key_tiles_skipped == 0);
    CHECK(st.key_tiles_masked == 0);
  }
  SUBCASE("many sizes: a tile is skipped exactly when causal_mask hides all of it") {
    for (std::size_t T : {1, 3, 8, 13, 20}) {
      const Mat mask = attn::causal_mask(T);  // (T, T), 1 above the diagonal
      const Mat x = gen.randn(T, 2);          // (T, d_k)
      for (const Tiles& t : tiles_for(T)) {
        INFO("T " << T << ", tile_q " << t.tile_q << ", tile_k " << t.tile_k);
        std::size_t all = 0, some = 0, tiles = 0;
        for (std::size_t i0 = 0; i0 < T; i0 += t.tile_q)
          for (std::size_t j0 = 0; j0 < T; j0 += t.tile_k) {
            std::size_t hidden = 0, cells = 0;
            for (std::size_t i = i0; i < std::min(T, i0 + t.tile_q); ++i)
              for (std::size_t j = j0; j < std::min(T, j0 + t.tile_k); ++j, ++cells)
                hidden += mask(i, j) != 0.0f;
            ++tiles;
            all += hidden == cells;
            some += hidden > 0 && hidden < cells;
          }
        FlashStats st;
        const Mat out = attn::flash_attention(x, x, x, true, t.tile_q, t.tile_k, &st);  // (T, d_k)
        CHECK(st.key_tiles == tiles);
        CHECK(st.key_tiles_skipped == all);
        CHECK(st.key_tiles_masked == some);
        CHECK(st.key_tiles_computed == tiles - all);
        // No row is ever fully masked in causal self-attention: no NaN anywhere.
        for (float y : out) CHECK(std::isfinite(y));
      }
    }
  }
}

TEST_CASE("memory: tile-sized scratch, independent of T, against 2 T x T per (batch, head) materialised") {
  attn::TorchGenerator gen(6);
  const std::size_t tile_q = 32, tile_k = 64, d_k = 16;
  std::size_t scratch_at_256 = 0;
  for (std::size_t T : {256, 1024}) {
    const Ten4 x = randn4(gen, 2, 2, T, d_k);  // (B, h, T, d_k)
    const FlashStats st = attn::flash_attention(x, x, x, true, tile_q, tile_k).stats;
    // scores (tile_q, tile_k), then m, l and alpha (tile_q,) each.
    CHECK(st.scratch_bytes == (tile_q * tile_k + 3 * tile_q) * sizeof(float));
    CHECK(st.output_bytes == 2 * 2 * T * d_k * sizeof(float));
    CHECK(st.materialised_bytes == 2 * 2 * 2 * T * T * sizeof(float));
    CHECK(st.materialised_bytes == 4 * attn::materialised_attention_bytes(T, T));
    if (T == 256) scratch_at_256 = st.scratch_bytes;
    CHECK(st.scratch_bytes == scratch_at_256);
  }
  // Tiles past T are clipped to T: no scratch beyond the problem's own size.
  const Mat x = gen.randn(5, 3);  // (T, d_k)
  FlashStats st;
  attn::flash_attention(x, x, x, false, 100, 100, &st);
  CHECK(st.scratch_bytes == (5 * 5 + 3 * 5) * sizeof(float));
  CHECK(st.materialised_bytes == 2 * 5 * 5 * sizeof(float));
}

TEST_CASE("refusals: zero tiles, shapes that do not fit, causal with S != T, a block past the end") {
  attn::TorchGenerator gen(7);
  const Mat x = gen.randn(4, 2);    // (T, d_k)
  const Mat k = gen.randn(5, 2);    // (S, d_k)
  const Mat bad = gen.randn(4, 3);  // (T, 3)
  const Ten4 x4 = randn4(gen, 1, 2, 4, 2);  // (B, h, T, d_k)
  const Ten4 y4 = randn4(gen, 2, 2, 4, 2);  // (B', h, T, d_k)
  CHECK_THROWS_WITH_AS(attn::flash_attention(x, x, x, false, 0, 2),
                       "flash_attention: tile sizes must be at least 1 (tile_q 0, tile_k 2)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::flash_attention(x, x, x, true, 2, 0),
                       "flash_attention: tile sizes must be at least 1 (tile_q 2, tile_k 0)", std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_attention(x4, x4, x4, false, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_attention_traced(x, x, x, false, 0, 1, 0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::flash_attention(x, bad, x, false, 2, 2),
                       "flash_attention: q (4, 2), k (4, 3), v (4, 2) do not fit (q (..., T, d_k), k (..., S, d_k), v (..., S, d_v))",
                       std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_attention(x, k, x, false, 2, 2), std::invalid_argument);  // v has T rows, k has S
  CHECK_THROWS_AS(attn::flash_attention(x4, y4, y4, false, 2, 2), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::flash_attention(x, k, k, true, 2, 2),
                       "flash_attention: causal attention needs as many keys as queries: q (4, 2), k (5, 2), v (5, 2)",
                       std::invalid_argument);
  const Mat none = xt::empty<float>({std::size_t{0}, std::size_t{2}});  // (0, d_k)
  CHECK_THROWS_AS(attn::flash_attention(x, none, none, false, 2, 2), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::flash_attention_traced(x, x, x, false, 3, 2, 2),
                       "flash_attention_traced: query block 2 of q (4, 2) with tile_q 3 (2 blocks)",
                       std::invalid_argument);
}

TEST_CASE("flash_tile_plan says what the fast path does with every tile, and flash_scratch_bytes what it allocates") {
  attn::TorchGenerator gen(8);
  for (std::size_t T : {1, 2, 5, 8, 13}) {
    const Mat x = gen.randn(T, 3);  // (T, d_k)
    for (bool causal : {false, true})
      for (const Tiles& t : tiles_for(T)) {
        INFO("T " << T << ", causal " << causal << ", tile_q " << t.tile_q << ", tile_k " << t.tile_k);
        const auto plan = attn::flash_tile_plan(T, T, causal, t.tile_q, t.tile_k);
        REQUIRE(plan.size() == ceil_div(T, t.tile_q));
        std::size_t full = 0, masked = 0, skipped = 0;
        for (std::size_t b = 0; b < plan.size(); ++b) {
          REQUIRE(plan[b].size() == ceil_div(T, t.tile_k));
          // Tile by tile, against the traced block's own flags.
          const attn::FlashTrace tr = attn::flash_attention_traced(x, x, x, causal, t.tile_q, t.tile_k, b);
          for (std::size_t j = 0; j < plan[b].size(); ++j) {
            CAPTURE(b);
            CAPTURE(j);
            CHECK((plan[b][j] == attn::FlashTile::skipped) == tr.steps[j].skipped);
            CHECK((plan[b][j] == attn::FlashTile::masked) == tr.steps[j].masked);
            full += plan[b][j] == attn::FlashTile::full;
            masked += plan[b][j] == attn::FlashTile::masked;
            skipped += plan[b][j] == attn::FlashTile::skipped;
          }
        }
        // One entry at a time, and the counts without the table, say the same.
        for (std::size_t b = 0; b < plan.size(); ++b)
          for (std::size_t j = 0; j < plan[b].size(); ++j)
            CHECK(attn::flash_tile(T, T, causal, t.tile_q, t.tile_k, b, j) == plan[b][j]);
        const attn::FlashTileCounts counted = attn::flash_tile_counts(T, T, causal, t.tile_q, t.tile_k);
        CHECK(counted.full == full);
        CHECK(counted.masked == masked);
        CHECK(counted.skipped == skipped);
        FlashStats st;
        attn::flash_attention(x, x, x, causal, t.tile_q, t.tile_k, &st);
        CHECK(st.key_tiles_skipped == skipped);
        CHECK(st.key_tiles_masked == masked);
        CHECK(st.key_tiles_computed == full + masked);
        CHECK(st.scratch_bytes == attn::flash_scratch_bytes(T, T, t.tile_q, t.tile_k));
      }
  }
  // Cross-attention: S != T, never masked or skipped; the scratch clips each tile to its side.
  const Mat q = gen.randn(3, 2), k = gen.randn(7, 2);  // (T, d_k), (S, d_k)
  FlashStats st;
  attn::flash_attention(q, k, k, false, 4, 5, &st);
  CHECK(st.scratch_bytes == attn::flash_scratch_bytes(3, 7, 4, 5));
  CHECK(attn::flash_scratch_bytes(3, 7, 4, 5) == (3 * 5 + 3 * 3) * sizeof(float));
  // At a real size the scratch is the tiles' alone: (64 * 64 + 3 * 64) floats whatever T is.
  CHECK(attn::flash_scratch_bytes(4096, 4096, 64, 64) == 17152);
  CHECK(attn::flash_scratch_bytes(8192, 8192, 64, 64) == 17152);
  const auto plan = attn::flash_tile_plan(3, 7, false, 2, 3);
  CHECK(plan.size() == 2);
  CHECK(plan[1].size() == 3);
  CHECK_THROWS_WITH_AS(attn::flash_tile_plan(4, 5, true, 2, 2),
                       "flash_tile_plan: causal attention needs as many keys as queries (T 4, S 5)", std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_tile_plan(4, 4, true, 0, 2), std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_tile_plan(4, 0, false, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_scratch_bytes(4, 4, 2, 0), std::invalid_argument);
  CHECK_THROWS_AS(attn::flash_tile(4, 4, true, 2, 2, 2, 0), std::invalid_argument);  // block 2 of 2
  CHECK_THROWS_AS(attn::flash_tile(4, 4, true, 2, 2, 0, 2), std::invalid_argument);  // tile 2 of 2
  CHECK_THROWS_AS(attn::flash_tile_counts(4, 5, true, 2, 2), std::invalid_argument);
  // Larger and uneven sizes, where the table is still small enough to build and count.
  for (std::size_t T : {97, 256, 1000})
    for (std::size_t tq : {1, 7, 64})
      for (std::size_t tk : {1, 5, 64, 2000})
        for (bool causal : {false, true}) {
          INFO("T " << T << ", tile_q " << tq << ", tile_k " << tk << ", causal " << causal);
          attn::FlashTileCounts from_plan;
          for (const auto& row : attn::flash_tile_plan(T, T, causal, tq, tk))
            for (attn::FlashTile f : row)
              (f == attn::FlashTile::full ? from_plan.full : f == attn::FlashTile::masked ? from_plan.masked : from_plan.skipped) += 1;
          const attn::FlashTileCounts c = attn::flash_tile_counts(T, T, causal, tq, tk);
          CHECK(c.full == from_plan.full);
          CHECK(c.masked == from_plan.masked);
          CHECK(c.skipped == from_plan.skipped);
        }
}
