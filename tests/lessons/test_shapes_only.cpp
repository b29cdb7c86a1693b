// Runs that compute no values. A text run with --shapes-only keeps no values in its report
// (Report::keep_values false, as main.cpp sets it); past printable sizes (check_sizes) the causal,
// heads, gqa, rope, flash and padding lessons then compute nothing at all and show the same stages
// with the shapes of that size. What is checked here: the decision itself, that such a run lists every stage, equation
// and tensor name a computed run shows (only the checks and the sentences about numbers go),
// with the real shapes and no values; and the llama preset's --seq-len.
//
// The shapes themselves cannot drift from what a computed run makes: every tensor goes through
// report::hold, which throws when a computed shape differs from the declared one, and every
// other test of these lessons computes.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"
#include "lesson_kit/presets.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

report::Report run_without_values(const std::string& name, const LessonOptions& opts) {
  const LessonEntry* lesson = find_lesson(name);
  REQUIRE(lesson != nullptr);
  report::Report r;
  r.keep_values = false;  // what main.cpp sets for a text run with --shapes-only
  lesson->run(opts, r);
  return r;
}

// What a learner reads of each stage besides numbers: title, equation and the tensor names.
struct Skeleton {
  std::string title, equation;
  std::vector<std::string> tensors, inputs;
  bool operator==(const Skeleton& o) const {
    return title == o.title && equation == o.equation && tensors == o.tensors && inputs == o.inputs;
  }
};

std::vector<Skeleton> skeleton(const report::Report& r) {
  std::vector<Skeleton> out;
  for (const auto& s : r.stages()) {
    Skeleton k{s.title, s.equation, {}, {}};
    for (const auto& o : s.outputs()) k.tensors.push_back(o.name);
    for (const auto& i : s.inputs) k.inputs.push_back(i.name);
    out.push_back(k);
  }
  return out;
}

bool any_note_contains(const report::Report& r, const std::string& part) {
  for (const auto& s : r.stages())
    for (const auto& n : notes(s))
      if (n.find(part) != std::string::npos) return true;
  return false;
}

std::size_t tensors_with_values(const report::Report& r) {
  std::size_t n = 0;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item)) n += !t->values.empty();
  return n;
}

}  // namespace

TEST_CASE("check_sizes: values unless --shapes-only, no sink reading values, and a tensor (or all of them) too large to print") {
  const std::vector<SizedTensor> small = {{"attn_scores", {1, 6, 6}, "--seq-len"}};
  const std::vector<SizedTensor> large = {{"x", {5, 3}, "--seq-len"}, {"attn_scores", {1, 5000, 5000}, "--seq-len"}};
  const std::vector<SizedTensor> huge = {{"attn_scores", {64, 5000, 5000}, "--batch, --seq-len"}};
  CHECK(check_sizes(small, false, false));
  CHECK(check_sizes(small, true, true));  // small: values are cheap, the checks run
  CHECK_FALSE(check_sizes(large, true, true));
  CHECK_FALSE(check_sizes(huge, true, true));  // nothing is held, so nothing is too large to hold
  // Each printable, together not: Llama-3.2-3B's q_proj and o_proj at a few tokens.
  const std::vector<SizedTensor> llama = {{"attn_scores", {1, 24, 9, 9}, "--seq-len"},
                                          {"q_proj.weight", {3072, 3072}, "--d-in"},
                                          {"o_proj.weight", {3072, 3072}, "--d-in"}};
  CHECK_FALSE(check_sizes(llama, true, true));
  CHECK(check_sizes(llama, true, false));  // held and dumped: 75 MB is within every limit
  CHECK(check_sizes({llama[0], llama[1]}, true, true));  // 9.4M values: still computed, the checks run
  // Otherwise the limits apply as check_size states them.
  CHECK_THROWS_WITH_AS(check_sizes(large, false, true), doctest::Contains("too large to print"), UsageError);
  CHECK(check_sizes(large, true, false));  // --shapes-only with --dump: computed, held, not printed
  CHECK_THROWS_WITH_AS(check_sizes(huge, true, false), doctest::Contains("too large to hold"), UsageError);
}

TEST_CASE("values_within_held: all a run holds together, within 800 MiB, else no values or a refusal") {
  const long double within = 700.0L * (1 << 20), over = 900.0L * (1 << 20);
  CHECK(values_within_held("causal at these sizes", within, false, false, true, "--seq-len"));
  CHECK(values_within_held("causal at these sizes", within, true, true, true, "--seq-len"));
  // Past the budget a --shapes-only run that can do without values computes nothing, and
  // every other run is refused: told to add --shapes-only only where that computes nothing.
  CHECK_FALSE(values_within_held("causal at these sizes", over, true, true, true, "--seq-len"));
  CHECK_THROWS_WITH_AS(values_within_held("causal at these sizes", over, false, false, true, "--seq-len"),
                       "causal at these sizes would hold 900.00 MiB at once, more than a lesson may; add "
                       "--shapes-only (--seq-len: at most 800.00 MiB of tensors and labels together vs 900.00 MiB)",
                       UsageError);
  // A --shapes-only run whose report keeps values, and a lesson that always computes.
  CHECK_THROWS_WITH_AS(values_within_held("causal at these sizes", over, true, false, true, "--seq-len"),
                       doctest::Contains("more than a lesson may (--seq-len"), UsageError);
  CHECK_THROWS_WITH_AS(values_within_held("block at these sizes", over, false, false, false, "--d-in"),
                       "block at these sizes would hold 900.00 MiB at once, more than a lesson may (--d-in: at most "
                       "800.00 MiB of tensors and labels together vs 900.00 MiB)",
                       UsageError);
  // The terms: 4 bytes a value, and what --input and --weights brought with them.
  LessonOptions opts;
  CHECK(held_bytes(opts, {{2, {3, 4}}, {0.5, {8}}}) == 4 * (24 + 4));
  opts.weights["W_query"] = ExternalTensor{"--weights w", {2, 5}, std::vector<float>(10)};
  CHECK(held_bytes(opts, {{2, {3, 4}}}) == 4 * (24 + 10));
}

TEST_CASE("at full widths the token lessons are refused before x is made, or compute nothing with --shapes-only") {
  // Each tensor printable (2^24 values), 20 to 50 of them together: 1.7 to 3.4 GB before.
  LessonOptions wide;
  wide.batch = 1;
  wide.seq_len = 4096;
  wide.d_in = 4096;
  wide.d_out = 4096;
  wide.heads = 1;
  auto refused = [](const std::string& lesson, const LessonOptions& o) -> std::string {
    try {
      run_lesson(lesson, o);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(refused("causal", wide).find("causal at these sizes would hold 1.75 GiB at once") == 0);
  CHECK(refused("self-attention", wide).find("self-attention at these sizes would hold 1.75 GiB at once") == 0);
  CHECK(refused("heads", wide).find("heads at these sizes would hold 2.75 GiB at once") == 0);
  LessonOptions gqa = wide;
  gqa.d_out.reset();
  gqa.kv_heads = 1;
  CHECK(refused("gqa", gqa).find("gqa at these sizes would hold 3.31 GiB at once") == 0);
  LessonOptions block;
  block.seq_len = 4096;
  block.d_in = 2048;
  block.heads = 1;
  CHECK(refused("block", block).find("block at these sizes would hold 2.80 GiB at once") == 0);
  // With --shapes-only and no sink reading values, heads computes nothing instead.
  wide.shapes_only = true;
  CHECK(tensor(run_without_values("heads", wide), "attn_weights").shape == Shape{1, 1, 4096, 4096});
}

TEST_CASE("a report without values at the default sizes: the checks still run, no tensor holds values") {
  LessonOptions opts;
  opts.shapes_only = true;
  const report::Report r = run_without_values("causal", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).size() == 7);  // as causal-shapes-only.txt prints them
  CHECK(skeleton(r) == skeleton(run_lesson("causal", opts)));
}

TEST_CASE("causal --shapes-only at T = 5000 computes nothing and shows every stage with its real shapes") {
  LessonOptions opts;
  opts.shapes_only = true;
  opts.seq_len = 5000;
  const report::Report r = run_without_values("causal", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).empty());
  CHECK(any_note_contains(r, "--shapes-only at this size computes nothing"));
  CHECK(any_note_contains(r, "95.37 MiB"));  // one (1, 5000, 5000) float32 tensor
  CHECK(tensor(r, "attn_scores").shape == Shape{5000, 5000});
  CHECK(tensor(r, "mask").shape == Shape{5000, 5000});
  CHECK(tensor(r, "attn_weights.sum(dim=-1)").shape == Shape{5000});
  CHECK(tensor(r, "softmax(fully_masked, dim=-1)").shape == Shape{3, 5000});
  CHECK(tensor(r, "context_vec'").shape == Shape{5000, 2});
  // The same stages, equations and tensor names as a run that computes (at the default size).
  CHECK(skeleton(r) == skeleton(run_lesson("causal")));
  // With a batch axis the shapes keep it.
  opts.batch = 3;
  CHECK(tensor(run_without_values("causal", opts), "masked").shape == Shape{3, 5000, 5000});
}

TEST_CASE("causal without --shapes-only at T = 65536 is refused before the input is made") {
  LessonOptions opts;
  opts.seq_len = 65536;
  CHECK_THROWS_WITH_AS(run_lesson("causal", opts), doctest::Contains("attn_scores (1, 65536, 65536) would be too large"),
                       UsageError);
  opts.shapes_only = true;  // with --shapes-only it shows the shapes instead
  CHECK(tensor(run_without_values("causal", opts), "attn_weights").shape == Shape{65536, 65536});
}

TEST_CASE("heads --preset llama --seq-len 4096 --shapes-only: Llama-3.2-3B's real shapes and what they would hold") {
  LessonOptions opts;
  opts.seq_len = 4096;
  apply_preset("llama", "heads", false, opts);  // as `attn lesson heads --preset llama --seq-len 4096`
  REQUIRE(opts.tokens);
  CHECK(opts.tokens->size() == 4096);
  CHECK(opts.tokens->at(8) == "bank");
  CHECK(opts.tokens->at(9) == "tok10");
  CHECK(opts.shapes_only);  // the preset shows shapes by default
  const report::Report r = run_without_values("heads", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).empty());
  CHECK(tensor(r, "attn_scores").shape == Shape{1, 24, 4096, 4096});
  CHECK(tensor(r, "k_heads").shape == Shape{1, 24, 4096, 128});
  CHECK(tensor(r, "context_vec").shape == Shape{1, 4096, 3072});
  CHECK(tensor(r, "q_proj.weight").shape == Shape{3072, 3072});
  CHECK(any_note_contains(r, "attention weights (1, 24, 4096, 4096) for 4096 tokens"));
  // The memory table: one (1, 24, 4096, 4096) float32 tensor is 1.5 GiB.
  bool table = false;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TableItem>(&item))
        for (const auto& row : t->rows) table = table || (row.size() == 3 && row[2] == "1.50 GiB");
  CHECK(table);
  // Every stage of the computed run at the preset's own 9 tokens, in order, with the same names.
  LessonOptions nine;
  apply_preset("llama", "heads", false, nine);
  const auto computed = skeleton(run_lesson("heads", nine));
  const auto shapes = skeleton(r);
  REQUIRE(shapes.size() == computed.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    CAPTURE(i);
    CHECK(shapes[i] == computed[i]);
  }
}

TEST_CASE("heads --shapes-only past printable sizes: every variant keeps the computed run's stages") {
  // Without a preset, grouped heads, no mask, and Rakesh's missing transpose.
  struct Variant {
    std::string preset;
    std::size_t kv_heads;
    bool causal;
  };
  for (const Variant& v : {Variant{"", 2, true}, Variant{"", 4, false}, Variant{"rakesh", 0, true}}) {
    CAPTURE(v.preset);
    CAPTURE(v.kv_heads);
    LessonOptions small, large;
    for (LessonOptions* o : {&small, &large}) {
      if (!v.preset.empty()) apply_preset(v.preset, "heads", false, *o);
      if (v.kv_heads) {
        o->heads = 4;
        o->d_out = 8;
        o->kv_heads = v.kv_heads;
      }
      o->causal = v.causal;
    }
    large.shapes_only = true;
    large.input.reset();  // Rakesh's literal x has 3 tokens; the large run uses --seq-len
    large.seq_len = 3000;
    small.input.reset();
    small.seq_len = 3;
    const report::Report r = run_without_values("heads", large);
    CHECK(tensors_with_values(r) == 0);
    // The grouped stage shows the un-repeated keys only while they are small (4096 values).
    auto without_small_view = [](std::vector<Skeleton> k) {
      for (auto& stage : k)
        stage.tensors.erase(std::remove(stage.tensors.begin(), stage.tensors.end(),
                                        "keys.view(B, T, kv_heads, d_k).transpose(1, 2)"),
                            stage.tensors.end());
      return k;
    };
    CHECK(without_small_view(skeleton(r)) == without_small_view(skeleton(run_lesson("heads", small))));
  }
}

TEST_CASE("the llama preset's --seq-len cuts the walk-through's sentence short or extends it") {
  LessonOptions four;
  four.seq_len = 4;
  apply_preset("llama", "heads", false, four);
  CHECK(*four.tokens == std::vector<std::string>{"<|begin_of_text|>", "the", "financial", "bank"});
  CHECK(four.preset_notes.front().find("(1, 24, 4, 4) for 4 tokens: the first 4 of the walk-through's 9") !=
        std::string::npos);
  LessonOptions nine;
  nine.seq_len = 9;  // the sentence's own length: the note is the preset's usual one
  apply_preset("llama", "heads", false, nine);
  CHECK(nine.tokens->size() == 9);
  CHECK(nine.preset_notes.front().find("(1, 24, 9, 9) for the 9 tokens of") != std::string::npos);
}

namespace {

// A skeleton with every run of digits read as '#': two runs at different sizes, or walking a
// different block, compare by their structure (stages, equations, names).
std::vector<Skeleton> without_numbers(std::vector<Skeleton> k) {
  auto strip = [](std::string s) {
    std::string out;
    for (char c : s)
      if (!(c >= '0' && c <= '9')) out += c;
      else if (out.empty() || out.back() != '#') out += '#';
    return out;
  };
  for (auto& stage : k) {
    stage.title = strip(stage.title);
    stage.equation = strip(stage.equation);
    for (auto& t : stage.tensors) t = strip(t);
    for (auto& t : stage.inputs) t = strip(t);
  }
  return k;
}

}  // namespace

TEST_CASE("gqa --preset llama --shapes-only computes nothing: Llama's weights alone are past the budget") {
  LessonOptions opts;
  apply_preset("llama", "gqa", false, opts);  // as `attn lesson gqa --preset llama`
  REQUIRE(opts.shapes_only);
  const report::Report r = run_without_values("gqa", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(any_note_contains(r, "--shapes-only at these sizes computes nothing"));
  CHECK(tensor(r, "q_proj.weight").shape == Shape{3072, 3072});
  CHECK(tensor(r, "k_rep").shape == Shape{1, 24, 9, 128});
  CHECK(tensor(r, "attn_weights").shape == Shape{1, 24, 9, 9});
  // Only the KV-cache checks remain: they need the sizes alone, and they pass.
  const auto left = checks(r);
  CHECK(left.size() == 3);
  for (const auto& c : left) CHECK(c.passed);
  CHECK(check_with(r, "114,688 bytes per token").passed);
  // The stages, equations and names of the computed run (--values), in order.
  CHECK(skeleton(r) == skeleton(run_lesson("gqa", opts)));
  // At 4096 tokens the shapes follow; still nothing is computed.
  opts.seq_len = 4096;
  LessonOptions long_run;
  long_run.seq_len = 4096;
  apply_preset("llama", "gqa", false, long_run);
  const report::Report r4096 = run_without_values("gqa", long_run);
  CHECK(tensors_with_values(r4096) == 0);
  CHECK(tensor(r4096, "attn_scores").shape == Shape{1, 24, 4096, 4096});
  CHECK(tensor(r4096, "keys").shape == Shape{1, 4096, 1024});
}

TEST_CASE("gqa at its default sizes with --shapes-only still computes, and its checks run") {
  LessonOptions opts;
  opts.shapes_only = true;
  const report::Report r = run_without_values("gqa", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).size() == 6);  // as gqa.txt prints them
}

TEST_CASE("rope --seq-len 4096 --shapes-only computes nothing, keeps the frequencies and the wavelengths") {
  LessonOptions opts;
  opts.shapes_only = true;
  opts.seq_len = 4096;
  const report::Report r = run_without_values("rope", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).empty());
  CHECK(tensor(r, "scores").shape == Shape{4096, 4096});
  CHECK(tensor(r, "q_rope_shifted").shape == Shape{4096, 8});
  CHECK(tensor(r, "cos").shape == Shape{4096, 8});
  CHECK(table_with(r, "turns over positions 0..4095").rows.size() == 3);
  CHECK(skeleton(r) == skeleton(run_lesson("rope")));
  opts.heads = 4;  // with heads the (B, h, T, d_k) shapes show
  CHECK(tensor(run_without_values("rope", opts), "scores_shifted").shape == Shape{1, 4, 4096, 4096});
}

TEST_CASE("flash --shapes-only past printable sizes lays out the walk from the sizes alone") {
  // 12 query blocks of 5 (the last of 3) and of 256 (the last of 84): block 10 computes 10 full
  // tiles, masks one and skips one in both, so both walk, summarise and skip the same way.
  auto flash = [](std::size_t T, std::size_t tile) {
    LessonOptions o;
    o.seq_len = T;
    o.own["--tile-q"] = o.own["--tile-k"] = static_cast<double>(tile);
    o.own["--block"] = 10;
    return o;
  };
  LessonOptions large = flash(2900, 256);
  large.shapes_only = true;
  const report::Report r = run_without_values("flash", large);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).size() == 1);  // the memory table's: the scratch is the same at every T
  CHECK(checks(r).front().passed);
  CHECK(tensor(r, "attn_weights").shape == Shape{2900, 2900});
  CHECK(tensor(r, "s").shape == Shape{256, 256});
  CHECK(tensor(r, "m_new per tile").shape == Shape{5, 256});
  CHECK(tensor(r, "context_flash").shape == Shape{2900, 4});
  // full: 0 + 1 + ... + 11; masked: the diagonal; the rest skipped (the map is drawn, so a line)
  CHECK(any_note_contains(r, "Of the 144 key tiles (12 blocks x 12), 66 are computed in full, 12 with the mask and 66 skipped"));
  const report::Report computed = run_lesson("flash", flash(58, 5));
  CHECK(without_numbers(skeleton(r)) == without_numbers(skeleton(computed)));
  CHECK(any_note_contains(computed, "Of the 144 key tiles (12 blocks x 12), 66 are computed in full"));  // the same plan
  // Default block: the last that skips a tile, since where the max rises needs the scores.
  LessonOptions huge = flash(65536, 2);
  huge.shapes_only = true;
  huge.own.erase("--block");
  const report::Report r65536 = run_without_values("flash", huge);
  CHECK(tensor(r65536, "scores").shape == Shape{65536, 65536});
  CHECK(any_note_contains(r65536, "the last block that skips a tile"));
}

TEST_CASE("padding --shapes-only past printable sizes computes nothing and keeps the notes that need only the lengths") {
  // Before, every stage computed: 37 tensors of (2, 4096, 4096), 4.8 GB (test_cli checks the peak).
  LessonOptions opts;
  opts.shapes_only = true;
  opts.batch = 2;
  opts.seq_len = 4096;
  opts.own["--queries"] = 4096;
  const report::Report r = run_without_values("padding", opts);
  CHECK(tensors_with_values(r) == 0);
  CHECK(checks(r).empty());
  CHECK(any_note_contains(r, "--shapes-only at these sizes computes nothing: with values the lesson would hold 1.51 GiB"));
  CHECK(tensor(r, "masked").shape == Shape{2, 4096, 4096});
  CHECK(tensor(r, "attn_weights_inf").shape == Shape{2, 4096, 4096});
  CHECK(tensor(r, "context_d2l").shape == Shape{2, 4096, 4});
  CHECK(tensor(r, "self_weights_1e9").shape == Shape{2, 4096, 4096});
  CHECK(tensor(r, "out").shape == Shape{2, 4096, 4});
  // The fully masked rows follow from the lengths alone (4096 and 4093 leave three).
  CHECK(any_note_contains(r, "3 rows of self_mask are all 1, (sequence, row) = (1, 4093), (1, 4094), (1, 4095)."));
  CHECK(any_note_contains(r, "the row becomes 1/4096 everywhere"));
  CHECK(without_numbers(skeleton(r)) == without_numbers(skeleton(run_lesson("padding"))));
  // At the default sizes --shapes-only still computes, and every check runs.
  LessonOptions small;
  small.shapes_only = true;
  const report::Report defaults = run_without_values("padding", small);
  CHECK(tensors_with_values(defaults) == 0);
  CHECK(checks(defaults).size() == checks(run_lesson("padding")).size());
  CHECK_FALSE(any_note_contains(defaults, "computes nothing"));
}

TEST_CASE("kv-cache's plan (too large to compute) fills x only when a sink reads it") {
  LessonOptions opts;
  opts.shapes_only = true;
  opts.seq_len = 4096;  // (1, 4, 4096, 4096) weights: more than the lesson computes, so the plan
  const report::Report dumped = run_lesson("kv-cache", opts);  // keeps values: --dump, --format json
  const report::TensorItem& x = tensor(dumped, "x");
  REQUIRE(x.shape == Shape{1, 4096, 8});
  LessonOptions five;  // the default run: its five tokens are x's first rows
  const report::Report computed = run_lesson("kv-cache", five);
  const report::TensorItem& x5 = tensor(computed, "x");
  REQUIRE(x5.values.size() == 40);
  CHECK(std::equal(x5.values.begin(), x5.values.end(), x.values.begin()));
  const report::Report plain = run_without_values("kv-cache", opts);
  CHECK(tensors_with_values(plain) == 0);
  CHECK(skeleton(plain) == skeleton(dumped));
}
