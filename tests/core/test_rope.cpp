// Rotary position embeddings against PyTorch 1.13 (the `rope` case of tests/data/modern_cases.json)
// and the properties a lesson claims: the two conventions are one permutation apart, q . k
// depends only on the distance, rotation keeps every norm, position 0 changes nothing.
//
// Legend: B batch, h heads, T tokens, d_k head width, P = d_k / 2 pairs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/rope.hpp"
#include "support.hpp"

using attn::Mat;
using attn::RopeStyle;
using attn::RopeTables;
using attn::Ten4;
using attn::Vec;
using attn::test::differences;
using attn::test::contains;
using attn::test::load_fixture;
using attn::test::random_heads;
using attn::test::refusal;

namespace {

// modern_cases.json, case "rope": B 1, h 2, T 6, d_k 8, theta 10000, positions 0 .. 5.
constexpr std::size_t kT = 6, kDk = 8;

template <std::size_t N>
xt::xtensor<float, N> rope_fixture(const std::string& tensor) {
  return load_fixture<N>("rope__" + tensor + ".npy");
}


}  // namespace

TEST_CASE("rope_tables gives PyTorch's cos and sin (Hugging Face layout)") {
  const RopeTables t = attn::rope_tables(kT, kDk, 10000.0f);
  CHECK(differences(t.cos, rope_fixture<2>("cos")) == "");  // (T, d_k)
  CHECK(differences(t.sin, rope_fixture<2>("sin")) == "");  // (T, d_k)
  // The intermediate tables a lesson prints: (P,) and (T, P).
  REQUIRE(t.inv_freq.shape()[0] == kDk / 2);
  REQUIRE(t.angles.shape()[0] == kT);
  REQUIRE(t.angles.shape()[1] == kDk / 2);
  for (std::size_t i = 0; i < kDk / 2; ++i) {
    CHECK(t.inv_freq(i) == doctest::Approx(std::pow(10000.0, -2.0 * i / kDk)).epsilon(1e-6));
    for (std::size_t p = 0; p < kT; ++p) CHECK(t.angles(p, i) == static_cast<float>(p) * t.inv_freq(i));
  }
}

TEST_CASE("apply_rope gives PyTorch's rotated q and k in both conventions") {
  const RopeTables t = attn::rope_tables(kT, kDk, 10000.0f);
  const Ten4 q = rope_fixture<4>("q"), k = rope_fixture<4>("k");  // (B, h, T, d_k)
  CHECK(differences(attn::apply_rope(q, t, RopeStyle::half), rope_fixture<4>("q_rope_half")) == "");
  CHECK(differences(attn::apply_rope(k, t, RopeStyle::half), rope_fixture<4>("k_rope_half")) == "");
  CHECK(differences(attn::apply_rope(q, t, RopeStyle::interleaved), rope_fixture<4>("q_rope_interleaved")) == "");
  CHECK(differences(attn::apply_rope(k, t, RopeStyle::interleaved), rope_fixture<4>("k_rope_interleaved")) == "");
}

TEST_CASE("half RoPE is x * cos + rotate_half(x) * sin, as Hugging Face writes it") {
  const RopeTables t = attn::rope_tables(kT, kDk, 10000.0f);
  const Ten4 q = rope_fixture<4>("q");                    // (B, h, T, d_k)
  const Ten4 rotated = attn::rotate_half(q);               // (B, h, T, d_k)
  CHECK(rotated(0, 1, 2, 0) == -q(0, 1, 2, kDk / 2));      // cat(-x[d/2:], x[:d/2])
  CHECK(rotated(0, 1, 2, kDk / 2) == q(0, 1, 2, 0));
  Ten4 by_formula = xt::empty<float>(q.shape());           // (B, h, T, d_k)
  for (std::size_t hd = 0; hd < 2; ++hd)
    for (std::size_t p = 0; p < kT; ++p)
      for (std::size_t j = 0; j < kDk; ++j)
        by_formula(0, hd, p, j) = q(0, hd, p, j) * t.cos(p, j) + rotated(0, hd, p, j) * t.sin(p, j);
  // The same float operations in the same order: exact.
  CHECK(differences(attn::apply_rope(q, t, RopeStyle::half), by_formula, 0.0) == "");
}

TEST_CASE("scores after RoPE: PyTorch's scores_half, and scores_shifted from positions 5 .. 10") {
  const Ten4 q = rope_fixture<4>("q"), k = rope_fixture<4>("k");  // (B, h, T, d_k)
  const RopeTables at0 = attn::rope_tables(kT, kDk, 10000.0f, 0);
  const RopeTables at5 = attn::rope_tables(kT, kDk, 10000.0f, 5);
  CHECK(at5.angles(0, 0) == 5.0f);  // the first row is position 5
  const Ten4 scores = attn::matmul_bt(attn::apply_rope(q, at0, RopeStyle::half),
                                      attn::apply_rope(k, at0, RopeStyle::half));  // (B, h, T, T)
  const Ten4 shifted = attn::matmul_bt(attn::apply_rope(q, at5, RopeStyle::half),
                                       attn::apply_rope(k, at5, RopeStyle::half));  // (B, h, T, T)
  CHECK(differences(scores, rope_fixture<4>("scores_half")) == "");
  CHECK(differences(shifted, rope_fixture<4>("scores_shifted")) == "");
  CHECK(differences(shifted, scores) == "");
}

TEST_CASE("the two conventions differ only by a permutation of the dimensions") {
  const RopeTables t = attn::rope_tables(kT, kDk, 10000.0f);
  const Ten4 q = rope_fixture<4>("q");  // (B, h, T, d_k)
  // Half dimension i is interleaved dimension 2i; i + P is 2i + 1.
  const Ten4 permuted = attn::half_to_interleaved(q);  // (B, h, T, d_k)
  CHECK(permuted(0, 0, 3, 2) == q(0, 0, 3, 1));
  CHECK(permuted(0, 0, 3, 3) == q(0, 0, 3, 1 + kDk / 2));
  CHECK(differences(attn::interleaved_to_half(permuted), q, 0.0) == "");
  // Rotating then permuting == permuting then rotating the other way: the same pairs, the same
  // angles, the same float operations, so exactly equal.
  CHECK(differences(attn::half_to_interleaved(attn::apply_rope(q, t, RopeStyle::half)),
                    attn::apply_rope(permuted, t, RopeStyle::interleaved), 0.0) == "");
  // And from PyTorch's side: its interleaved output, put back in half order, is its half-RoPE
  // of the permuted input.
  const Ten4 pt_interleaved = rope_fixture<4>("q_rope_interleaved");  // (B, h, T, d_k)
  CHECK(differences(attn::interleaved_to_half(pt_interleaved),
                    attn::apply_rope(attn::interleaved_to_half(q), t, RopeStyle::half)) == "");
  // Scores do not care about the order of the dimensions: q . k is a sum over all of them.
  const Ten4 k = rope_fixture<4>("k");
  const Ten4 s_half = attn::matmul_bt(attn::apply_rope(q, t, RopeStyle::half), attn::apply_rope(k, t, RopeStyle::half));
  const Ten4 s_inter = attn::matmul_bt(attn::apply_rope(attn::half_to_interleaved(q), t, RopeStyle::interleaved),
                                       attn::apply_rope(attn::half_to_interleaved(k), t, RopeStyle::interleaved));
  CHECK(differences(s_inter, s_half) == "");
}

TEST_CASE("q . k after RoPE depends only on the distance: shifting every position leaves the scores") {
  // Exact in real numbers; in float32 each angle position * inv_freq is rounded to about
  // position * 2^-24 radians, so the scores drift with the position itself. The bound,
  // 2 * (s + T) * 2^-24, is 6 to 10 times what NumPy's float32 shows for these sizes
  // (1.0e-3 at s = 131072, 8.6e-5 at 4096, 2.6e-6 at 100), and 1e-5 for small shifts.
  const std::size_t B = 2, h = 3, T = 7, d_k = 16;
  const Ten4 q = random_heads(21, B, h, T, d_k), k = random_heads(22, B, h, T, d_k);  // (B, h, T, d_k)
  for (const RopeStyle style : {RopeStyle::half, RopeStyle::interleaved})
    for (const float theta : {10000.0f, 500000.0f}) {
      const RopeTables base = attn::rope_tables(T, d_k, theta, 0);
      const Ten4 scores = attn::matmul_bt(attn::apply_rope(q, base, style), attn::apply_rope(k, base, style));
      for (const std::size_t s : {1u, 5u, 100u, 4096u, 131072u}) {
        INFO(attn::rope_style_name(style), " theta ", theta, " shift ", s);
        const RopeTables moved = attn::rope_tables(T, d_k, theta, s);
        const Ten4 shifted = attn::matmul_bt(attn::apply_rope(q, moved, style), attn::apply_rope(k, moved, style));
        const double bound = std::max(1e-5, 2.0 * static_cast<double>(s + T) * std::ldexp(1.0, -24));
        CHECK(differences(shifted, scores, bound) == "");
      }
    }
  // Without RoPE's help the check has teeth: rotating keys by a different shift than queries
  // changes the scores by far more than the bound.
  const RopeTables a = attn::rope_tables(T, d_k, 10000.0f, 0), b = attn::rope_tables(T, d_k, 10000.0f, 3);
  const Ten4 same = attn::matmul_bt(attn::apply_rope(q, a, RopeStyle::half), attn::apply_rope(k, a, RopeStyle::half));
  const Ten4 mixed = attn::matmul_bt(attn::apply_rope(q, a, RopeStyle::half), attn::apply_rope(k, b, RopeStyle::half));
  CHECK(differences(mixed, same, 0.1) != "");
}

TEST_CASE("rotation keeps every vector's norm, at any position, in both conventions") {
  const std::size_t T = 9, d_k = 12;
  const Ten4 x = random_heads(5, 1, 2, T, d_k);  // (B, h, T, d_k)
  for (const RopeStyle style : {RopeStyle::half, RopeStyle::interleaved})
    for (const std::size_t offset : {0u, 1000u, 1000000u}) {
      INFO(attn::rope_style_name(style), " offset ", offset);
      const Ten4 r = attn::apply_rope(x, attn::rope_tables(T, d_k, 10000.0f, offset), style);  // (B, h, T, d_k)
      for (std::size_t row = 0; row < x.size() / d_k; ++row) {
        double before = 0, after = 0;
        for (std::size_t j = 0; j < d_k; ++j) {
          before += double(x.data()[row * d_k + j]) * x.data()[row * d_k + j];
          after += double(r.data()[row * d_k + j]) * r.data()[row * d_k + j];
        }
        CHECK(std::sqrt(after) == doctest::Approx(std::sqrt(before)).epsilon(1e-6));
      }
    }
}

TEST_CASE("position 0 is the identity, exactly, and only position 0") {
  const std::size_t d_k = 8;
  const Ten4 x = random_heads(9, 1, 1, 2, d_k);  // (B, h, T, d_k): positions 0 and 1
  const RopeTables t = attn::rope_tables(2, d_k, 10000.0f);
  for (std::size_t j = 0; j < d_k; ++j) {
    CHECK(t.cos(0, j) == 1.0f);
    CHECK(t.sin(0, j) == 0.0f);
  }
  for (const RopeStyle style : {RopeStyle::half, RopeStyle::interleaved}) {
    const Ten4 r = attn::apply_rope(x, t, style);  // (B, h, T, d_k)
    for (std::size_t j = 0; j < d_k; ++j) CHECK(r(0, 0, 0, j) == x(0, 0, 0, j));
    CHECK(r(0, 0, 1, 0) != x(0, 0, 1, 0));  // position 1 turns pair 0 by 1 radian
  }
  // An empty sequence gives empty tables and an empty result, not an error.
  const RopeTables none = attn::rope_tables(0, d_k);
  CHECK(none.cos.size() == 0);
  const Ten4 empty = xt::empty<float>({std::size_t{1}, std::size_t{2}, std::size_t{0}, d_k});
  CHECK(attn::apply_rope(empty, none, RopeStyle::half).size() == 0);
}

TEST_CASE("theta sets the slowest pair's speed: Llama 3's 500000 against 10000") {
  const std::size_t d_k = 128;  // Llama's head width
  const Vec slow = attn::rope_inv_freq(d_k, 500000.0f), base = attn::rope_inv_freq(d_k, 10000.0f);  // (P,)
  CHECK(slow(0) == 1.0f);  // theta^0: pair 0 always turns one radian per token
  CHECK(base(0) == 1.0f);
  for (std::size_t i = 1; i < d_k / 2; ++i) CHECK(slow(i) < base(i));
  for (std::size_t i = 1; i < d_k / 2; ++i) CHECK(base(i) < base(i - 1));  // each pair slower than the last
  CHECK(slow(d_k / 2 - 1) == doctest::Approx(std::pow(500000.0, -126.0 / 128.0)).epsilon(1e-5));
  CHECK(base(d_k / 2 - 1) == doctest::Approx(std::pow(10000.0, -126.0 / 128.0)).epsilon(1e-5));
  // The wavelength 2 pi / inv_freq of the slowest pair: ~54,000 tokens at 10000, ~2.4 million at 500000.
  CHECK(2 * M_PI / base(d_k / 2 - 1) == doctest::Approx(2 * M_PI * std::pow(10000.0, 126.0 / 128.0)).epsilon(1e-5));
  CHECK(2 * M_PI / slow(d_k / 2 - 1) > 2.0e6);
  // theta = 1: every pair turns at the same speed (a degenerate but valid base).
  const Vec one = attn::rope_inv_freq(8, 1.0f);
  for (std::size_t i = 0; i < 4; ++i) CHECK(one(i) == 1.0f);
}

TEST_CASE("refusals: odd or zero d_k, a bad theta, tables that do not fit, positions past 2^24") {
  std::string why = refusal([] { attn::rope_tables(4, 7); });
  CHECK(contains(why, "d_k 7"));
  CHECK(contains(why, "even"));
  CHECK(contains(refusal([] { attn::rope_inv_freq(0); }), "d_k 0"));
  CHECK(contains(refusal([] { attn::rotate_half(Ten4(xt::zeros<float>({1, 1, 2, 5}))); }), "d_k 5"));
  CHECK(contains(refusal([] { attn::half_to_interleaved(Ten4(xt::zeros<float>({1, 1, 2, 3}))); }), "d_k 3"));
  const RopeTables t5 = attn::rope_tables(5, 8);
  CHECK(contains(refusal([&] { attn::apply_rope(Ten4(xt::zeros<float>({1, 1, 2, 7})), t5, RopeStyle::half); }),
                 "d_k 7"));
  // Tables for 5 positions do not rotate 6 tokens; the message names both shapes.
  why = refusal([&] { attn::apply_rope(Ten4(xt::zeros<float>({1, 2, 6, 8})), t5, RopeStyle::interleaved); });
  CHECK(contains(why, "(1, 2, 6, 8)"));
  CHECK(contains(why, "(5, 8)"));
  for (const float theta : {0.0f, -10000.0f, std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()})
    CHECK(contains(refusal([=] { attn::rope_inv_freq(8, theta); }), "theta"));
  CHECK(contains(refusal([] { attn::rope_tables(2, 8, 10000.0f, (std::size_t{1} << 24) - 1); }), "2^24"));
  CHECK(refusal([] { attn::rope_tables(1, 8, 10000.0f, (std::size_t{1} << 24) - 1); }) == "");
}
