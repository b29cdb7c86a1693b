// Lesson: attention in tiles with an online softmax (Dao et al. 2022, FlashAttention; the
// final division of FlashAttention-2, Dao 2023; Milakov and Gimelshein 2018, online softmax).
//
// softmax(q @ k^T / sqrt(d_k)) @ v needs, row by row, the max and the sum over every key before
// a single weight is known, which is why the plain route builds the whole (T, T) matrix. The
// tiled route walks the keys a tile at a time and keeps three running quantities per query row:
// the max m, the sum l of exp(s - m), and the unnormalised output o. When a tile raises the max,
// the earlier l and o were computed against a smaller max, so they are rescaled by
// alpha = exp(m_old - m_new) before the tile's own terms are added; one division o / l at the end
// gives exactly the softmax attention. The lesson walks one query block through every key tile
// (core's flash_attention_traced, which runs the fast path's own tile step), checks the result
// against the materialised attention, draws which tiles causality lets it skip, and counts the
// memory it never allocates, here and at a real model's size.
//
// Legend: T tokens (queries = keys), d_k head width (also the value width), Br = tile_q query
// rows per block, Bc = tile_k keys per tile, rq <= Br rows of the walked block, rk <= Bc keys of
// one tile, n tiles of the block.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/flash.hpp"
#include "core/generator.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/registry.hpp"
#include "report/numbers.hpp"

namespace attn {
namespace {

using report::f4;
using report::Held;
using report::hold;
using report::human_bytes;
using report::with_commas;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Computed tiles of the walked block shown as stages of their own; the rest share one stage.
constexpr std::size_t kTileStages = 6;
// The tile map is drawn with words while it fits this width, else with one letter per tile, else
// not at all (the counts are always given).
constexpr std::size_t kMapWidth = 78;
constexpr std::size_t kMapBlocks = 32;  // and at most this many rows

std::string num(std::size_t n) { return std::to_string(n); }

// "4..5", or "4" for one index.
std::string span(std::size_t first, std::size_t last) {
  return first == last ? num(first) : num(first) + ".." + num(last);
}

report::Labels positions(std::size_t from, std::size_t to) {
  report::Labels out;
  for (std::size_t i = from; i < to; ++i) out.push_back("pos " + num(i));
  return out;
}

// 12.8 -> "12.8x", 187805.3 -> "187,805x"
std::string times(double ratio) {
  if (ratio >= 100.0) return with_commas(static_cast<std::uint64_t>(std::llround(ratio))) + "x";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fx", ratio);
  return buf;
}


// m[r0:r1, c0:c1], copied: (r1 - r0, c1 - c0).
Mat sub(const Mat& m, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
  Mat out = xt::view(m, xt::range(r0, r1), xt::range(c0, c1));  // (r1 - r0, c1 - c0)
  return out;
}

// softmax(scaled[i0:i1, 0:j1]) @ v[0:j1]: the block's attention over the first j1 keys alone,
// which is what o / l holds after the tile that ends at key j1. (i1 - i0, d_v)
Mat attention_over_first_keys(const Mat& scaled, const Mat& v, std::size_t i0, std::size_t i1, std::size_t j1) {
  const Mat w = softmax_rows(sub(scaled, i0, i1, 0, j1));  // (rq, j1)
  return matmul(w, sub(v, 0, j1, 0, v.shape()[1]));        // (rq, j1) @ (j1, d_v) -> (rq, d_v)
}

// o / l row by row: (rq, d_v) / (rq,) -> (rq, d_v).
Mat divide_rows(const Mat& o, const Vec& l) {
  Mat out = o;  // (rq, d_v)
  for (std::size_t r = 0; r < o.shape()[0]; ++r)
    for (std::size_t c = 0; c < o.shape()[1]; ++c) out(r, c) = o(r, c) / l(r);
  return out;
}

// Whether the walk of block [i0, i1) ever rescales: for some row, a computed tile after the
// first holds a score above every score of the earlier tiles. Read from the materialised scores,
// so that the default block can be picked before any walk.
bool block_rescales(const Mat& scaled, std::size_t i0, std::size_t i1, std::size_t tile_k,
                    const std::vector<FlashTile>& tiles) {
  const std::size_t S = scaled.shape()[1];
  for (std::size_t i = i0; i < i1; ++i) {
    float running = kNegInf;
    for (std::size_t t = 0; t < tiles.size(); ++t) {
      if (tiles[t] == FlashTile::skipped) continue;
      float tile_max = kNegInf;
      for (std::size_t j = t * tile_k; j < std::min(S, (t + 1) * tile_k); ++j) tile_max = std::fmax(tile_max, scaled(i, j));
      if (t > 0 && tile_max > running) return true;
      running = std::fmax(running, tile_max);
    }
  }
  return false;
}

// The block walked by default, and why, in words.
struct BlockChoice {
  std::size_t block;
  std::string why;
};
BlockChoice default_block(const Mat& scaled, const std::vector<std::vector<FlashTile>>& plan, std::size_t tile_q,
                          std::size_t tile_k) {
  const std::size_t T = scaled.shape()[0], blocks = plan.size();
  std::size_t last_rescaling = blocks;
  for (std::size_t b = blocks; b-- > 0;) {
    if (!block_rescales(scaled, b * tile_q, std::min(T, (b + 1) * tile_q), tile_k, plan[b])) continue;
    if (last_rescaling == blocks) last_rescaling = b;
    if (std::count(plan[b].begin(), plan[b].end(), FlashTile::skipped) > 0)
      return {b, "the last block whose walk both rescales and skips a tile"};
  }
  if (last_rescaling < blocks) return {last_rescaling, "the last block whose walk rescales"};
  return {blocks - 1, "the last block (no block's running max rises after its first tile here)"};
}

// The width a plain table takes on screen: its widest cell per column, two spaces between.
std::size_t table_width(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], row[c].size());
  std::size_t total = 2;  // the indent
  for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c ? 2 : 0);
  return total;
}

const char* tile_word(FlashTile t) {
  return t == FlashTile::full ? "full" : t == FlashTile::masked ? "masked" : "skip";
}
const char* tile_letter(FlashTile t) { return t == FlashTile::full ? "F" : t == FlashTile::masked ? "M" : "."; }

// What happened to each row's max in one tile step, in words.
std::string rescale_sentence(const FlashTileStep& st, std::size_t i0) {
  // The first tile is never skipped (key 0 is visible to every query), so every row starts there.
  if (std::all_of(st.max_before.begin(), st.max_before.end(), [](float m) { return m == kNegInf; }))
    return "The first tile: m was -inf in every row, so alpha = exp(-inf - m_new) = 0 and there is nothing to "
           "rescale; l and o start from this tile alone.";
  std::string text;
  for (std::size_t r = 0; r < st.max_after.size(); ++r) {
    const std::string row = "pos " + num(i0 + r);
    if (st.max_before(r) == kNegInf) {
      text += " Row " + row + ": m was -inf, so alpha = 0: nothing to rescale, l and o start from this tile.";
    } else if (st.max_after(r) > st.max_before(r)) {
      text += " Row " + row + ": the max rose from " + f4(st.max_before(r)) + " to " + f4(st.max_after(r)) +
              ", so the earlier l and o shrink by alpha = exp(" + f4(st.max_before(r)) + " - " + f4(st.max_after(r)) +
              ") = " + f4(st.rescale(r)) + " before this tile's terms are added.";
    } else {
      text += " Row " + row + ": the max held at " + f4(st.max_after(r)) + ", alpha = " + f4(st.rescale(r)) +
              ": l and o just grow.";
    }
  }
  return text.substr(1);
}

// One row of the memory table: a setting, its sizes, and the bytes each route needs.
struct MemoryRow {
  std::string what;
  std::size_t T, heads, d_k, tile_q, tile_k;
  std::uint64_t materialised, scratch, output, skipped, tiles;  // bytes; key tiles per head
};
// The tiles are counted only when `count_tiles` (T 131072 has 4M of them).
MemoryRow memory_row(const std::string& what, std::size_t T, std::size_t heads, std::size_t d_k, std::size_t tile_q,
                     std::size_t tile_k, bool causal, bool count_tiles) {
  MemoryRow m{what, T, heads, d_k, tile_q, tile_k, 0, 0, 0, 0, 0};
  m.materialised = static_cast<std::uint64_t>(heads) * materialised_attention_bytes(T, T);
  m.scratch = flash_scratch_bytes(T, T, tile_q, tile_k);
  m.output = static_cast<std::uint64_t>(T) * heads * d_k * sizeof(float);
  if (count_tiles) {
    const FlashTileCounts c = flash_tile_counts(T, T, causal, tile_q, tile_k);
    m.tiles = c.full + c.masked + c.skipped;
    m.skipped = c.skipped;
  }
  return m;
}

// What the stages share: the sizes, q, k and v, the materialised reference, the plan, the walked
// block and its trace, and the fast path's run. With `values` false (a --shapes-only run whose
// tensors are too large to print, alone or together: check_sizes) nothing is computed: the walk
// is laid out from the sizes alone (core's flash_tile, flash_tile_counts), every Held holds its
// shape alone, and the stages branch only where a check or a sentence needs the numbers.
struct FlashLesson {
  std::uint64_t seed;
  std::size_t T, d_k, tile_q, tile_k;
  bool causal;
  std::size_t blocks, key_tiles;
  bool values;
  Held<Mat> q, k, v;  // (T, d_k)
  // The materialised reference: every score and weight at once.
  Mat mask, scaled;         // (T, T): 1 above the diagonal; the scaled scores, -inf where masked (empty without values)
  Held<Mat> attn_weights;   // (T, T)
  Held<Mat> context;        // (T, d_k)
  // The plan, [blocks][key_tiles], is built only when it is small (a run with values, or a map
  // that fits); otherwise each tile is asked for alone (tile_at).
  bool small_plan;
  std::vector<std::vector<FlashTile>> plan;
  BlockChoice choice{0, ""};
  std::size_t blk, i0, i1, rq;  // the walked block: queries i0 .. i1 - 1, rq of them
  FlashTrace tr;                // its walk, with values
  std::vector<FlashTileStep> layout;  // its walk without values: the tiles' key ranges and flags only
  report::Labels all_pos, block_pos;
  // The walk's tiles: shown one stage each (the first kTileStages computed), summarised in one
  // stage (the computed rest), or skipped (from first_skipped on, when causal).
  std::vector<std::size_t> walked, summarised;
  std::size_t first_skipped;
  // The fast path over the whole sequence, for the plan's counts and the final comparison.
  FlashStats stats;
  Held<Mat> context_flash;  // (T, d_k)
  FlashTileCounts counts;

  FlashLesson(const LessonOptions& opts, report::Report& out);
  FlashTile tile_at(std::size_t b, std::size_t t) const {
    return small_plan ? plan[b][t] : flash_tile(T, T, causal, tile_q, tile_k, b, t);
  }
  // The walk's tiles: from the trace, or from the sizes.
  const std::vector<FlashTileStep>& walk() const { return values ? tr.steps : layout; }
};

FlashLesson::FlashLesson(const LessonOptions& opts, report::Report& out)
    : seed(opts.seed.value_or(2)),
      T(size_option(opts.seq_len, 8, "--seq-len")),
      d_k(static_cast<std::size_t>(opts.integer("--head-dim"))),
      tile_q(static_cast<std::size_t>(opts.integer("--tile-q"))),
      tile_k(static_cast<std::size_t>(opts.integer("--tile-k"))),
      causal(opts.causal.value_or(true)),
      blocks((T + tile_q - 1) / tile_q),
      key_tiles((T + tile_k - 1) / tile_k) {
  const std::int64_t block_opt = opts.integer("--block");
  if (block_opt >= 0 && static_cast<std::size_t>(block_opt) >= blocks)
    throw UsageError("--block is past the last query block", "--block",
                     "0.." + num(blocks - 1) + " (" + num(T) + " queries in blocks of " + num(tile_q) + ")",
                     std::to_string(block_opt));
  values = check_sizes({{"q, k and v", {T, d_k}, "--seq-len, --head-dim"},
                        {"scores", {T, T}, "--seq-len"},
                        {"attn_weights", {T, T}, "--seq-len"}},
                       opts.shapes_only, /*values_optional=*/!out.keep_values);

  // q, k, v for one head, drawn in that order.
  TorchGenerator gen(seed);
  auto draw = [&] { return gen.randn(T, d_k); };  // (T, d_k)
  q = hold(values, {T, d_k}, draw);               // (T, d_k)
  k = hold(values, {T, d_k}, draw);               // (T, d_k)
  v = hold(values, {T, d_k}, draw);               // (T, d_k)

  if (values) {
    mask = causal_mask(T);                                               // (T, T)
    const Mat unmasked = scale_scores(matmul_bt(*q, *k), d_k);           // (T, d_k) @ (d_k, T) -> (T, T)
    scaled = causal ? masked_fill(unmasked, mask, kNegInf) : unmasked;  // (T, T)
  }
  attn_weights = hold(values, {T, T}, [&] { return softmax_rows(scaled); });  // (T, T)
  context = hold(values, {T, d_k}, [&] { return matmul(*attn_weights, *v); });  // (T, T) @ (T, d_k) -> (T, d_k)

  small_plan = values || (blocks <= kMapBlocks && key_tiles <= kMapWidth);
  if (small_plan) plan = flash_tile_plan(T, T, causal, tile_q, tile_k);
  if (block_opt >= 0) {
    choice = {static_cast<std::size_t>(block_opt), "chosen with --block"};
  } else if (values) {
    choice = default_block(scaled, plan, tile_q, tile_k);
  } else {
    // Without the scores, a block that rises cannot be found: the last one that skips a tile.
    choice = {blocks - 1, "the last block (where the running max rises needs the scores, which this run does not compute)"};
    for (std::size_t b = blocks; causal && b-- > 0;)
      if (tile_at(b, key_tiles - 1) == FlashTile::skipped) {
        choice = {b, "the last block that skips a tile (where the running max rises needs the scores, which this "
                     "run does not compute)"};
        break;
      }
  }
  blk = choice.block;
  if (values) tr = flash_attention_traced(*q, *k, *v, causal, tile_q, tile_k, blk);
  i0 = blk * tile_q, i1 = std::min(T, i0 + tile_q), rq = i1 - i0;
  all_pos = positions(0, T), block_pos = positions(i0, i1);
  if (!values)
    for (std::size_t t = 0; t < key_tiles; ++t) {
      FlashTileStep st;
      st.key_begin = t * tile_k;
      st.key_end = std::min(T, (t + 1) * tile_k);
      st.skipped = tile_at(blk, t) == FlashTile::skipped;
      st.masked = tile_at(blk, t) == FlashTile::masked;
      layout.push_back(std::move(st));
    }
  first_skipped = walk().size();
  for (std::size_t t = 0; t < walk().size(); ++t) {
    if (walk()[t].skipped) first_skipped = std::min(first_skipped, t);
    else (walked.size() < kTileStages ? walked : summarised).push_back(t);
  }

  context_flash = hold(values, {T, d_k}, [&] { return flash_attention(*q, *k, *v, causal, tile_q, tile_k, &stats); });  // (T, d_k)
  counts = flash_tile_counts(T, T, causal, tile_q, tile_k);
  if (!values) {  // what flash_attention would report: the plan's own counts
    stats.query_blocks = blocks;
    stats.key_tiles_computed = counts.full + counts.masked;
    stats.key_tiles_masked = counts.masked;
    stats.key_tiles_skipped = counts.skipped;
  }

  const std::string Ts = num(T), ds = num(d_k), Bc = num(tile_k);
  const std::string root = "math.sqrt(" + ds + ")";
  std::vector<std::string> lines = {
      "import math, torch",
      "torch.manual_seed(" + std::to_string(seed) + ")",
      "q = torch.randn(" + Ts + ", " + ds + ")",
      "k = torch.randn(" + Ts + ", " + ds + ")",
      "v = torch.randn(" + Ts + ", " + ds + ")",
      causal ? "scores = (q @ k.T / " + root + ").masked_fill(torch.ones(" + Ts + ", " + Ts + ").triu(1).bool(), -torch.inf)"
             : "scores = q @ k.T / " + root,
      "attn_weights = torch.softmax(scores, dim=-1); context = attn_weights @ v",
      "i0, i1, Bc = " + num(i0) + ", " + num(i1) + ", " + Bc + "  # query block " + num(blk) + " (queries " +
          span(i0, i1 - 1) + "), key tiles of " + Bc,
      "m = torch.full((" + num(rq) + ",), -torch.inf); l = torch.zeros(" + num(rq) + "); o = torch.zeros(" + num(rq) +
          ", " + ds + ")",
      causal ? "for j0 in range(0, min(" + Ts + ", i1), Bc):  # tiles starting at key i1 or later are skipped"
             : "for j0 in range(0, " + Ts + ", Bc):",
      "    s = q[i0:i1] @ k[j0:j0 + Bc].T / " + root,
  };
  if (causal)
    lines.push_back("    s = s.masked_fill(torch.arange(j0, j0 + s.shape[1]) > torch.arange(i0, i1)[:, None], -torch.inf)");
  lines.push_back("    m_new = torch.maximum(m, s.max(dim=-1).values); alpha = torch.exp(m - m_new); p = torch.exp(s - m_new[:, None])");
  lines.push_back("    l = alpha * l + p.sum(dim=-1); o = alpha[:, None] * o + p @ v[j0:j0 + Bc]; m = m_new");
  lines.push_back("output = o / l[:, None]  # context[i0:i1]");
  out.header = {"flash", "Attention in tiles: the online softmax of FlashAttention",
                "Dao et al. 2022 (FlashAttention), Algorithm 1, with FlashAttention-2's final division; "
                "Milakov and Gimelshein 2018 (online softmax)",
                {"seed " + std::to_string(seed), "T " + Ts, "d_k " + ds, "tile_q " + num(tile_q), "tile_k " + Bc,
                 std::string("causal ") + (causal ? "True" : "False"), "block " + num(blk)},
                lines};
}

void stage_qkv(const FlashLesson& L, report::Report& out) {
  auto& s = out.stage("q, k and v for one head", "q, k, v = torch.randn(T, d_k), torch.randn(T, d_k), torch.randn(T, d_k)");
  // Random numbers that only feed the tiles: their ranges are in the note below.
  s.show("q", L.q, L.all_pos).detail().show("k", L.k, L.all_pos).detail().show("v", L.v, L.all_pos).detail();
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (float x : L.scaled)
    if (std::isfinite(x)) lo = std::fmin(lo, x), hi = std::fmax(hi, x);
  s.note("A model makes these with W_query, W_key and W_value; drawn directly here, they keep the lesson about "
         "tiling. Standard normal q and k give "
         "scaled scores of order 1" + (L.values ? " (here " + f4(lo) + " to " + f4(hi) + ")" : std::string()) +
         ", so the running max moves from tile to tile.");
  if (!L.values)
    s.note("--shapes-only at this size computes nothing: the stages below list names and shapes only, and the "
           "checks and the sentences about the numbers, which need the values, are left out. The tile counts "
           "and the memory come from the sizes alone, so they stay.");
}

void stage_reference(const FlashLesson& L, report::Report& out) {
  const std::size_t T = L.T;
  auto& s = out.stage("The reference: attention materialised",
                      std::string("scores = q @ k^T / sqrt(d_k)") + (L.causal ? " (-inf above the diagonal)" : "") +
                          ";  attn_weights = softmax(scores, dim=-1);  context = attn_weights @ v");
  s.in("q", L.q).in("k", L.k).in("v", L.v);
  const Held<Mat> scores = hold(L.values, {T, T}, [&] { return L.scaled; });  // (T, T)
  s.show("scores", scores, L.all_pos, L.all_pos).detail();  // attn_weights shows the mask as 0s
  s.show("attn_weights", L.attn_weights, L.all_pos, L.all_pos).attention_weights();  // random q, k, v: no weights
  s.picture_only();  // its picture; the tiles below rebuild its rows
  if (L.values) check_rows_sum_to_one(s, "attn_weights", *L.attn_weights);
  s.show("context", L.context, L.all_pos).detail();  // stages 8 and 9 check the tiled rows against it
  s.note("The tiled pass must reproduce this without its two (" + num(T) + ", " + num(T) + ") matrices, scores and "
         "attn_weights: " + with_commas(materialised_attention_bytes(T, T)) + " bytes here, growing as T^2.");
}

void stage_tiles(const FlashLesson& L, report::Report& out) {
  const std::size_t T = L.T, tile_q = L.tile_q, tile_k = L.tile_k, blocks = L.blocks, key_tiles = L.key_tiles;
  const std::size_t blk = L.blk, i0 = L.i0, i1 = L.i1;
  const std::size_t n_full = L.counts.full, n_masked = L.counts.masked, n_skipped = L.counts.skipped;
  const bool causal = L.causal;
  const FlashStats& stats = L.stats;
  auto tile_at = [&](std::size_t b, std::size_t t) { return L.tile_at(b, t); };
  auto& s = out.stage("The tiles: which are computed, which need the mask, which are skipped",
                      "query blocks of Br = tile_q rows, key tiles of Bc = tile_k keys;" +
                          std::string(causal ? "  causal: skip a tile whose first key comes after the block's last "
                                               "query, mask one that crosses the diagonal"
                                             : "  not causal: every tile is computed in full"));
  // The map: one row per query block, one column per key tile; words when they fit, letters if not.
  bool drawn = false;
  for (const bool words : {true, false}) {
    if (blocks > kMapBlocks || 3 * key_tiles > kMapWidth) break;  // cannot fit: do not build it
    std::vector<std::string> header = {words ? "query block" : "block", "queries"};
    for (std::size_t t = 0; t < key_tiles; ++t)
      header.push_back(words ? "keys " + span(t * tile_k, std::min(T, (t + 1) * tile_k) - 1) : num(t));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t b = 0; b < blocks; ++b) {
      std::vector<std::string> row = {num(b) + (b == blk ? (words ? " (walked)" : " *") : ""),
                                      span(b * tile_q, std::min(T, (b + 1) * tile_q) - 1)};
      for (std::size_t t = 0; t < key_tiles; ++t) row.push_back(words ? tile_word(tile_at(b, t)) : tile_letter(tile_at(b, t)));
      rows.push_back(row);
    }
    if (table_width(header, rows) > kMapWidth) continue;
    s.table(header, rows);
    if (!words)
      s.note("Column t is key tile t (keys t * " + num(tile_k) + " onwards). F: computed in full" +
             std::string(causal ? ", M: computed with the mask, .: skipped" : "") + "; * marks the block walked below.");
    drawn = true;
    break;
  }
  if (!drawn)
    s.note("The map has " + num(blocks) + " x " + num(key_tiles) +
           " tiles, too large to draw here; larger --tile-q and --tile-k draw it.");
  if (drawn)  // the counts of the map above, in a line
    s.note("Of the " + num(blocks * key_tiles) + " key tiles (" + num(blocks) + " blocks x " + num(key_tiles) + "), " +
           num(n_full) + " are computed in full, " + num(n_masked) + " with the mask and " + num(n_skipped) +
           " skipped, never computed.");
  else
    s.table({"key tiles", "count"}, {{"in all (" + num(blocks) + " blocks x " + num(key_tiles) + ")", num(blocks * key_tiles)},
                                     {"computed in full", num(n_full)},
                                     {"computed with the mask", num(n_masked)},
                                     {"skipped, never computed", num(n_skipped)}});
  if (L.values) {
    const double plan_vs_fast = std::fabs(double(n_skipped) - double(stats.key_tiles_skipped)) +
                                std::fabs(double(n_masked) - double(stats.key_tiles_masked)) +
                                std::fabs(double(n_full + n_masked) - double(stats.key_tiles_computed));
    s.check("the plan counts the tiles flash_attention computed, masked and skipped on this run", "|plan - run| tiles",
            plan_vs_fast, Relation::AtMost, 0.0);
    // The plan against causal_mask itself: a tile is skipped exactly when the mask hides all of
    // it, masked exactly when it hides part of it.
    std::size_t disagree = 0;
    for (std::size_t b = 0; b < blocks; ++b)
      for (std::size_t t = 0; t < key_tiles; ++t) {
        std::size_t hidden = 0, cells = 0;
        for (std::size_t i = b * tile_q; i < std::min(T, (b + 1) * tile_q); ++i)
          for (std::size_t j = t * tile_k; j < std::min(T, (t + 1) * tile_k); ++j, ++cells)
            hidden += causal && L.mask(i, j) != 0.0f;
        const FlashTile expected = hidden == cells ? FlashTile::skipped : hidden > 0 ? FlashTile::masked : FlashTile::full;
        disagree += L.plan[b][t] != expected;
      }
    s.check(causal ? "a tile is skipped exactly when causal_mask hides all of it, masked when it hides part"
                   : "without the mask no tile is skipped or masked",
            "tiles that disagree", static_cast<double>(disagree), Relation::AtMost, 0.0);
  }
  s.note(causal ? "Causal attention gives a key after its query weight 0 whatever its score, so a tile made only of "
                  "such keys is never loaded: " + num(n_skipped) + " of " + num(blocks * key_tiles) +
                  " tiles here. The walk below follows query block " + num(blk) + " (queries " + span(i0, i1 - 1) +
                  "), " + L.choice.why + "."
                : "Without the causal mask every query sees every key: all " + num(blocks * key_tiles) +
                  " tiles are computed. The walk below follows query block " + num(blk) + " (queries " +
                  span(i0, i1 - 1) + "), " + L.choice.why + ".");
}

// One computed tile of the walked block, `t` of walk(): its step, shown whole.
void stage_walk_tile(const FlashLesson& L, std::size_t t, report::Report& out) {
  const std::size_t rq = L.rq, d_k = L.d_k, i0 = L.i0, i1 = L.i1;
  const FlashTileStep& st = L.walk()[t];
  const std::size_t j0 = st.key_begin, j1 = st.key_end;
  auto& s = out.stage("Block " + num(L.blk) + ", key tile " + num(t) + ": keys " + span(j0, j1 - 1),
                      "s = q[i0:i1] @ k[j0:j1]^T / sqrt(d_k)" + std::string(st.masked ? "  (-inf where key > query)" : "") +
                          "\nm_new = max(m, rowmax(s));  alpha = exp(m - m_new);  p = exp(s - m_new)\n"
                          "l = alpha * l + rowsum(p);  o = alpha * o + p @ v[j0:j1];  m = m_new");
  s.in_shape("q[i0:i1]", {rq, d_k}).in_shape("k[j0:j1]", {j1 - j0, d_k}).in_shape("v[j0:j1]", {j1 - j0, d_k});
  const report::Labels keys = positions(j0, j1);
  // The step's tensors: scores and p (rq, rk), m, alpha and l (rq,), o (rq, d_k); shapes alone without values.
  const Shape tile = {rq, j1 - j0}, row = {rq}, out_rows = {rq, d_k};
  auto held = [&](const auto& x, const Shape& shape) { return hold(L.values, shape, [&] { return x; }); };
  s.show("s", held(st.scores, tile), L.block_pos, keys);
  // m is the last computed tile's m_new; on the first tile m is -inf and alpha 0 (the note says so).
  s.show("m", held(st.max_before, row)).detail();
  s.show("m_new", held(st.max_after, row)).show("alpha", held(st.rescale, row));
  if (t == L.walked.front()) s.detail();
  s.show("p", held(st.p, tile), L.block_pos, keys).show("l", held(st.sum, row)).show("o", held(st.partial, out_rows), L.block_pos);
  if (!L.values) return;  // the sentences and the check below read the step's numbers
  s.note(rescale_sentence(st, i0));
  if (st.masked) {
    std::size_t hidden = 0;
    for (float x : st.scores) hidden += x == kNegInf;
    s.note(num(hidden) + " of the tile's " + num(st.scores.size()) + (hidden == 1 ? " scores is" : " scores are") +
           " -inf (a key after its query): their p is exp(-inf) = 0, so they add nothing to l or o.");
  }
  check_close(s, "o / l is already the attention over keys 0.." + num(j1 - 1) + " alone", divide_rows(st.partial, st.sum),
              attention_over_first_keys(L.scaled, *L.v, i0, i1, j1));
}

// The computed tiles past kTileStages, in one stage: one row per tile.
void stage_summarised_tiles(const FlashLesson& L, report::Report& out) {
  const std::size_t rq = L.rq, i0 = L.i0, i1 = L.i1;
  const std::vector<std::size_t>& summarised = L.summarised;
  const std::size_t n = summarised.size();
  report::Labels tile_labels;
  for (std::size_t t : summarised) tile_labels.push_back("keys " + span(L.walk()[t].key_begin, L.walk()[t].key_end - 1));
  Held<Mat> m_tiles(Shape{n, rq}), alpha_tiles(Shape{n, rq}), l_tiles(Shape{n, rq});  // (n, rq) each
  double worst = 0.0, bound = 0.0;
  if (L.values) {
    Mat m = xt::empty<float>({n, rq});      // (n, rq)
    Mat alpha = xt::empty<float>({n, rq});  // (n, rq)
    Mat l = xt::empty<float>({n, rq});      // (n, rq)
    for (std::size_t a = 0; a < n; ++a) {
      const FlashTileStep& st = L.tr.steps[summarised[a]];
      for (std::size_t r = 0; r < rq; ++r) {
        m(a, r) = st.max_after(r);
        alpha(a, r) = st.rescale(r);
        l(a, r) = st.sum(r);
      }
      const Mat expected = attention_over_first_keys(L.scaled, *L.v, i0, i1, st.key_end);  // (rq, d_k)
      worst = std::fmax(worst, max_abs_diff(divide_rows(st.partial, st.sum), expected));
      bound = std::fmax(bound, rounding_tolerance(expected));
    }
    m_tiles = Held<Mat>(std::move(m));
    alpha_tiles = Held<Mat>(std::move(alpha));
    l_tiles = Held<Mat>(std::move(l));
  }
  auto& s = out.stage("Block " + num(L.blk) + ", key tiles " + num(summarised.front()) + ".." + num(summarised.back()) +
                          ": the same step " + num(n) + " more times",
                      "per tile: m_new = max(m, rowmax(s));  alpha = exp(m - m_new);  l = alpha * l + rowsum(p);  "
                      "o = alpha * o + p @ v[j0:j1]");
  s.show("m_new per tile", m_tiles, tile_labels).show("alpha per tile", alpha_tiles, tile_labels);
  s.show("l per tile", l_tiles, tile_labels);
  if (!L.values) return;  // the count of rises and the check read the numbers
  std::size_t rises = 0;
  for (float a : *alpha_tiles) rises += a < 1.0f;
  s.note("One row per tile, one column per query of the block. The max rose (alpha < 1) " +
         (rises == 0 ? std::string("in no row of these ") : rises == 1 ? std::string("once in these ") : num(rises) + " times in these ") +
         num(n) + " tiles; every other step only added to l and o.");
  s.check("after every one of these tiles, o / l is the attention over the keys seen so far", "max |diff|", worst,
          Relation::AtMost, bound);
}

// Causal: the walked block's tiles from first_skipped on, never loaded.
void stage_skipped_tiles(const FlashLesson& L, report::Report& out) {
  const std::size_t T = L.T, i0 = L.i0, i1 = L.i1, blk = L.blk, first_skipped = L.first_skipped;
  const std::vector<FlashTileStep>& walk = L.walk();
  const std::size_t j0 = walk[first_skipped].key_begin;
  const std::size_t n_skip = walk.size() - first_skipped;
  auto& s = out.stage("Block " + num(blk) + (n_skip == 1 ? ", key tile " : ", key tiles ") +
                          span(first_skipped, walk.size() - 1) + ": skipped (keys " + span(j0, T - 1) + ")",
                      "causal: skip the tile when j0 > i1 - 1  (its first key comes after the block's last query)");
  if (L.values) {
    std::size_t visible = 0;
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t j = j0; j < T; ++j) visible += L.mask(i, j) == 0.0f;
    s.check("causal_mask hides every score of the skipped tiles", "visible scores", static_cast<double>(visible),
            Relation::AtMost, 0.0);
  }
  s.note("Key " + num(j0) + " comes after query " + num(i1 - 1) + ", the block's last, and so does every key after it: "
         "their weights would be exactly 0, so " + (n_skip == 1 ? std::string("this tile is") : "these " + num(n_skip) + " tiles are") +
         " never loaded. m, l and o stay as the last computed tile left them.");
}

void stage_final_division(const FlashLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k, rq = L.rq, i0 = L.i0, i1 = L.i1;
  const FlashTrace& tr = L.tr;
  const Mat& scaled = L.scaled;
  const FlashTileStep& last = L.walk().back();
  auto& s = out.stage("The final division: output = o / l", "output = o / l  (row by row, once, after the last tile)");
  s.in_shape("o", {rq, d_k}).in_shape("l", {rq});
  s.show("output", hold(L.values, {rq, d_k}, [&] { return tr.output; }), L.block_pos);
  const Held<Mat> reference = hold(L.values, {rq, d_k}, [&] { return sub(*L.context, i0, i1, 0, d_k); });  // (rq, d_k)
  s.show("context[" + num(i0) + ":" + num(i1) + "]", reference, L.block_pos).detail();  // the check compares them
  if (!L.values) {
    s.note("o was built against the running max and never divided until now; FlashAttention-2 keeps it so, where the "
           "first FlashAttention divided at every tile. After the last tile m is each row's max over all " +
           num(last.key_end) + " keys and l the sum the softmax divides by, so one division per row finishes the job.");
    return;
  }
  // With values: the checks, the question, and the note that goes with them.
  const Mat& v = *L.v;  // (T, d_k)
  check_close(s, "the block's output equals rows " + span(i0, i1 - 1) + " of the materialised context", tr.output,
              *reference);
  check_identical(s, "the traced walk and flash_attention's fast path give the same bits for these rows", tr.output,
                  sub(*L.context_flash, i0, i1, 0, d_k));
  // m and l are the softmax's max and normaliser, computed here in double from the reference.
  Vec l_ref = xt::empty<float>({rq});  // (rq,)
  for (std::size_t r = 0; r < rq; ++r) {
    double row_max = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (std::size_t j = 0; j < T; ++j) row_max = std::fmax(row_max, scaled(i0 + r, j));
    for (std::size_t j = 0; j < T; ++j) sum += std::exp(static_cast<double>(scaled(i0 + r, j)) - row_max);
    l_ref(r) = static_cast<float>(sum);
  }
  check_close(s, "l is the softmax's normaliser, sum_j exp(s_j - max_j s_j), over the whole row", last.sum, l_ref);
  // Dropping the rescale: every tile's terms added at face value, each relative to its own max.
  Mat o_wrong = xt::zeros<float>({rq, d_k});  // (rq, d_k)
  Vec l_wrong = xt::zeros<float>({rq});       // (rq,)
  double worst_rise = 0.0;
  std::size_t rise_row = 0, rise_tile = 0;
  for (std::size_t t = 0; t < tr.steps.size(); ++t) {
    const FlashTileStep& st = tr.steps[t];
    if (st.skipped) continue;
    const Mat pv = matmul(st.p, sub(v, st.key_begin, st.key_end, 0, d_k));  // (rq, rk) @ (rk, d_k) -> (rq, d_k)
    for (std::size_t r = 0; r < rq; ++r) {
      for (std::size_t c = 0; c < st.p.shape()[1]; ++c) l_wrong(r) += st.p(r, c);
      for (std::size_t c = 0; c < d_k; ++c) o_wrong(r, c) += pv(r, c);
      const double rise = static_cast<double>(st.max_after(r)) - st.max_before(r);
      if (std::isfinite(rise) && rise > worst_rise) worst_rise = rise, rise_row = r, rise_tile = t;
    }
  }
  const double wrong = max_abs_diff(divide_rows(o_wrong, l_wrong), *reference);
  s.question("would the output survive dropping the rescale (alpha = 1 always)?", "max |diff|", wrong, Relation::AtMost,
             rounding_tolerance(*reference),
             "the max of row pos " + num(i0 + rise_row) + " rose by " + f4(worst_rise) + " at tile " + num(rise_tile) +
                 ", so without alpha its earlier terms would count exp(" + f4(worst_rise) + ") = " +
                 f4(std::exp(worst_rise)) + " times too much");
  s.note("o was built against the running max and is divided only now, once per row (FlashAttention-2; the "
         "first FlashAttention divided at every tile): m is each row's max over all " + num(last.key_end) +
         " keys and l the softmax's sum.");
}

void stage_every_block(const FlashLesson& L, report::Report& out) {
  const FlashStats& stats = L.stats;
  auto& s = out.stage("Every block: flash_attention over the whole sequence",
                      "context_flash = flash_attention(q, k, v, causal, tile_q, tile_k)  (every query block, every key tile)");
  s.in("q", L.q).in("k", L.k).in("v", L.v);
  s.show("context_flash", L.context_flash, L.all_pos).detail();  // the check below holds it to stage 2's context, row by row
  if (L.values) check_close(s, "the tiled pass equals the materialised attention for every row", *L.context_flash, *L.context);
  s.note(num(stats.query_blocks) + " query blocks, " + num(stats.key_tiles_computed) + " key tiles computed (" +
         num(stats.key_tiles_masked) + " of them with the mask), " + num(stats.key_tiles_skipped) +
         " skipped. Each block ran the walk above with its own m, l and o.");
}

void stage_memory(const FlashLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k, tile_q = L.tile_q, tile_k = L.tile_k;
  const bool causal = L.causal;
  const std::string ds = num(d_k), Bc = num(tile_k);
  const MemoryRow here = memory_row("this run", T, 1, d_k, tile_q, tile_k, causal, true);
  std::vector<MemoryRow> rows = {here};
  for (std::size_t big : {std::size_t{4096}, std::size_t{8192}, std::size_t{131072}})
    rows.push_back(memory_row("Llama-3.2-3B", big, 24, 128, 64, 64, causal, big == 8192));
  std::vector<std::vector<std::string>> cells;
  for (const MemoryRow& m : rows)
    cells.push_back({m.what + ", T " + with_commas(m.T), human_bytes(m.materialised), human_bytes(m.scratch),
                     times(static_cast<double>(m.materialised) / static_cast<double>(m.scratch))});
  auto& s = out.stage("Memory: the T x T matrices the tiled pass never allocates",
                      "materialised = heads * 2 * T * T * 4 bytes (scores and weights);  tiled scratch = (Br * Bc + 3 * Br) "
                      "* 4 bytes (one tile of s, then m, l, alpha)");
  s.table({"setting", "T x T scores + weights", "tiled scratch", "ratio"}, cells);
  if (L.values)
    s.check("this run allocated the scratch the formula above predicts", "|measured - predicted| bytes",
            std::fabs(static_cast<double>(L.stats.scratch_bytes) - static_cast<double>(here.scratch)), Relation::AtMost, 0.0);
  double spread = 0.0;
  for (std::size_t r = 2; r < rows.size(); ++r)
    spread = std::fmax(spread, std::fabs(static_cast<double>(rows[r].scratch) - static_cast<double>(rows[1].scratch)));
  s.check("the scratch does not grow with T: the same bytes at T 4096, 8192 and 131072", "max |difference| bytes", spread,
          Relation::AtMost, 0.0);
  const MemoryRow& mid = rows[2];
  s.note("This run: one head of " + ds + ", tiles " + num(tile_q) + " x " + Bc + ". Llama-3.2-3B: one attention layer "
         "(24 heads of 128) of one sequence in float32, with 64 x 64 tiles. At T " + with_commas(mid.T) +
         " its materialised scores and weights take " + human_bytes(mid.materialised) + "; the tiled pass keeps " +
         with_commas(mid.scratch) + " bytes of scratch, reused by every head, besides the " +
         human_bytes(mid.output) + " output both routes write.");
  // A GPU kernel also stages tiles of q, k and v and the running output in on-chip memory; this
  // CPU pass reads q, k and v in place and writes the output directly, so its scratch has none.
  const std::uint64_t staged = static_cast<std::uint64_t>(2 * mid.tile_q + 2 * mid.tile_k) * mid.d_k * sizeof(float);
  s.note("The scratch column counts what this CPU pass allocates: it reads q, k and v where they are and "
         "writes the output directly. A GPU kernel also copies a tile of q, of k and of v and the running "
         "output into on-chip memory: (2 * " + num(mid.tile_q) + " + 2 * " + num(mid.tile_k) + ") * " +
         num(mid.d_k) + " * 4 = " + with_commas(staged) + " bytes more at Llama-3.2-3B's tiles, so " +
         with_commas(mid.scratch + staged) + " in all and a ratio of " +
         times(static_cast<double>(mid.materialised) / static_cast<double>(mid.scratch + staged)) + " at T " +
         with_commas(mid.T) + ", still independent of T. On a GPU the point is traffic as much as size: a tile of "
         "s and p lives in on-chip SRAM and never travels to HBM, where the materialised route writes and reads "
         "two T x T matrices.");
  s.note(causal ? "Causal, the skipped tiles are work saved too: " + with_commas(mid.skipped) + " of " +
                      with_commas(mid.tiles) + " key tiles per head (" +
                      report::fixed(100.0 * static_cast<double>(mid.skipped) / static_cast<double>(mid.tiles), 1) +
                      "%) at T " + with_commas(mid.T) + ", " + with_commas(here.skipped) + " of " +
                      with_commas(here.tiles) + " in this run."
                : "Not causal, no tile is skipped: the tiled pass does the same arithmetic as the materialised one, "
                  "in another order and without storing it.");
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_flash(const LessonOptions& opts, report::Report& out) {
  const FlashLesson L(opts, out);
  stage_qkv(L, out);
  stage_reference(L, out);
  stage_tiles(L, out);
  for (std::size_t t : L.walked) stage_walk_tile(L, t, out);
  if (!L.summarised.empty()) stage_summarised_tiles(L, out);
  if (L.first_skipped < L.walk().size()) stage_skipped_tiles(L, out);
  stage_final_division(L, out);
  stage_every_block(L, out);
  stage_memory(L, out);
}

// Teaching order 680: after kv-cache (670), before scaling (700); docs/flash.md is its page.
ATTN_REGISTER_LESSON({680, "flash", "Attention in tiles: the online softmax of FlashAttention",
                      "key tiles with a running max and sum, rescaled when the max rises; no T x T matrix",
                      "Dao et al. 2022 (FlashAttention); Milakov and Gimelshein 2018 (online softmax)",
                      kSeed | kSeqLen | kCausal, lesson_flash,
                      {{"--tile-q", OptionType::Integer, 1, 65536, 2, "Query rows per block (Br in FlashAttention)"},
                       {"--tile-k", OptionType::Integer, 1, 65536, 2, "Keys per tile (Bc in FlashAttention)"},
                       {"--head-dim", OptionType::Integer, 1, 256, 4, "Width d_k of q, k and v"},
                       {"--block", OptionType::Integer, -1, 65535, -1,
                        "Query block to walk, from 0; -1 picks one where the running max rises"}}});

}  // namespace attn
