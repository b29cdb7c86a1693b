// Flash-style tiled attention: softmax(Q @ K^T / sqrt(d_k)) @ V without ever holding a T x S
// score matrix. Queries go in blocks of tile_q rows, keys and values in tiles of tile_k rows;
// every query row keeps three running quantities while the key tiles stream past:
//
//   m  the largest scaled score seen so far            (the softmax's stabilising max)
//   l  sum_j exp(s_j - m) over the keys seen so far     (the softmax's denominator)
//   o  sum_j exp(s_j - m) * v_j over the keys seen so far (the unnormalised output)
//
// For each key tile:  m_new = max(m, rowmax(s_tile)),  alpha = exp(m - m_new),
//   p = exp(s_tile - m_new),  l = alpha * l + rowsum(p),  o = alpha * o + p @ V_tile;
// at the end, output = o / l. Rescaling by alpha keeps every exp relative to the current max,
// so the result equals the full softmax up to float32 rounding (the online softmax).
//
// Causal: a key tile whose first key comes after the block's last query is entirely in the
// future, so it is skipped (never computed) and counted; a tile crossing the diagonal is masked
// element by element (-inf for key j > query i). A fully masked row cannot occur in causal
// self-attention: every query i sees key 0, which is in the first key tile, so m is finite
// after that tile and every later alpha and p is a finite number (masked entries give exp(-inf)
// = 0). Were a row ever fully masked, l would stay 0 and the row would be 0 / 0 = NaN, exactly
// what softmax_rows gives for an all -inf row.
//
// Memory: the fast path allocates tile_q x tile_k scores, tile_q running maxima, sums and
// rescale factors, and writes o straight into the output, which it returns: O(tile_q * tile_k
// + T * d_v) per call, against 2 * T * S floats (scores and weights) per (batch, head) for the
// materialised path of scaled_dot_product_attention.
//
// Legend: B batch, h heads, T query tokens, S key tokens (S = T in self-attention), d_k query/key
// width, d_v value width, rq <= tile_q rows of one query block, rk <= tile_k rows of one key tile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// What the tiling did, and what it cost in memory.
struct FlashStats {
  std::size_t query_blocks = 0;        // over every (batch, head): ceil(T / tile_q) each
  std::size_t key_tiles = 0;           // query blocks x ceil(S / tile_k): computed + skipped
  std::size_t key_tiles_computed = 0;  // tiles whose scores were computed
  std::size_t key_tiles_skipped = 0;   // causal: tiles entirely above the diagonal, never computed
  std::size_t key_tiles_masked = 0;    // causal: computed tiles with at least one masked score
  std::size_t scratch_bytes = 0;       // extra memory allocated besides the output
  std::size_t output_bytes = 0;        // the returned context, (B, h, T, d_v) floats
  std::size_t materialised_bytes = 0;  // what T x S scores + weights would take, every (batch, head)
};

struct FlashAttention {
  Ten4 context;  // (B, h, T, d_v)
  FlashStats stats;
};

// The fast path. q: (B, h, T, d_k), k: (B, h, S, d_k), v: (B, h, S, d_v); causal needs S = T.
// One sgemm per (query block, key tile) for the scores and one for p @ V_tile, on contiguous
// buffers; no xtensor expression in the loops. Throws std::invalid_argument naming the shapes
// when they do not fit, and when a tile size is 0.
FlashAttention flash_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal,
                               std::size_t tile_q, std::size_t tile_k);

// The same for one (batch, head): q (T, d_k), k (S, d_k), v (S, d_v) -> (T, d_v).
Mat flash_attention(const Mat& q, const Mat& k, const Mat& v, bool causal, std::size_t tile_q,
                    std::size_t tile_k, FlashStats* stats = nullptr);

// Bytes of the T x S scores and weights the materialised path keeps for one (batch, head).
std::size_t materialised_attention_bytes(std::size_t T, std::size_t S);

// Bytes flash_attention allocates besides its output (FlashStats::scratch_bytes) for T queries
// and S keys: one tile of scores and the running m, l and alpha, sized for the largest tile
// actually used (a tile larger than the problem is clipped to it). The same for every (batch,
// head) and, once T >= tile_q and S >= tile_k, for every T and S. Throws like flash_attention
// when a tile size is 0.
std::size_t flash_scratch_bytes(std::size_t T, std::size_t S, std::size_t tile_q, std::size_t tile_k);

// What the fast path does with one (query block, key tile) pair of one (batch, head).
enum class FlashTile : unsigned char {
  full,     // computed, every score visible
  masked,   // causal: computed, crosses the diagonal, some scores set to -inf
  skipped,  // causal: every key comes after every query of the block, never computed
};

// The plan of one (batch, head), [block][tile]: ceil(T / tile_q) query blocks, each with
// ceil(S / tile_k) key tiles, decided from the sizes alone, as the fast path decides them (its
// FlashStats counts the same tiles). Throws like flash_attention for a tile size of 0, for
// causal with S != T, and when S is 0.
std::vector<std::vector<FlashTile>> flash_tile_plan(std::size_t T, std::size_t S, bool causal,
                                                    std::size_t tile_q, std::size_t tile_k);

// One entry of that plan, without the rest: key tile `tile` of query block `block`. A lesson
// that walks one block of a long sequence asks for its tiles alone (the plan of T 65536 in tiles
// of 2 would hold 2^30 entries). Throws like flash_tile_plan, and for a block or tile past the end.
FlashTile flash_tile(std::size_t T, std::size_t S, bool causal, std::size_t tile_q, std::size_t tile_k,
                     std::size_t block, std::size_t tile);

// How many tiles of the plan are full, masked and skipped, counted block by block from the
// sizes (no blocks x tiles table is built), for one (batch, head). Throws like flash_tile_plan.
struct FlashTileCounts {
  std::uint64_t full = 0, masked = 0, skipped = 0;
};
FlashTileCounts flash_tile_counts(std::size_t T, std::size_t S, bool causal, std::size_t tile_q, std::size_t tile_k);

// One key tile as seen by one query block: what a lesson prints, step by step.
struct FlashTileStep {
  std::size_t key_begin = 0, key_end = 0;  // keys [key_begin, key_end) of this tile
  bool skipped = false;  // causal: entirely above the diagonal; scores and p are then empty
  bool masked = false;   // causal: crosses the diagonal, some scores are -inf
  Mat scores;            // (rq, rk) Q_blk @ K_tile^T / sqrt(d_k), -inf where masked
  Vec max_before;        // (rq,) m before the tile (-inf before the first tile)
  Vec max_after;         // (rq,) m_new = max(m, rowmax(scores))
  Vec rescale;           // (rq,) alpha = exp(m - m_new): how much the old l and o shrink
  Mat p;                 // (rq, rk) exp(scores - m_new), not yet normalised
  Vec sum;               // (rq,) l after the tile
  Mat partial;           // (rq, d_v) o after the tile (unnormalised); partial / sum is the
                         // attention over the keys seen so far
};

struct FlashTrace {
  std::size_t query_begin = 0, query_end = 0;  // queries [query_begin, query_end) of the block
  std::vector<FlashTileStep> steps;            // one per key tile, in order, skipped ones included
  Mat output;                                  // (rq, d_v) o / l: the block's rows of the context
};

// The traced path for query block `block` (rows block * tile_q ..) of one (batch, head):
// q (T, d_k), k (S, d_k), v (S, d_v). It runs the fast path's own tile step, so its output
// equals flash_attention's rows bit for bit. Throws like flash_attention, and when `block` is
// past the last query block.
FlashTrace flash_attention_traced(const Mat& q, const Mat& k, const Mat& v, bool causal,
                                  std::size_t tile_q, std::size_t tile_k, std::size_t block);

}  // namespace attn
