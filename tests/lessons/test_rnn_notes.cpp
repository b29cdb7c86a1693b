// The RNN lessons' sentences about their own numbers, over many runs: 50 seeds and a few
// --src / --tgt / --hidden variants. Every sentence that states a fact about the run is read
// back and compared with the tensors it talks about, so a sentence that some seed contradicts
// (as "Both fall from the last word towards the first" was, at the default seed) turns this red.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

struct Variant {
  std::uint64_t seed;
  std::optional<std::vector<std::string>> src, tgt;
  std::optional<std::size_t> hidden;
};

// Seeds 0..49 with the defaults, then a few shapes at a handful of seeds.
std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (std::uint64_t s = 0; s < 50; ++s) v.push_back({s, std::nullopt, std::nullopt, std::nullopt});
  const std::vector<std::string> longer = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  for (std::uint64_t s : {0u, 7u, 13u}) {
    v.push_back({s, longer, std::nullopt, std::nullopt});
    v.push_back({s, std::vector<std::string>{"hello"}, std::vector<std::string>{"salut"}, std::nullopt});
    v.push_back({s, std::nullopt, std::nullopt, std::size_t{2}});
    v.push_back({s, std::nullopt, std::nullopt, std::size_t{32}});
  }
  return v;
}

LessonOptions options(const Variant& v) {
  LessonOptions o;
  o.seed = v.seed;
  o.src = v.src;
  o.tgt = v.tgt;
  o.hidden = v.hidden;
  return o;
}

// The note of stage `title` that contains `part`, or "" when there is none.
std::string note_with(const report::Report& r, const std::string& title, const std::string& part) {
  for (const auto& s : r.stages())
    if (s.title == title)
      for (const auto& n : notes(s))
        if (n.find(part) != std::string::npos) return n;
  return "";
}

// The number printed right after `after` in `text`.
double number_after(const std::string& text, const std::string& after) {
  const auto at = text.find(after);
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << after << "' in: " << text);
  return std::strtod(text.c_str() + at + after.size(), nullptr);
}

// A number printed with 4 decimals against the value it rounds.
bool printed4(double shown, double exact) { return std::fabs(shown - exact) <= 6e-5; }

bool rises(const std::vector<float>& v) {
  for (std::size_t j = 0; j + 1 < v.size(); ++j)
    if (!(v[j] < v[j + 1])) return false;
  return true;
}

// max |a - 1/S| over an alignment tensor (rows of S).
double spread(const report::TensorItem& a) {
  const std::size_t S = a.shape.back();
  double worst = 0.0;
  for (float x : a.values) worst = std::max(worst, std::fabs(x - 1.0 / static_cast<double>(S)));
  return worst;
}

}  // namespace

TEST_CASE("bottleneck: what the notes say about the sensitivities holds in every run") {
  for (const auto& v : variants()) {
    CAPTURE(v.seed);
    CAPTURE(v.hidden.value_or(8));
    CAPTURE(v.src ? v.src->size() : 6);
    const auto r = run_lesson("bottleneck", options(v));
    const std::string title = "How much c depends on each source word";
    const std::string note = note_with(r, title, "Two measurements");
    REQUIRE(!note.empty());
    CHECK(note.find("Both fall") == std::string::npos);  // the sentence some seeds contradicted
    for (const auto& [what, tensor_name] : {std::pair<std::string, std::string>{"The gradient", "||d c / d x_j||"},
                                            {"The replacement", "||c' - c||"}}) {
      const std::string& measure = what;  // clang 14 cannot capture a structured binding
      CAPTURE(measure);
      const auto& values = tensor(r, tensor_name).values;
      if (values.size() == 1) {
        CHECK(note.find(what + " has one word to measure.") != std::string::npos);
      } else if (rises(values)) {
        CHECK(note.find(what + " falls steadily from the last word to the first.") != std::string::npos);
      } else {
        CHECK(note.find(what + " does not fall steadily towards the first word") != std::string::npos);
      }
    }
    // The sweep: the note's verdict follows the table's first / last column.
    const auto& sweep = table_with(r, "first / last");
    const double first_short = std::strtod(sweep.rows.front()[6].c_str(), nullptr);
    const double first_long = std::strtod(sweep.rows.back()[6].c_str(), nullptr);
    const double decades = first_long > 0.0 ? std::log10(first_short / first_long) : HUGE_VAL;
    const std::string fading = note_with(r, "Longer sentences, same c", "made-up words");
    REQUIRE(!fading.empty());
    CHECK(fading.find("first / last goes from " + sweep.rows.front()[6]) != std::string::npos);
    if (fading.find("underflows float32 to exactly 0") != std::string::npos) {
      CHECK(first_long == 0.0);
    } else if (fading.find("orders of magnitude as the sentence grows, and") != std::string::npos) {
      CHECK(decades >= 1.99);
      CHECK(std::fabs(number_after(fading, "shrinks by ") - std::floor(decades)) <= 1.0);  // the table is rounded
    } else if (fading.find("by less than two orders") != std::string::npos) {
      CHECK(decades > 0.0);
      CHECK(decades < 2.01);
    } else {
      CHECK(fading.find("does not shrink") != std::string::npos);
      CHECK(decades <= 0.01);
    }
  }
}

TEST_CASE("bahdanau: what the alignment notes say holds in every run") {
  for (const auto& v : variants()) {
    CAPTURE(v.seed);
    CAPTURE(v.hidden.value_or(8));
    CAPTURE(v.src ? v.src->size() : 6);
    const auto r = run_lesson("bahdanau", options(v));
    const auto& alignment = tensor(r, "alignment");
    const std::size_t S = alignment.shape.back();
    if (S == 1) {
      CHECK(!note_with(r, "The alignment matrix", "nothing to choose").empty());
      continue;
    }
    const std::string within = note_with(r, "The alignment matrix", "Here every weight is within ");
    REQUIRE(!within.empty());
    CHECK(printed4(number_after(within, "Here every weight is within "), spread(alignment)));
    // The linearity sentence: the widest pre-activation it names covers step 1's (printed), and
    // its verdict follows tanh(p) / p there.
    const std::string linear = note_with(r, "The alignment matrix", "These weights leave the decoder out");
    REQUIRE(!linear.empty());
    const double widest = number_after(linear, "the largest |W_a s_{i-1} + U_a h_j| is ");
    double step1 = 0.0;
    for (float p : tensor(r, "W_a s_0 + U_a h").values) step1 = std::max(step1, std::fabs(static_cast<double>(p)));
    CHECK(widest >= step1 - 1e-4);
    const double slope = number_after(linear, "where tanh(p) / p = ");
    CHECK(std::fabs(slope - std::tanh(widest) / widest) <= 2e-4);
    CHECK((linear.find("tanh is close to linear") != std::string::npos) == (slope >= 0.9));
    CHECK(linear.find("as here") == std::string::npos);  // the claim that was not computed
  }
}

TEST_CASE("luong: what the alignment notes say holds in every run") {
  for (const auto& v : variants()) {
    CAPTURE(v.seed);
    CAPTURE(v.hidden.value_or(8));
    CAPTURE(v.src ? v.src->size() : 6);
    const auto r = run_lesson("luong", options(v));
    const auto& alignment = tensor(r, "alignment");
    const std::size_t S = alignment.shape.back();
    const std::string note = note_with(r, "The alignment matrix", "Every weight is within ");
    REQUIRE(!note.empty());
    const double said = number_after(note, "Every weight is within ");
    CHECK(printed4(said, spread(alignment)));
    CHECK((note.find("too little for softmax") != std::string::npos) == (spread(alignment) < 0.5 / static_cast<double>(S)));
    // "the c_t rows look alike": said only when every c_t is near the mean of the encoder states.
    const auto& c = tensor(r, "c_t");
    const auto& h = tensor(r, "h_enc");
    const std::size_t d = h.shape[1];
    std::vector<double> mean(d, 0.0);
    for (std::size_t j = 0; j < S; ++j)
      for (std::size_t k = 0; k < d; ++k) mean[k] += h.values[j * d + k] / static_cast<double>(S);
    double c_off = 0.0, h_off = 0.0;
    for (std::size_t i = 0; i < c.values.size(); ++i) c_off = std::max(c_off, std::fabs(c.values[i] - mean[i % d]));
    for (std::size_t i = 0; i < h.values.size(); ++i) h_off = std::max(h_off, std::fabs(h.values[i] - mean[i % d]));
    const bool alike = note.find("look alike") != std::string::npos;
    if (alike) {
      CHECK(printed4(number_after(note, "every c_t is within "), c_off));
      CHECK(printed4(number_after(note, "stray up to "), h_off));
      CHECK(c_off < 0.5 * h_off + 1e-4);
    } else {
      CHECK((S == 1 || c_off >= 0.5 * h_off - 1e-4));
    }
    // One meaning per symbol: the decoder's start is h_0, the encoder's h_enc_0.
    CHECK(r.stages()[1].equation.find("h_enc_0 = 0") != std::string::npos);
    CHECK(r.stages()[3].equation.find("h_0 = h_enc_S") != std::string::npos);
  }
}
