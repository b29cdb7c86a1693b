// The small-m kernels (src/core/small_gemm.*) against a double-precision loop and against sgemm,
// for every instruction set this CPU runs (the portable x86-64 copy always among them), one and
// two threads, row counts 1 to 16 and past the 16-row pass, widths that are not multiples of any
// vector or tile (n 37, k 131), k 1, n 1, and k longer than one cache stretch (256). Then the
// bf16 variant against the float32 one on the same values, and matmul / matmul_bt's dispatch rule.
//
// Tolerance: |c - reference| <= 2 sqrt(k) eps sum_p |a[i][p] b[p][j]|, eps = 2^-23. A float32 dot
// product of k terms added in any order errs by at most about k eps sum |terms| and in practice by
// about sqrt(k) eps sum |terms| (rounding errors of random sign); the bound allows twice that.
// A wrong term, a skipped one or a misplaced row errs by about one term, |a b| ~ 0.25 here,
// hundreds of times the bound at these sizes.
//
// Legend: m rows of a and c, k inner width, n output width.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/matmul.hpp"
#include "core/small_gemm.hpp"

using attn::SmallGemmIsa;
using attn::SmallGemmOptions;

namespace {

constexpr double kEps = 1.1920928955078125e-07;  // 2^-23, float32's machine epsilon

// Values in U(-1, 1) from a fixed LCG: the same numbers on every platform.
std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
  std::vector<float> v(count);
  std::uint64_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(s >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

// A product to check: a (m, k), b stored (n, k) when transposed else (k, n).
struct Case {
  std::size_t m, n, k;
  bool transposed;
  std::vector<float> a, b;
  Case(std::size_t m_, std::size_t n_, std::size_t k_, bool t, std::uint64_t seed)
      : m(m_), n(n_), k(k_), transposed(t), a(random_values(m_ * k_, seed)), b(random_values(n_ * k_, seed + 1)) {}
  float bv(std::size_t p, std::size_t j) const { return transposed ? b[j * k + p] : b[p * n + j]; }
  std::string name() const {
    return std::string(transposed ? "bt" : "b") + " m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
           std::to_string(k);
  }
};

// "" when c matches the double-precision product within the tolerance (times `slack`), else the
// worst element and by how much.
std::string check_against_double(const Case& cs, const std::vector<float>& c, double slack = 1.0) {
  double worst = 0.0;
  std::string where;
  for (std::size_t i = 0; i < cs.m; ++i)
    for (std::size_t j = 0; j < cs.n; ++j) {
      double exact = 0.0, size = 0.0;
      for (std::size_t p = 0; p < cs.k; ++p) {
        const double t = static_cast<double>(cs.a[i * cs.k + p]) * cs.bv(p, j);
        exact += t;
        size += std::fabs(t);
      }
      const double tol = slack * 2.0 * std::sqrt(static_cast<double>(cs.k)) * kEps * size;
      const double err = std::fabs(c[i * cs.n + j] - exact);
      if (!(err <= tol) && (where.empty() || err / tol > worst)) {  // NaN fails too
        worst = err / tol;
        where = cs.name() + ": c[" + std::to_string(i) + "][" + std::to_string(j) + "] = " +
                std::to_string(c[i * cs.n + j]) + ", exact " + std::to_string(exact) + ", tolerance " +
                std::to_string(tol);
      }
    }
  return where;
}

// The same product through sgemm.
std::vector<float> by_sgemm(const Case& cs) {
  std::vector<float> c(cs.m * cs.n, -7.0f);
  attn::sgemm(cs.m, cs.n, cs.k, 1.0f, cs.a.data(), cs.k, cs.b.data(), cs.transposed ? cs.k : cs.n, cs.transposed, 0.0f,
              c.data(), cs.n);
  return c;
}

// "" when the two agree elementwise within the double-precision tolerance taken twice (each may
// err by it).
std::string check_against_sgemm(const Case& cs, const std::vector<float>& c) {
  const std::vector<float> s = by_sgemm(cs);
  if (!check_against_double(cs, s).empty()) return "sgemm itself: " + check_against_double(cs, s);
  for (std::size_t q = 0; q < c.size(); ++q) {
    double size = 0.0;
    const std::size_t i = q / cs.n, j = q % cs.n;
    for (std::size_t p = 0; p < cs.k; ++p) size += std::fabs(static_cast<double>(cs.a[i * cs.k + p]) * cs.bv(p, j));
    const double tol = 4.0 * std::sqrt(static_cast<double>(cs.k)) * kEps * size;
    if (!(std::fabs(static_cast<double>(c[q]) - s[q]) <= tol))
      return cs.name() + ": c[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(c[q]) +
             ", sgemm " + std::to_string(s[q]);
  }
  return "";
}

std::vector<float> run(const Case& cs, const SmallGemmOptions& opt) {
  std::vector<float> c(cs.m * cs.n, -7.0f);  // not zero: the kernels must write every element
  if (cs.transposed)
    attn::small_gemm_bt(cs.m, cs.n, cs.k, cs.a.data(), cs.b.data(), c.data(), opt);
  else
    attn::small_gemm_b(cs.m, cs.n, cs.k, cs.a.data(), cs.b.data(), c.data(), opt);
  return c;
}

const std::size_t kRowCounts[] = {1, 2, 3, 7, 9, 16, 17, 35};
// (n, k): odd widths, n 1, k 1, and k past one 256-value stretch with a ragged end.
const std::size_t kWidths[][2] = {{37, 131}, {1, 131}, {37, 1}, {1, 1}, {100, 600}, {4, 16}, {70, 9}};

}  // namespace

TEST_CASE("small_gemm lists the instruction sets and always the portable one last") {
  const std::vector<SmallGemmIsa> isas = attn::small_gemm_isas();
  REQUIRE(!isas.empty());
  CHECK(isas.back() == SmallGemmIsa::baseline);
  CHECK(std::string(attn::small_gemm_isa_name(SmallGemmIsa::best)) == attn::small_gemm_isa_name(isas.front()));
  MESSAGE("this CPU runs the " << attn::small_gemm_isa_name(SmallGemmIsa::best) << " copy");
}

namespace {

// Every instruction set, 1 and 2 threads, every row count and width: b stored (n, k) when
// `transposed` (small_gemm_bt), else (k, n) (small_gemm_b).
void check_every_isa_and_thread_count(bool transposed) {
  for (SmallGemmIsa isa : attn::small_gemm_isas())
    for (std::size_t threads : {1, 2})
      for (std::size_t m : kRowCounts)
        for (const auto& w : kWidths) {
          const Case cs(m, w[0], w[1], transposed, m * 1000 + w[0] + w[1]);
          SmallGemmOptions opt;
          opt.isa = isa;
          opt.threads = threads;
          const std::string isa_name = attn::small_gemm_isa_name(isa);
          CAPTURE(isa_name);
          CAPTURE(threads);
          const std::vector<float> c = run(cs, opt);
          CHECK(check_against_double(cs, c) == "");
          CHECK(check_against_sgemm(cs, c) == "");
        }
}

}  // namespace

TEST_CASE("small_gemm_bt equals a double-precision loop and sgemm for every instruction set and thread count") {
  check_every_isa_and_thread_count(true);
}

TEST_CASE("small_gemm_b equals a double-precision loop and sgemm for every instruction set and thread count") {
  // n 100 covers an AVX-512 strip of 64 columns, whole vectors after it and single columns.
  check_every_isa_and_thread_count(false);
}

TEST_CASE("small_gemm gives the same bits on one thread and on several") {
  // Each output is one thread's, summed in a fixed order: the thread count must not show.
  for (SmallGemmIsa isa : attn::small_gemm_isas())
    for (bool transposed : {true, false}) {
      const Case cs(9, 1000, 300, transposed, 5);
      SmallGemmOptions one, several;
      one.isa = several.isa = isa;
      one.threads = 1;
      several.threads = 3;
      const std::string isa_name = attn::small_gemm_isa_name(isa);
          CAPTURE(isa_name);
      CAPTURE(transposed);
      CHECK(run(cs, one) == run(cs, several));
    }
}

TEST_CASE("SmallGemmOptions isa really selects another compiled copy") {
  // bt adds each dot product in 4, 8 or 16 partial sums, so over thousands of outputs some last
  // bit differs between any two copies; b adds in k order everywhere, with fused multiply-adds
  // in the AVX2 and AVX-512 copies (so those two agree to the bit) and unfused ones in the
  // baseline. Forcing an instruction set must change which code runs, or the tests above would
  // test one copy several times.
  const std::vector<SmallGemmIsa> isas = attn::small_gemm_isas();
  for (bool transposed : {true, false})
    for (std::size_t x = 0; x < isas.size(); ++x)
      for (std::size_t y = x + 1; y < isas.size(); ++y) {
        const Case cs(9, 1000, 300, transposed, 11);
        SmallGemmOptions ox, oy;
        ox.isa = isas[x];
        oy.isa = isas[y];
        const std::string first = attn::small_gemm_isa_name(isas[x]), second = attn::small_gemm_isa_name(isas[y]);
        CAPTURE(first);
        CAPTURE(second);
        CAPTURE(transposed);
        if (transposed || isas[y] == SmallGemmIsa::baseline)
          CHECK(run(cs, ox) != run(cs, oy));
        else
          CHECK(run(cs, ox) == run(cs, oy));
      }
}

TEST_CASE("small_gemm_bt_bf16 equals small_gemm_bt on the same values widened to float32") {
  // bf16 -> f32 is exact (the bits shifted left by 16), and the bf16 kernel widens in registers
  // and then does exactly what the float32 kernel does, so the results must be identical.
  for (SmallGemmIsa isa : attn::small_gemm_isas())
    for (std::size_t threads : {1, 2})
      for (std::size_t m : kRowCounts)
        for (const auto& w : kWidths) {
          Case cs(m, w[0], w[1], true, m * 7 + w[0] * 3 + w[1]);
          std::vector<std::uint16_t> b16(cs.b.size());
          for (std::size_t q = 0; q < cs.b.size(); ++q) {
            std::uint32_t bits;
            std::memcpy(&bits, &cs.b[q], 4);
            b16[q] = static_cast<std::uint16_t>(bits >> 16);  // truncated to bf16
            bits = static_cast<std::uint32_t>(b16[q]) << 16;
            std::memcpy(&cs.b[q], &bits, 4);  // the float32 that bf16 value stands for
          }
          SmallGemmOptions opt;
          opt.isa = isa;
          opt.threads = threads;
          const std::string isa_name = attn::small_gemm_isa_name(isa);
          CAPTURE(isa_name);
          CAPTURE(threads);
          CAPTURE(cs.name());
          std::vector<float> c16(m * cs.n, -7.0f);
          attn::small_gemm_bt_bf16(m, cs.n, cs.k, cs.a.data(), b16.data(), c16.data(), opt);
          CHECK(c16 == run(cs, opt));
          CHECK(check_against_double(cs, c16) == "");
        }
}

TEST_CASE("small_gemm with k 0 writes zeros and with m or n 0 writes nothing") {
  for (SmallGemmIsa isa : attn::small_gemm_isas()) {
    SmallGemmOptions opt;
    opt.isa = isa;
    const std::vector<float> a(3), b(5);
    const std::vector<std::uint16_t> b16(5);
    std::vector<float> c(15, -7.0f);
    attn::small_gemm_bt(3, 5, 0, a.data(), b.data(), c.data(), opt);
    CHECK(c == std::vector<float>(15, 0.0f));
    c.assign(15, -7.0f);
    attn::small_gemm_bt_bf16(3, 5, 0, a.data(), b16.data(), c.data(), opt);
    CHECK(c == std::vector<float>(15, 0.0f));
    c.assign(15, -7.0f);
    attn::small_gemm_b(3, 5, 0, a.data(), b.data(), c.data(), opt);
    CHECK(c == std::vector<float>(15, 0.0f));
    c.assign(15, -7.0f);
    attn::small_gemm_bt(0, 5, 4, a.data(), b.data(), c.data(), opt);
    attn::small_gemm_b(3, 0, 4, a.data(), b.data(), c.data(), opt);
    CHECK(c == std::vector<float>(15, -7.0f));
  }
}

TEST_CASE("matmul and matmul_bt take the small kernel only for few rows against a large weight") {
  using attn::kSmallGemmMaxRows;
  using attn::kSmallGemmMinWeight;
  CHECK(attn::takes_small_gemm(1, 1024, 1024));
  CHECK(attn::takes_small_gemm(kSmallGemmMaxRows, 3072, 3072));
  CHECK_FALSE(attn::takes_small_gemm(kSmallGemmMaxRows + 1, 3072, 3072));
  CHECK_FALSE(attn::takes_small_gemm(0, 3072, 3072));
  CHECK_FALSE(attn::takes_small_gemm(9, 1023, 1024));  // one row short of 2^20 values
  CHECK(kSmallGemmMinWeight == std::size_t{1} << 20);

  // Both sides of the rule through the functions Linear and Conv1D call: the small kernel's
  // result (within the tolerance), and sgemm's bits exactly where the rule says sgemm.
  for (bool transposed : {true, false})
    for (std::size_t T : {std::size_t{9}, kSmallGemmMaxRows, kSmallGemmMaxRows + 1})
      for (std::size_t n : {std::size_t{1024}, std::size_t{1023}}) {
        const Case cs(T, n, 1024, transposed, T + n);
        attn::Ten3 x = xt::empty<float>({std::size_t{1}, T, cs.k});  // (1, T, k)
        std::copy(cs.a.begin(), cs.a.end(), x.begin());
        attn::Mat w = transposed ? attn::Mat(xt::empty<float>({n, cs.k})) : attn::Mat(xt::empty<float>({cs.k, n}));
        std::copy(cs.b.begin(), cs.b.end(), w.begin());
        const attn::Ten3 y = transposed ? attn::matmul_bt(x, w) : attn::matmul(x, w);  // (1, T, n)
        const std::vector<float> got(y.begin(), y.end());
        CAPTURE(cs.name());
        if (attn::takes_small_gemm(T, n, cs.k)) {
          CHECK(check_against_double(cs, got) == "");
          std::vector<float> small(T * n);
          if (transposed)
            attn::small_gemm_bt(T, n, cs.k, cs.a.data(), cs.b.data(), small.data());
          else
            attn::small_gemm_b(T, n, cs.k, cs.a.data(), cs.b.data(), small.data());
          CHECK(got == small);
          // The two kernels add in different orders, so among thousands of outputs some last bit
          // differs: this is what shows that the small kernel, not sgemm, ran.
          CHECK(got != by_sgemm(cs));
        } else {
          CHECK(got == by_sgemm(cs));
        }
      }
}
