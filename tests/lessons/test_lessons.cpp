// The lesson layer: the registry, option checks, where inputs come from, and each lesson's
// numbers with its defaults. The expected values were printed by PyTorch 1.13 running the
// construction each lesson's header describes (the book's inputs; torch.manual_seed(123) and
// three torch.rand(3, 2) for self-attention; seed 789 and three bias-free nn.Linear(3, 2) for
// causal; seed 123, three nn.Linear(3, 2, bias=False) and nn.Linear(2, 2) on the input stacked
// twice, 2 heads, causal, for heads) and match the book's printed outputs.
#include <doctest/doctest.h>

#include <cmath>

#include "cli/output_options.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/shared_options.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

void check_values(const report::TensorItem& t, const std::vector<float>& expected) {
  REQUIRE(t.values.size() >= expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    // The book and PyTorch print 4 decimals: agreement to half a unit in the last place.
    CHECK(std::fabs(t.values[i] - expected[i]) <= 5e-5f);
  }
}

}  // namespace

TEST_CASE("registry: names, order, suggestions") {
  const auto& all = lessons();
  REQUIRE(all.size() >= 7);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const LessonEntry& l = all[i];
    CAPTURE(l.name);
    CHECK(std::string(l.title).size() > 0);
    CHECK(std::string(l.summary).size() > 0);
    CHECK(std::string(l.follows).size() > 0);
    CHECK(static_cast<bool>(l.fn));
    CHECK(find_lesson(l.name) == &l);
    if (i > 0) CHECK(all[i - 1].order < l.order);  // teaching order: strictly by the order keys
  }
  CHECK(find_lesson("casual") == nullptr);
  CHECK(closest_lesson("casual") == "causal");
  CHECK(closest_lesson("head") == "heads");
  CHECK(closest_lesson("selfattention") == "self-attention");
  CHECK(closest_lesson("transformer") == "");
}

TEST_CASE("registry: the first seven lessons keep their teaching order whatever is added between them") {
  // New lessons take order keys in the gaps; these seven must still come in this order.
  std::vector<std::string> seen;
  for (const auto& l : lessons())
    for (const char* name : {"bottleneck", "bahdanau", "luong", "self-attention", "causal", "heads", "scaling"})
      if (name == std::string(l.name)) seen.push_back(name);
  CHECK(seen == std::vector<std::string>{"bottleneck", "bahdanau", "luong", "self-attention", "causal", "heads", "scaling"});
}

namespace {

void noop_lesson(const LessonOptions&, report::Report&) {}

LessonEntry entry(int order, const char* name, std::vector<LessonOption> extra = {}) {
  return {order, name, "title", "summary", "follows", kSeed, noop_lesson, std::move(extra)};
}

const LessonOption kTheta{"--theta", OptionType::Real, 1, 1e9, 10000, "RoPE base"};
const LessonOption kSteps{"--steps", OptionType::Integer, 1, 1000, 100, "training steps"};

}  // namespace

TEST_CASE("add_lesson keeps the order keys' order, and refuses clashes") {
  std::vector<LessonEntry> table;
  add_lesson(table, entry(300, "c"));
  add_lesson(table, entry(100, "a", {kTheta}));
  add_lesson(table, entry(200, "b", {kTheta, kSteps}));  // the same flag, the same type: fine
  REQUIRE(table.size() == 3);
  CHECK(std::string(table[0].name) == "a");
  CHECK(std::string(table[1].name) == "b");
  CHECK(std::string(table[2].name) == "c");

  CHECK_THROWS_WITH_AS(add_lesson(table, entry(400, "a")), doctest::Contains("two lessons are named 'a'"),
                       std::logic_error);
  CHECK_THROWS_WITH_AS(add_lesson(table, entry(200, "d")), doctest::Contains("the same order key 200"),
                       std::logic_error);
  LessonOption theta_int = kTheta;
  theta_int.type = OptionType::Integer;
  CHECK_THROWS_WITH_AS(add_lesson(table, entry(500, "e", {theta_int})),
                       doctest::Contains("declare --theta as real and integer"), std::logic_error);
  LessonOption heads{"--heads", OptionType::Integer, 1, 8, 2, "shadows a shared option"};
  CHECK_THROWS_WITH_AS(add_lesson(table, entry(600, "f", {heads})), doctest::Contains("--heads is a shared option"),
                       std::logic_error);
  // Every entry of the lessons' shared table is taken (add_lesson refuses it), and so is every
  // output option (--svg-panels and --full-json were missing from the hand-kept list these tables
  // replaced): the command line refuses a table of lessons where one declares it, at start-up.
  for (const auto& shared : shared_options()) {
    CAPTURE(shared.flag);
    LessonOption clash{shared.flag, OptionType::Integer, 1, 8, 2, "shadows a shared option"};
    const std::string why = std::string(shared.flag) + " is a shared option";
    CHECK_THROWS_WITH_AS(add_lesson(table, entry(600, "f", {clash})), doctest::Contains(why.c_str()), std::logic_error);
  }
  CHECK_NOTHROW(cli::check_own_options(table));
  CHECK_NOTHROW(cli::check_own_options(lessons()));
  for (const auto& output : cli::output_options()) {
    CAPTURE(output.flag);
    CHECK(find_shared_option(output.flag) == nullptr);  // one row per option, in one table
    std::vector<LessonEntry> with_clash = table;
    add_lesson(with_clash, entry(600, "f", {LessonOption{output.flag, OptionType::Integer, 1, 8, 2, "shadows it"}}));
    const std::string why = std::string(output.flag) + " is a shared option";
    CHECK_THROWS_WITH_AS(cli::check_own_options(with_clash), doctest::Contains(why.c_str()), std::logic_error);
  }
  CHECK_THROWS_WITH_AS(add_lesson(table, entry(700, "g", {kSteps, kSteps})), doctest::Contains("declares --steps twice"),
                       std::logic_error);
  LessonOption outside = kSteps;
  outside.fallback = 0;
  CHECK_THROWS_WITH_AS(add_lesson(table, entry(800, "h", {outside})), doctest::Contains("outside its range"),
                       std::logic_error);
  CHECK(table.size() == 3);  // nothing refused was added
}

TEST_CASE("a lesson's own options: strict parsing, one-line messages") {
  CHECK(parse_lesson_option(kTheta, "10000") == 10000.0);
  CHECK(parse_lesson_option(kTheta, "1e9") == 1e9);
  CHECK(parse_lesson_option(kTheta, "2.5") == 2.5);
  CHECK(parse_lesson_option(kSteps, "1000") == 1000.0);
  CHECK_THROWS_WITH_AS(parse_lesson_option(kTheta, "0"), "--theta is out of range (--theta: 1..1e9 vs 0)", UsageError);
  CHECK_THROWS_WITH_AS(parse_lesson_option(kTheta, "2e9"), "--theta is out of range (--theta: 1..1e9 vs 2e9)",
                       UsageError);
  for (const char* bad : {"inf", "nan", "0x10", "1e", "", "ten", "1.5.2", "1e999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_lesson_option(kTheta, bad), UsageError);
  }
  CHECK_THROWS_WITH_AS(parse_lesson_option(kSteps, "2.5"), "--steps expects a whole number (--steps: 1..1000 vs '2.5')",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_lesson_option(kSteps, "-3"), "--steps must not be negative (--steps: 1..1000 vs '-3')",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_lesson_option(kSteps, "1001"), "--steps is out of range (--steps: 1..1000 vs 1001)",
                       UsageError);
  const LessonOption shift{"--shift", OptionType::Integer, -5, 5, 0, "may be negative"};
  CHECK(parse_lesson_option(shift, "-5") == -5.0);
  CHECK(format_option_value(4096) == "4096");
  CHECK(format_option_value(0.5) == "0.5");
  CHECK(format_option_value(1e9) == "1e9");
  CHECK(format_option_value(2.5e-5) == "2.5e-5");
}

TEST_CASE("a lesson's own options reach it with their defaults, and other lessons refuse them") {
  const LessonEntry& scaling = *find_lesson("scaling");
  const LessonOption* samples = scaling.find_extra("--samples");
  REQUIRE(samples != nullptr);
  CHECK(samples->type == OptionType::Integer);
  CHECK(samples->fallback == 4096.0);
  CHECK(run_lesson("scaling").header.setting[1] == "samples 4096");
  LessonOptions few;
  few.own["--samples"] = 16;
  CHECK(run_lesson("scaling", few).header.setting[1] == "samples 16");
  CHECK_THROWS_AS(LessonOptions{}.number("--samples"), std::logic_error);  // outside a lesson: no defaults

  CHECK_NOTHROW(check_options_apply(scaling, {"--samples", "--seq-len"}));
  CHECK_THROWS_WITH_AS(check_options_apply(*find_lesson("causal"), {"--samples"}),
                       doctest::Contains("lesson 'causal' does not take --samples"), UsageError);
  CHECK_THROWS_WITH_AS(check_options_apply(scaling, {"--heads"}),
                       doctest::Contains("(--heads: one of --seq-len, --seed, --samples (attn lesson scaling --help) vs --heads)"),
                       UsageError);
}

TEST_CASE("options that a lesson does not read are refused by name") {
  CHECK_THROWS_WITH_AS(check_options_apply(*find_lesson("scaling"), {"--heads"}),
                       doctest::Contains("does not take --heads"), UsageError);
  CHECK_THROWS_AS(check_options_apply(*find_lesson("causal"), {"--no-causal"}), UsageError);
  CHECK_NOTHROW(check_options_apply(*find_lesson("heads"), {"--heads", "--no-causal", "--qkv-bias"}));
  // From the one shared table: an option with OptionBits is refused by every lesson without
  // them, one without (the outputs, the display) is taken by every lesson.
  for (const auto& lesson : lessons())
    for (const auto& o : shared_options()) {
      CAPTURE(lesson.name);
      CAPTURE(o.flag);
      if (applies(o, lesson.options)) CHECK_NOTHROW(check_options_apply(lesson, {o.flag}));
      const std::string refusal = std::string("does not take ") + o.flag;
      if (!applies(o, lesson.options))
        CHECK_THROWS_WITH_AS(check_options_apply(lesson, {o.flag}), doctest::Contains(refusal.c_str()), UsageError);
    }
  CHECK_THROWS_AS(check_options_apply(*find_lesson("scaling"), {"--weights-layout"}), UsageError);
  CHECK_THROWS_AS(check_options_apply(*find_lesson("scaling"), {"--allow-nonfinite"}), UsageError);
  CHECK_NOTHROW(check_options_apply(*find_lesson("scaling"), {"--svg-panels", "--full-json", "--precision"}));
}

TEST_CASE("inputs: the book's embeddings, and one seeded vector per distinct word") {
  LessonOptions opts;
  const TokenInput book = token_input(opts, 3);
  REQUIRE(book.tokens.size() == 6);
  CHECK(book.tokens[1] == "journey");
  CHECK(book.x(1, 0) == doctest::Approx(0.55f));
  CHECK(book.x(1, 1) == doctest::Approx(0.87f));

  opts.tokens = std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat"};
  const TokenInput words = token_input(opts, 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(words.x(0, k) == words.x(4, k));  // "the" twice: the same vector
    CHECK(words.x(0, k) >= 0.0f);
    CHECK(words.x(0, k) < 1.0f);
  }
  CHECK(words.x(0, 0) != words.x(1, 0));  // different words differ
  CHECK(words.origin.find("torch.manual_seed") != std::string::npos);

  // Book words are found whatever their case, at d_in 3 only.
  opts.tokens = std::vector<std::string>{"your", "STEP"};
  const TokenInput cased = token_input(opts, 3);
  CHECK(cased.x(0, 2) == doctest::Approx(0.89f));
  CHECK(cased.x(1, 1) == doctest::Approx(0.80f));

  // --seq-len must agree with --tokens; past the book's six, numbered tokens.
  opts.seq_len = 3;
  CHECK_THROWS_AS(token_input(opts, 3), UsageError);
  LessonOptions longer;
  longer.seq_len = 8;
  const TokenInput eight = token_input(longer, 3);
  CHECK(eight.tokens[7] == "tok8");
}

TEST_CASE("self-attention with defaults reproduces the book's context vectors") {
  const auto r = run_lesson("self-attention");
  CHECK(r.stages().size() == 10);
  check_values(tensor(r, "queries"), {0.2309f, 1.0966f, 0.4306f, 1.4551f});
  check_values(tensor(r, "context_vec"), {0.2996f, 0.8053f, 0.3061f, 0.8210f, 0.3058f, 0.8203f,
                                          0.2948f, 0.7939f, 0.2927f, 0.7891f, 0.2990f, 0.8040f});
  CHECK(tensor(r, "context_vec").shape == Shape{6, 2});
  LessonOptions batched;
  batched.batch = 2;
  CHECK(tensor(run_lesson("self-attention", batched), "context_vec").shape == Shape{2, 6, 2});
}

TEST_CASE("causal with defaults: the book's masked weights, and nothing leaks") {
  const auto r = run_lesson("causal");
  check_values(tensor(r, "attn_weights"), {1.0f, 0, 0, 0, 0, 0, 0.5517f, 0.4483f, 0, 0, 0, 0,
                                           0.3800f, 0.3097f, 0.3103f, 0, 0, 0});
  check_values(tensor(r, "context_vec"), {-0.0872f, 0.0286f, -0.0991f, 0.0501f, -0.0999f, 0.0633f});
  const auto& fully = tensor(r, "softmax(fully_masked, dim=-1)");
  CHECK(std::isnan(fully.values[0]));                            // -inf: 0/0
  CHECK(fully.values[6] == doctest::Approx(1.0f / 6.0f));        // -1e9: uniform
  const auto leak = check_with(r, "unchanged");
  CHECK_FALSE(leak.question);
  CHECK(leak.value == 0.0);
  CHECK(leak.bound == 0.0);
  CHECK(leak.passed);
  // The equation indexes x's token axis, the second from last, which is right for x (T, d_in) and
  // for a batch (B, T, d_in) alike; x[:, T-1] would index d_in without a batch (an IndexError in
  // PyTorch for d_in < T).
  int leak_stages = 0;
  for (const auto& s : r.stages())
    if (s.title == "Nothing leaks from the future") {
      ++leak_stages;
      CHECK(s.equation.rfind("x'[..., T-1, :] = x[..., T-1, :] + 1", 0) == 0);
    }
  CHECK(leak_stages == 1);
}

TEST_CASE("heads with defaults reproduces the book's MultiHeadAttention output") {
  const auto r = run_lesson("heads");
  const auto& out = tensor(r, "output");
  CHECK(out.shape == Shape{2, 6, 2});
  const std::vector<float> book = {0.3190f, 0.4858f, 0.2943f, 0.3897f, 0.2856f, 0.3593f,
                                   0.2693f, 0.3873f, 0.2639f, 0.3928f, 0.2575f, 0.4028f};
  check_values(out, book);
  // The second batch entry is the same sentence, so the same rows.
  for (std::size_t i = 0; i < book.size(); ++i) CHECK(out.values[12 + i] == out.values[i]);
  CHECK(tensor(r, "q_heads").shape == Shape{2, 2, 6, 1});
  CHECK(tensor(r, "attn_scores").shape == Shape{2, 2, 6, 6});

  const auto separate = check_with(r, "equals the fused context_vec");
  CHECK(separate.value == 0.0);
  CHECK(separate.passed);
  const auto mistake = check_with(r, "does the mistake change the output");
  CHECK(mistake.question);
  CHECK(mistake.value > 0.01);
  CHECK(mistake.passed);  // yes: the output changed
}

TEST_CASE("heads: the issue's example sizes and the --heads/--d-out rule") {
  LessonOptions opts;
  opts.heads = 4;
  opts.d_out = 8;
  opts.batch = 3;
  opts.seq_len = 6;
  const auto r = run_lesson("heads", opts);
  CHECK(tensor(r, "queries.view(B, T, h, d_k)").shape == Shape{3, 6, 4, 2});
  CHECK(tensor(r, "q_heads").shape == Shape{3, 4, 6, 2});
  CHECK(tensor(r, "attn_weights").shape == Shape{3, 4, 6, 6});
  CHECK(tensor(r, "output").shape == Shape{3, 6, 8});

  opts.heads = 3;
  CHECK_THROWS_WITH_AS(run_lesson("heads", opts), doctest::Contains("--heads must divide --d-out"), UsageError);
}

TEST_CASE("scaling: measured variances track d_k, scaled ones stay near 1") {
  const auto r = run_lesson("scaling");
  const auto& raw = tensor(r, "dots.var(unbiased=False)");
  const auto& scaled = tensor(r, "(dots / sqrt(d_k)).var(unbiased=False)");
  const float widths[] = {2, 8, 32, 128, 512};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(widths[i]);
    CHECK(raw.values[i] == doctest::Approx(widths[i]).epsilon(0.1));
    CHECK(scaled.values[i] == doctest::Approx(1.0f).epsilon(0.1));
  }
  // Values printed by PyTorch for torch.manual_seed(0) and the lesson's draws.
  CHECK(raw.values[0] == doctest::Approx(2.0253708f).epsilon(1e-5));
  CHECK(raw.values[4] == doctest::Approx(514.29388f).epsilon(1e-5));
  // The example row at d_k = 512: unscaled it is one-hot in all but name; scaled it is not.
  const auto& unscaled_row = tensor(r, "softmax(scores)");
  const auto& scaled_row = tensor(r, "softmax(scores / sqrt(d_k))");
  CHECK(unscaled_row.values[6] == doctest::Approx(1.0f).epsilon(1e-4));
  CHECK(scaled_row.values[6] == doctest::Approx(0.4504f).epsilon(1e-3));
}

TEST_CASE("sizes beyond the limits are refused before anything is computed") {
  LessonOptions opts;
  opts.seq_len = 5000;
  opts.batch = 64;
  CHECK_THROWS_WITH_AS(run_lesson("heads", opts), doctest::Contains("too large to hold"), UsageError);
  LessonOptions wide;
  wide.d_in = 5000;
  wide.d_out = 5000;
  CHECK_THROWS_WITH_AS(run_lesson("self-attention", wide), doctest::Contains("too large to print"), UsageError);
  wide.shapes_only = true;
  CHECK_NOTHROW(run_lesson("self-attention", wide));
}

TEST_CASE("causal with scores near -2e9: the questions answer no, with the reasons the numbers give") {
  // W_key = -W_query makes every visible score -|q|^2, about -1.8e9: below the fill -1e9.
  LessonOptions o;
  o.input = ExternalTensor{"test x", {4, 3}, {3e4f, 3e4f, 1, 3e4f, -3e4f, 1, -3e4f, 3e4f, 1, 2e4f, 2e4f, 1}};
  o.weights["W_query"] = ExternalTensor{"test W_query", {3, 2}, {1, 0, 0, 1, 0, 0}};
  o.weights["W_key"] = ExternalTensor{"test W_key", {3, 2}, {-1, 0, 0, -1, 0, 0}};
  o.weights["W_value"] = ExternalTensor{"test W_value", {3, 2}, {1, 2, 3, 4, 5, 6}};
  o.weights_dir = "test";
  const auto r = run_lesson("causal", o);
  const auto fill9 = check_with(r, "does fill -1e9 give exactly the same");
  CHECK_FALSE(fill9.passed);
  CHECK(fill9.value == doctest::Approx(1.0));
  CHECK(fill9.because.find("the fill is the larger") != std::string::npos);
  CHECK(check_with(r, "does fill -1e10 give exactly the same").passed);  // -1e10 is still below them
  const auto routes = check_with(r, "do the two routes give the same");
  CHECK_FALSE(routes.passed);
  CHECK(std::isnan(routes.value));
  CHECK(routes.because.find("underflowed to 0, and 0/0 is NaN") != std::string::npos);
  // The table and the note follow the answers instead of promising "identical".
  const auto& t = table_with(r, "a fully masked row becomes");
  CHECK(t.rows[1][2] == "differ by up to 1");
  CHECK(t.rows[2][2] == "identical");
  // The invariants still hold: a question answered no is not a failure.
  for (const auto& c : checks(r))
    if (!c.question) CHECK_MESSAGE(c.passed, c.text);
}

TEST_CASE("heads: the reshape mistake's note names the tokens head 0's rows really come from") {
  // Head 0 of queries.view(B, h, T, d_k) holds the first T * d_k values of the (T, d_out) rows:
  // tokens 0 .. (T * d_k - 1) / d_out.
  auto mistake_note = [](const report::Report& r) {
    for (const auto& s : r.stages())
      if (s.title == "The mistake: reshape without the transpose")
        for (const auto& n : notes(s))
          if (n.find("Head 0's rows") != std::string::npos) return n;
    return std::string();
  };
  // Defaults: T 6, d_out 2, two heads of d_k 1: flat values 0..5 are tokens 0, 0, 1, 1, 2, 2.
  CHECK(mistake_note(run_lesson("heads")).find("they come from the first 3 tokens' rows") != std::string::npos);
  // Llama-3.2-3B's sizes: 9 tokens of d_k 128 fill 1,152 values, inside token 0's 3,072.
  LessonOptions llama;
  apply_preset("llama", "heads", false, llama);
  CHECK(mistake_note(run_lesson("heads", llama)).find("all 9 come from token 0's row alone") != std::string::npos);
}
