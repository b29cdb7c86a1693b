// attn lesson flash: its numbers against PyTorch 1.13 (the header's own reproduce lines, run in
// PyTorch with one line added to record every tile step), the block it walks by default against
// the rule it states, its sentences against its tensors over many seeds, the walk's cap, the
// tile map with and without the mask, and its refusals.
//
// Legend: T tokens, d_k head width, rq rows of the walked block, rk keys of one tile.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/flash.hpp"
#include "core/generator.hpp"
#include "report/stage.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

LessonOptions with(std::uint64_t seed, std::size_t T, std::int64_t d_k, std::int64_t tq, std::int64_t tk,
                   bool causal = true, std::int64_t block = -1) {
  LessonOptions o;
  o.seed = seed;
  o.seq_len = T;
  o.causal = causal;
  o.own["--head-dim"] = static_cast<double>(d_k);
  o.own["--tile-q"] = static_cast<double>(tq);
  o.own["--tile-k"] = static_cast<double>(tk);
  o.own["--block"] = static_cast<double>(block);
  return o;
}

// The tensor called `name` in one stage.
const report::TensorItem& in_stage(const report::Stage& s, const std::string& name) {
  for (const auto& item : s.items)
    if (const auto* t = std::get_if<report::TensorItem>(&item))
      if (t->name == name) return *t;
  FAIL("stage " << s.index << " (" << s.title << ") shows no tensor " << name);
  throw std::logic_error("unreachable");
}

// The stages that walk one computed key tile, in order.
std::vector<const report::Stage*> tile_stages(const report::Report& r) {
  std::vector<const report::Stage*> out;
  for (const auto& s : r.stages())
    if (s.title.find(", key tile ") != std::string::npos && s.title.find("skipped") == std::string::npos)
      out.push_back(&s);
  return out;
}

const report::Stage* stage_titled(const report::Report& r, const std::string& part) {
  for (const auto& s : r.stages())
    if (s.title.find(part) != std::string::npos) return &s;
  return nullptr;
}

std::size_t walked_block(const report::Report& r) {
  for (const auto& item : r.header.setting)
    if (item.rfind("block ", 0) == 0) return std::stoul(item.substr(6));
  FAIL("no block in the setting");
  return 0;
}

void require_close(const std::vector<float>& actual, const std::vector<float>& expected, double tol) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    if (std::isinf(expected[i])) CHECK(actual[i] == expected[i]);
    else CHECK(std::fabs(actual[i] - expected[i]) <= tol);
  }
}

// What the walk of every block does, read from core's traced path: whether any row's max rises
// after the first tile, and whether any tile is skipped.
struct BlockFacts {
  bool rescales = false, skips = false;
};
std::vector<BlockFacts> block_facts(std::uint64_t seed, std::size_t T, std::size_t d_k, std::size_t tq, std::size_t tk,
                                    bool causal) {
  TorchGenerator gen(seed);
  const Mat q = gen.randn(T, d_k), k = gen.randn(T, d_k), v = gen.randn(T, d_k);  // (T, d_k) each
  std::vector<BlockFacts> out;
  for (std::size_t b = 0; b * tq < T; ++b) {
    const FlashTrace tr = flash_attention_traced(q, k, v, causal, tq, tk, b);
    BlockFacts f;
    for (std::size_t t = 0; t < tr.steps.size(); ++t) {
      f.skips = f.skips || tr.steps[t].skipped;
      if (t > 0 && !tr.steps[t].skipped)
        for (std::size_t r = 0; r < tr.steps[t].max_after.size(); ++r)
          f.rescales = f.rescales || tr.steps[t].max_after(r) > tr.steps[t].max_before(r);
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("flash, defaults: PyTorch's numbers, from the header's own lines") {
  const report::Report r = run_lesson("flash");
  CHECK(walked_block(r) == 2);
  const auto& q = tensor(r, "q").values;
  require_close({q.begin(), q.begin() + 4},
                {-1.0408011674880981f, 0.9166041612625122f, -1.3041903972625732f, -1.1096783876419067f}, 1e-6);
  const auto& scores = tensor(r, "scores").values;
  require_close({scores.begin() + 4 * 8, scores.begin() + 5 * 8},
                {0.20333687961101532f, 0.8941937685012817f, -0.6632911562919617f, 1.281948208808899f,
                 1.8623417615890503f, -kInf, -kInf, -kInf},
                1e-6);
  const std::vector<float> context = {
      1.141386866569519f,   -0.6353712677955627f,  -1.4702459573745728f, -0.21338602900505066f,
      0.49878692626953125f, 0.08363572508096695f,  -1.075944185256958f,  0.15637940168380737f,
      0.5213329792022705f,  0.19798687100410461f,  -0.6710934638977051f, 0.26305490732192993f,
      0.9756278991699219f,  -0.21987926959991455f, -0.03789782524108887f, 0.5833083987236023f,
      0.34179049730300903f, 0.3163156807422638f,   -0.14129504561424255f, 1.0561482906341553f,
      0.5389547944068909f,  -0.09686237573623657f, -0.159850612282753f,  0.5914416313171387f,
      0.8065603971481323f,  -0.04189328849315643f, 0.011360395699739456f, 0.7272099256515503f,
      0.6039278507232666f,  -0.3297654688358307f,  -0.14548823237419128f, 0.28137704730033875f};
  require_close(tensor(r, "context").values, context, 1e-6);
  require_close(tensor(r, "context_flash").values, context, 1e-6);

  // Every tile step of block 2 (queries 4, 5): keys 0..1, 2..3, 4..5; keys 6..7 are skipped.
  const auto tiles = tile_stages(r);
  REQUIRE(tiles.size() == 3);
  const std::vector<std::vector<float>> m_new = {{0.8941937685012817f, -0.32577750086784363f},
                                                 {1.281948208808899f, -0.32577750086784363f},
                                                 {1.8623417615890503f, 0.147467240691185f}};
  const std::vector<std::vector<float>> alpha = {{0.0f, 0.0f}, {0.6785789728164673f, 1.0f}, {0.5596780776977539f, 0.622977614402771f}};
  const std::vector<std::vector<float>> l = {{1.5011465549468994f, 1.8760886192321777f},
                                             {2.161599636077881f, 3.2072083950042725f},
                                             {2.2097997665405273f, 3.812464714050293f}};
  const std::vector<std::vector<float>> o = {
      {-0.29865550994873047f, 1.297497272491455f, -0.9724565148353577f, 0.83744877576828f, 0.37861374020576477f,
       0.7803102135658264f, -1.676694393157959f, 0.6139801144599915f},
      {-0.17404957115650177f, 1.0765436887741089f, -0.4462258815765381f, 2.6926586627960205f, 1.284798502922058f,
       0.5292876362800598f, -1.4325562715530396f, 2.2561137676239014f},
      {0.7552885413169861f, 0.6989942789077759f, -0.3122338354587555f, 2.333876132965088f, 2.054746150970459f,
       -0.36928436160087585f, -0.6094248294830322f, 2.2548506259918213f}};
  for (std::size_t t = 0; t < 3; ++t) {
    CAPTURE(t);
    require_close(in_stage(*tiles[t], "m_new").values, m_new[t], 1e-6);
    require_close(in_stage(*tiles[t], "alpha").values, alpha[t], 1e-6);
    require_close(in_stage(*tiles[t], "l").values, l[t], 2e-6);
    require_close(in_stage(*tiles[t], "o").values, o[t], 2e-6);
  }
  require_close(tensor(r, "output").values,
                {0.34179049730300903f, 0.3163156509399414f, -0.14129507541656494f, 1.0561482906341553f,
                 0.5389547944068909f, -0.09686236828565598f, -0.159850612282753f, 0.5914416909217834f},
                1e-6);
  const report::Stage* skipped = stage_titled(r, ": skipped (keys");
  REQUIRE(skipped != nullptr);
  CHECK(skipped->title == "Block 2, key tile 3: skipped (keys 6..7)");
  // Dropping the rescale changes this block: the question says no, and why.
  const report::CheckItem q_rescale = check_with(r, "dropping the rescale");
  CHECK_FALSE(q_rescale.passed);
  CHECK(q_rescale.value == doctest::Approx(0.1819).epsilon(1e-3));  // PyTorch: 0.1819 without alpha
  CHECK(q_rescale.because.find("row pos 4 rose by 0.5804 at tile 2") != std::string::npos);
  for (const auto& c : checks(r))
    if (!c.question) CHECK_MESSAGE(c.passed, c.text);
}

TEST_CASE("flash: the header's lines follow the options (block, tiles, mask)") {
  const report::Report r = run_lesson("flash", with(7, 11, 3, 3, 4, true, 1));
  const auto& lines = r.header.reproduce;
  auto has = [&](const std::string& line) {
    for (const auto& l : lines)
      if (l == line) return true;
    return false;
  };
  CHECK(has("torch.manual_seed(7)"));
  CHECK(has("q = torch.randn(11, 3)"));
  CHECK(has("i0, i1, Bc = 3, 6, 4  # query block 1 (queries 3..5), key tiles of 4"));
  CHECK(has("m = torch.full((3,), -torch.inf); l = torch.zeros(3); o = torch.zeros(3, 3)"));
  CHECK(has("    s = q[i0:i1] @ k[j0:j0 + Bc].T / math.sqrt(3)"));
  CHECK(has("for j0 in range(0, min(11, i1), Bc):  # tiles starting at key i1 or later are skipped"));
  CHECK(walked_block(r) == 1);
  CHECK(tile_stages(r).size() == 2);  // keys 0..3 and 4..7; 8..10 skipped
  const report::Report plain = run_lesson("flash", with(7, 11, 3, 3, 4, false, 1));
  CHECK(std::find(plain.header.reproduce.begin(), plain.header.reproduce.end(),
                  "scores = q @ k.T / math.sqrt(3)") != plain.header.reproduce.end());
  for (const auto& l : plain.header.reproduce) CHECK(l.find("masked_fill") == std::string::npos);
  CHECK(tile_stages(plain).size() == 3);
  CHECK(stage_titled(plain, ": skipped (keys") == nullptr);
}

TEST_CASE("flash: the default block follows the rule the lesson states, over 50 seeds and several tilings") {
  struct Tiling {
    std::size_t T, tq, tk;
    bool causal;
  };
  for (const Tiling& g : {Tiling{8, 2, 2, true}, Tiling{8, 4, 2, true}, Tiling{13, 3, 2, true}, Tiling{8, 2, 3, false},
                          Tiling{5, 1, 1, true}, Tiling{6, 6, 2, true}}) {
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      CAPTURE(seed);
      CAPTURE(g.T);
      CAPTURE(g.tq);
      CAPTURE(g.tk);
      CAPTURE(g.causal);
      const auto facts = block_facts(seed, g.T, 4, g.tq, g.tk, g.causal);
      std::size_t expected = facts.size() - 1;  // the last block, unless a later rule picks one
      bool found = false;
      for (std::size_t b = facts.size(); b-- > 0 && !found;)
        if (facts[b].rescales && facts[b].skips) expected = b, found = true;
      for (std::size_t b = facts.size(); b-- > 0 && !found;)
        if (facts[b].rescales) expected = b, found = true;
      const report::Report r = run_lesson("flash", with(seed, g.T, 4, g.tq, g.tk, g.causal));
      CHECK(walked_block(r) == expected);
    }
  }
}

TEST_CASE("flash: the sentences say what the tensors show, over 50 seeds") {
  for (std::uint64_t seed = 0; seed < 50; ++seed)
    for (bool causal : {true, false}) {
      CAPTURE(seed);
      CAPTURE(causal);
      const report::Report r = run_lesson("flash", with(seed, 9, 4, 3, 2, causal));
      const std::size_t blk = walked_block(r), i0 = 3 * blk;
      bool any_rise = false;
      for (const report::Stage* s : tile_stages(r)) {
        const auto& m = in_stage(*s, "m").values;
        const auto& m_new = in_stage(*s, "m_new").values;
        const auto& alpha = in_stage(*s, "alpha").values;
        const std::string note = notes(*s).at(0);
        const bool first = std::isinf(m[0]);
        CHECK((note.find("The first tile") == 0) == first);
        for (std::size_t row = 0; row < m.size() && !first; ++row) {
          const std::string who = "Row pos " + std::to_string(i0 + row) + ": the max ";
          const bool rose = m_new[row] > m[row];
          any_rise = any_rise || rose;
          CHECK(note.find(who + (rose ? "rose" : "held")) != std::string::npos);
          CHECK((alpha[row] < 1.0f) == rose);  // exp of a negative difference, 1 when it held
        }
        // The masked-score sentence counts the -inf scores.
        std::size_t hidden = 0;
        for (float x : in_stage(*s, "s").values) hidden += std::isinf(x);
        bool said = false;
        for (const auto& n : notes(*s)) said = said || n.rfind(std::to_string(hidden) + " of the tile's", 0) == 0;
        CHECK(said == (hidden > 0));
      }
      const report::CheckItem q = check_with(r, "dropping the rescale");
      if (!any_rise) CHECK(q.passed);  // nothing to rescale: the same output
      if (!q.passed) CHECK(q.because.find("rose by") != std::string::npos);
      // The skipped stage appears exactly when the walked block skips a tile.
      const auto facts = block_facts(seed, 9, 4, 3, 2, causal);
      CHECK((stage_titled(r, ": skipped (keys") != nullptr) == facts[blk].skips);
      for (const auto& c : checks(r))
        if (!c.question) CHECK_MESSAGE(c.passed, c.text);
    }
}

TEST_CASE("flash: a long walk shows six tiles as stages and the rest in one, every check still measured") {
  const report::Report r = run_lesson("flash", with(3, 40, 5, 3, 2, true, 13));  // block 13: query 39, 20 tiles
  CHECK(tile_stages(r).size() == 6);
  const report::Stage* rest = stage_titled(r, "the same step 14 more times");
  REQUIRE(rest != nullptr);
  CHECK(rest->title == "Block 13, key tiles 6..19: the same step 14 more times");
  CHECK(in_stage(*rest, "m_new per tile").shape == Shape{14, 1});
  CHECK(in_stage(*rest, "l per tile").shape == Shape{14, 1});
  CHECK(stage_titled(r, ": skipped (keys") == nullptr);  // query 39 sees every key
  // After the last tile, m is the row's max over every key.
  const auto& scores = tensor(r, "scores").values;  // (40, 40)
  float row_max = -kInf;
  for (std::size_t j = 0; j < 40; ++j) row_max = std::fmax(row_max, scores[39 * 40 + j]);
  CHECK(in_stage(*rest, "m_new per tile").values.back() == row_max);
  for (const auto& c : checks(r))
    if (!c.question) CHECK_MESSAGE(c.passed, c.text);
}

TEST_CASE("flash: the tile map, with and without the mask, and the memory it never allocates") {
  const report::Report r = run_lesson("flash");
  const report::TableItem& map = table_with(r, "keys 6..7");
  REQUIRE(map.rows.size() == 4);
  CHECK(map.rows[0] == std::vector<std::string>{"0", "0..1", "masked", "skip", "skip", "skip"});
  CHECK(map.rows[2] == std::vector<std::string>{"2 (walked)", "4..5", "full", "full", "masked", "skip"});
  CHECK(map.rows[3] == std::vector<std::string>{"3", "6..7", "full", "full", "full", "masked"});
  const report::TableItem& memory = table_with(r, "ratio");
  REQUIRE(memory.rows.size() == 4);
  CHECK(memory.rows[0] == std::vector<std::string>{"this run, T 8", "512 B", "40 B", "12.8x"});
  // 24 heads * 2 * 8192^2 * 4 bytes = 12 GiB; (64 * 64 + 3 * 64) * 4 = 17152 bytes of scratch.
  CHECK(memory.rows[2] == std::vector<std::string>{"Llama-3.2-3B, T 8,192", "12.00 GiB", "16.75 KiB", "751,219x"});
  CHECK(memory.rows[3][1] == "3.00 TiB");

  const report::Report plain = run_lesson("flash", with(2, 8, 4, 2, 2, false));
  const report::TableItem& all = table_with(plain, "keys 6..7");
  for (const auto& row : all.rows)
    for (std::size_t c = 2; c < row.size(); ++c) CHECK(row[c] == "full");

  // Too many tiles for words: one letter per tile; too many for letters: no map, the counts only.
  const report::Report letters = run_lesson("flash", with(2, 40, 4, 4, 4));
  const report::TableItem& small = table_with(letters, "9");
  CHECK(small.rows.at(0).at(2) == "M");
  CHECK(small.rows.at(1).at(2) == "F");
  CHECK(small.rows.at(0).at(3) == ".");
  const report::Report none = run_lesson("flash", with(2, 64, 4, 2, 2));
  bool said = false;
  for (const auto& s : none.stages())
    for (const auto& n : notes(s)) said = said || n.find("32 x 32 tiles, too large to draw") != std::string::npos;
  CHECK(said);
}

TEST_CASE("flash: one token, tiles past T, and a block past the end refused") {
  const report::Report one = run_lesson("flash", with(0, 1, 4, 2, 2));
  CHECK(walked_block(one) == 0);
  CHECK(tile_stages(one).size() == 1);
  for (const auto& c : checks(one))
    if (!c.question) CHECK_MESSAGE(c.passed, c.text);
  const report::Report big = run_lesson("flash", with(0, 5, 4, 100, 100));
  CHECK(tile_stages(big).size() == 1);  // one block, one tile: the whole matrix at once
  for (const auto& c : checks(big))
    if (!c.question) CHECK_MESSAGE(c.passed, c.text);
  CHECK_THROWS_WITH_AS(run_lesson("flash", with(0, 8, 4, 2, 2, true, 4)),
                       "--block is past the last query block (--block: 0..3 (8 queries in blocks of 2) vs 4)",
                       UsageError);
}

TEST_CASE("flash: the memory stage says what its scratch leaves out, with a GPU kernel's tiles counted") {
  // Llama-3.2-3B at T 8192: 24 heads * 2 * 8192^2 * 4 bytes materialised; 64 x 64 tiles of d_k 128:
  // s tile 64 * 64 and m, l, alpha (3 * 64) floats = 17,152 bytes, plus q, k, v and o tiles
  // (2 * 64 + 2 * 64) * 128 * 4 = 131,072 bytes: 148,224 bytes, a ratio of 12 GiB / 148,224 = 86,929.
  bool said = false;
  const auto run = run_lesson("flash");  // named: a temporary would die before the loop
  for (const auto& s : run.stages())
    for (const auto& n : notes(s))
      said = said || (n.find("= 131,072 bytes more") != std::string::npos &&
                      n.find("so 148,224 in all and a ratio of 86,929x at T 8,192") != std::string::npos);
  CHECK(said);
}
