// Sentences about this run's numbers say what the numbers say.
//
// self-attention, causal, heads and scaling run over seeds 0..49 and the size sweeps `attn
// verify` uses (one token, wide inputs, batches, sentences, grouped heads, no mask). Every note
// that states a fact about the numbers is read back and checked against the tensors the same
// stage shows: which token a row prefers, the weights quoted, whether a mask is in play, how many
// table rows are shown of how many. A note that is not computed from the numbers must not make
// such a claim at all (the sentences of the issue are checked to be gone).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <regex>

#include "lesson_kit/presets.hpp"
#include "report/stage.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

// The scaling sweep: every seed 0..49 at the default T, or every tenth in a sanitizer build, where
// the seeds add no code path (tests/lessons/CMakeLists.txt).
#ifdef ATTN_SANITIZED
constexpr std::uint64_t kSeedStep = 10;
#else
constexpr std::uint64_t kSeedStep = 1;
#endif

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s + " ")
    if (c == ' ') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  return out;
}

struct Sweep {
  std::string name;
  std::function<void(LessonOptions&)> set;
};

// The sweeps of src/cli/verify.cpp for the single-head lessons, plus several sentences.
std::vector<Sweep> single_head_sweeps() {
  return {{"defaults", [](LessonOptions&) {}},
          {"--seq-len 1 --d-in 1 --d-out 1", [](LessonOptions& o) { o.seq_len = 1, o.d_in = 1, o.d_out = 1; }},
          {"--batch 3", [](LessonOptions& o) { o.batch = 3; }},
          {"--seq-len 12 --d-in 16 --d-out 8", [](LessonOptions& o) { o.seq_len = 12, o.d_in = 16, o.d_out = 8; }},
          {"--tokens \"the cat sat on the mat\" --d-in 4",
           [](LessonOptions& o) { o.tokens = words("the cat sat on the mat"), o.d_in = 4; }},
          {"--tokens \"a b c | d e f\"", [](LessonOptions& o) {
             o.tokens = words("a b c");
             o.more_sentences = {words("d e f")};
           }}};
}

std::vector<Sweep> heads_sweeps() {
  return {{"defaults", [](LessonOptions&) {}},
          {"--seq-len 1 --d-in 1 --d-out 1 --heads 1",
           [](LessonOptions& o) { o.seq_len = 1, o.d_in = 1, o.d_out = 1, o.heads = 1; }},
          {"--heads 4 --d-out 8 --batch 3 --seq-len 6",
           [](LessonOptions& o) { o.heads = 4, o.d_out = 8, o.batch = 3, o.seq_len = 6; }},
          {"--heads 4 --d-out 8 --kv-heads 2 --no-causal --qkv-bias",
           [](LessonOptions& o) { o.heads = 4, o.d_out = 8, o.kv_heads = 2, o.causal = false, o.qkv_bias = true; }},
          {"--heads 8 --d-in 16 --d-out 64 --seq-len 12",
           [](LessonOptions& o) { o.heads = 8, o.d_in = 16, o.d_out = 64, o.seq_len = 12; }},
          {"--no-causal", [](LessonOptions& o) { o.causal = false; }},
          {"--preset phillips", [](LessonOptions& o) { apply_preset("phillips", "heads", false, o); }}};
}

const report::Stage& stage_titled(const report::Report& r, const std::string& start) {
  for (const auto& s : r.stages())
    if (s.title.rfind(start, 0) == 0) return s;
  FAIL("no stage titled " << start);
  return r.stages().front();
}

const report::TensorItem& shown(const report::Stage& s, const std::string& name) {
  for (const auto& item : s.items)
    if (const auto* t = std::get_if<report::TensorItem>(&item))
      if (t->name == name) return *t;
  FAIL("stage " << s.index << " shows no " << name);
  return std::get<report::TensorItem>(s.items.front());
}

// The one note of `s` matching `re` (whole note), or nullptr when none does.
const std::string* note_matching(const report::Stage& s, const std::regex& re, std::smatch& m) {
  for (const auto& item : s.items)
    if (const auto* n = std::get_if<report::NoteItem>(&item))
      if (std::regex_search(n->text, m, re)) return &n->text;
  return nullptr;
}

bool any_note_contains(const report::Report& r, const std::string& part) {
  for (const auto& s : r.stages())
    for (const auto& n : notes(s))
      if (n.find(part) != std::string::npos) return true;
  return false;
}

// A (…, R, C) tensor: value of entry (matrix k, row i, col j).
float at(const report::TensorItem& t, std::size_t k, std::size_t i, std::size_t j) {
  const std::size_t R = t.shape[t.shape.size() - 2], C = t.shape.back();
  return t.values[(k * R + i) * C + j];
}
std::size_t matrices(const report::TensorItem& t) {
  std::size_t n = 1;
  for (std::size_t a = 0; a + 2 < t.shape.size(); ++a) n *= t.shape[a];
  return n;
}

std::string f4(double v) { return report::fixed(v, 4); }

void check_self_attention(const report::Report& r, bool copies) {
  // "Here K of N tokens score themselves highest ...: "a" scores "b" V, itself W; ..."
  const auto& s = stage_titled(r, "Scores without weights");
  const auto& scores = shown(s, "attn_scores");
  const std::size_t T = scores.shape.back();
  const std::size_t entries = copies ? 1 : matrices(scores);
  std::size_t own_best = 0;
  std::vector<std::pair<std::string, std::string>> pairs;  // (preferred score, own score), in row order
  for (std::size_t b = 0; b < entries; ++b)
    for (std::size_t i = 0; i < T; ++i) {
      std::size_t best = i;
      for (std::size_t j = 0; j < T; ++j)
        if (at(scores, b, i, j) > at(scores, b, i, best)) best = j;
      if (best == i) ++own_best;
      else pairs.emplace_back(f4(at(scores, b, i, best)), f4(at(scores, b, i, i)));
    }
  std::smatch m;
  const std::size_t rows = entries * T;
  if (own_best == rows) {
    CHECK(note_matching(s, std::regex("^Here every token scores itself highest"), m));
  } else {
    const std::string* n = note_matching(s, std::regex("^Here (\\d+) of (\\d+) tokens score themselves highest"), m);
    REQUIRE(n);
    CHECK(std::stoul(m[1]) == own_best);
    CHECK(std::stoul(m[2]) == rows);
    const std::regex pair_re("scores \"[^\"]*\" (-?[0-9]+\\.[0-9]+), itself (-?[0-9]+\\.[0-9]+)");
    std::size_t k = 0;
    for (std::sregex_iterator it(n->begin(), n->end(), pair_re), end; it != end; ++it, ++k) {
      REQUIRE(k < pairs.size());
      CHECK((*it)[1] == pairs[k].first);
      CHECK((*it)[2] == pairs[k].second);
    }
    CHECK(k == std::min<std::size_t>(3, pairs.size()));
  }
  // The book's z(2) is claimed only when row 2 is the book's (0.3061, 0.8210).
  const auto& c = shown(stage_titled(r, "Context vectors"), "context_vec");
  const bool books = T >= 2 && c.shape.back() == 2 && std::fabs(at(c, 0, 1, 0) - 0.3061) < 5e-5 &&
                     std::fabs(at(c, 0, 1, 1) - 0.8210) < 5e-5;
  CHECK(any_note_contains(r, "is the book's z(2)") == books);
  CHECK_FALSE(any_note_contains(r, "always scores itself"));
}

void check_causal(const report::Report& r, bool copies) {
  const auto& s = stage_titled(r, "Softmax of the masked");
  const auto& w = shown(s, "attn_weights");
  const std::size_t T = w.shape.back();
  std::smatch m;
  REQUIRE(note_matching(s, std::regex("its weight there is ([0-9.]+)\\.$"), m));
  CHECK(m[1] == f4(at(w, 0, 0, 0)));
  if (T > 1) {
    REQUIRE(note_matching(s, std::regex("gives most weight to \"[^\"]*\" \\(([0-9.]+)\\)( in the first batch entry)?\\.$"), m));
    double best = 0;
    for (std::size_t j = 0; j < T; ++j) best = std::fmax(best, at(w, 0, T - 1, j));
    CHECK(m[1] == f4(best));
    CHECK(m[2].matched == (matrices(w) > 1 && !copies));
  }
  CHECK_FALSE(any_note_contains(r, "puts all its weight"));
  // The leak stage: "earlier rows bit-for-bit the same" and "only the last token's output moved"
  // only as far as the tensors show it.
  const auto& leak = stage_titled(r, "Nothing leaks");
  const auto& before = tensor(r, "context_vec");
  const auto& after = shown(leak, "context_vec'");
  const std::size_t d = before.shape.back();
  bool earlier_same = true, last_moved = false;
  for (std::size_t b = 0; b < matrices(before); ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t k = 0; k < d; ++k) {
        const float x = at(before, b, t, k), y = at(after, b, t, k);
        if (t + 1 < T) earlier_same = earlier_same && x == y;
        else last_moved = last_moved || std::fabs(x - y) >= 1e-6;
      }
  const bool says_same = any_note_contains(r, "Every earlier row is bit-for-bit the same");
  const bool says_moved = any_note_contains(r, "Only the last token's own output moved");
  if (says_same) CHECK((T > 1 && earlier_same));
  if (says_moved) CHECK(last_moved);
  if (T > 1 && earlier_same) CHECK(says_same);
  if (T > 1 && earlier_same && last_moved) CHECK(says_moved);
}

void check_heads(const report::Report& r, bool causal, std::size_t T, std::size_t h) {
  CHECK(any_note_contains(r, "mask serves every batch entry") == causal);
  CHECK(any_note_contains(r, "No mask here") == !causal);
  if (T > 1 && h > 1) {
    CHECK(any_note_contains(r, "causal mask no longer lines up") == causal);
    const auto& table = table_with(r, "holds instead");
    CHECK(table.rows.size() == std::min<std::size_t>(T, 8));
    CHECK(any_note_contains(r, "first 8 rows of " + std::to_string(T)) == (T > 8));
  } else {
    CHECK_FALSE(any_note_contains(r, "causal mask no longer lines up"));
  }
  CHECK(any_note_contains(r, "without it each output column would come from one head only") == (h > 1));
}

void check_scaling(const report::Report& r, std::size_t T) {
  std::smatch m;
  // Stage 2: the typical score at d_k = 512 and the scaled spread, from the shown variances.
  const auto& s2 = stage_titled(r, "The variance of q . k");
  const auto& raw = shown(s2, "dots.var(unbiased=False)");
  const auto& scaled = shown(s2, "(dots / sqrt(d_k)).var(unbiased=False)");
  REQUIRE(note_matching(s2, std::regex("is about \\+-([0-9.]+); after dividing by sqrt\\(d_k\\) it is between "
                                       "\\+-([0-9.]+) and \\+-([0-9.]+) at every width"),
                        m));
  CHECK(std::fabs(std::stod(m[1]) - std::sqrt(raw.values.back())) <= 0.05 + 1e-4);
  const auto [lo, hi] = std::minmax_element(scaled.values.begin(), scaled.values.end());
  CHECK(std::fabs(std::stod(m[2]) - std::sqrt(*lo)) <= 0.005 + 1e-4);
  CHECK(std::fabs(std::stod(m[3]) - std::sqrt(*hi)) <= 0.005 + 1e-4);
  // Stage 3: the note's numbers are the table's first and last rows and the scaled columns' range.
  const auto& s3 = stage_titled(r, "Softmax of rows");
  if (T == 1) {
    CHECK(note_matching(s3, std::regex("^With one key per row"), m));
  } else {
    const auto& table = table_with(r, "||J|| scaled");
    REQUIRE(note_matching(s3, std::regex("weight goes from ([0-9.]+) to ([0-9.]+) and \\|\\|J\\|\\| from ([0-9.]+) to "
                                         "([0-9.]+)(: the rows turn nearly one-hot)?.* stays between ([0-9.]+) and "
                                         "([0-9.]+) and \\|\\|J\\|\\| between ([0-9.]+) and ([0-9.]+)"),
                          m));
    CHECK(m[1] == table.rows.front()[1]);
    CHECK(m[2] == table.rows.back()[1]);
    CHECK(m[3] == table.rows.front()[5]);
    CHECK(m[4] == table.rows.back()[5]);
    CHECK(m[5].matched == (std::stod(table.rows.back()[1]) >= 0.9));
    std::vector<double> max_scaled, j_scaled;
    for (const auto& row : table.rows) max_scaled.push_back(std::stod(row[2])), j_scaled.push_back(std::stod(row[6]));
    CHECK(std::stod(m[6]) == doctest::Approx(*std::min_element(max_scaled.begin(), max_scaled.end())).epsilon(1e-9));
    CHECK(std::stod(m[7]) == doctest::Approx(*std::max_element(max_scaled.begin(), max_scaled.end())).epsilon(1e-9));
    CHECK(std::stod(m[8]) == doctest::Approx(*std::min_element(j_scaled.begin(), j_scaled.end())).epsilon(1e-9));
    CHECK(std::stod(m[9]) == doctest::Approx(*std::max_element(j_scaled.begin(), j_scaled.end())).epsilon(1e-9));
  }
  // Stage 4: the largest weights and the keys below 0.00005, from the two shown rows.
  const auto& s4 = stage_titled(r, "One row both ways");
  const auto& p_raw = shown(s4, "softmax(scores)");
  const auto& p_scaled = shown(s4, "softmax(scores / sqrt(d_k))");
  REQUIRE(note_matching(s4, std::regex("largest score takes ([0-9.]+) of the weight and (\\d+) of (\\d+) keys get less "
                                       "than 0\\.00005; scaled, the largest takes ([0-9.]+) and (\\d+) of (\\d+) keys"),
                        m));
  auto tiny = [](const std::vector<float>& v) {
    return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](float x) { return x < 5e-5f; }));
  };
  CHECK(m[1] == f4(*std::max_element(p_raw.values.begin(), p_raw.values.end())));
  CHECK(std::stoul(m[2]) == tiny(p_raw.values));
  CHECK(std::stoul(m[3]) == T);
  CHECK(m[4] == f4(*std::max_element(p_scaled.values.begin(), p_scaled.values.end())));
  CHECK(std::stoul(m[5]) == tiny(p_scaled.values));
}

}  // namespace

TEST_CASE("narration: self-attention and causal over 50 seeds and the verify sweeps") {
  for (const Sweep& sweep : single_head_sweeps())
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      CAPTURE(sweep.name);
      CAPTURE(seed);
      LessonOptions o;
      sweep.set(o);
      o.seed = seed;
      const bool copies = o.more_sentences.empty();
      check_self_attention(run_lesson("self-attention", o), copies);
      check_causal(run_lesson("causal", o), copies);
    }
}

TEST_CASE("narration: heads over 50 seeds and the verify sweeps") {
  for (const Sweep& sweep : heads_sweeps())
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      CAPTURE(sweep.name);
      CAPTURE(seed);
      LessonOptions o;
      sweep.set(o);
      o.seed = seed;
      const report::Report r = run_lesson("heads", o);
      const auto& w = tensor(r, "attn_weights");
      check_heads(r, o.causal.value_or(true), w.shape.back(), w.shape[1]);
    }
}

TEST_CASE("narration: the heads mistake table says how many of T rows it shows (llama, 9 tokens)") {
  LessonOptions o;
  apply_preset("llama", "heads", false, o);
  const report::Report r = run_lesson("heads", o);
  CHECK(table_with(r, "holds instead").rows.size() == 8);
  CHECK(any_note_contains(r, "The table shows head 0's first 8 rows of 9"));
  CHECK(any_note_contains(r, "causal mask no longer lines up"));
}

TEST_CASE("narration: scaling over 50 seeds and key counts") {
  for (std::size_t T : {std::size_t{8}, std::size_t{1}, std::size_t{2}, std::size_t{64}})
    for (std::uint64_t seed = 0; seed < 50; seed += (T == 8 && kSeedStep == 1 ? 1 : 10)) {  // 50 seeds at the default T
      CAPTURE(T);
      CAPTURE(seed);
      LessonOptions o;
      o.seed = seed;
      o.seq_len = T;
      check_scaling(run_lesson("scaling", o), T);
    }
}
