// Checks for exercise apply-rope (lessons/exercises/apply_rope.cpp): Llama's rotary position
// embedding of a (T, d_k) matrix at positions offset .. offset + T - 1, against the worked
// example, values computed in PyTorch 1.13, what `attn lesson rope` printed, the PyTorch fixture
// tests/data/rope__* and attn's own apply_rope.
//
// Shape legend: B batch, h heads, T tokens, d_k head width (even), P = d_k / 2 pairs.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/rope.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/apply_rope.cpp.
attn::Mat apply_rope(const attn::Mat& x, std::size_t offset, float theta);
}  // namespace exercise

using attn::Mat;
using attn::Ten4;
using attn::test::load_fixture;
using exercise::apply_rope;
using exercise::test::same;

namespace {

// Head `head` of a (1, h, T, d_k) fixture as a (T, d_k) matrix.
Mat head_of(const Ten4& t, std::size_t head) {
  return xt::view(t, 0, head, xt::all(), xt::all());  // (T, d_k)
}

}  // namespace

TEST_CASE("the worked example: position 0 stays, position 1 turns by 1 radian") {
  const Mat x = {{1, 0}, {1, 0}};  // (2, 2)
  CHECK(same(apply_rope(x, 0, 10000.0f), Mat{{1, 0}, {0.54030234f, 0.84147096f}}, 1e-6));
  CHECK(same(apply_rope(x, 1, 10000.0f), Mat{{0.54030234f, 0.84147096f}, {-0.41614684f, 0.90929741f}}, 1e-6));
}

TEST_CASE("two pairs: (0, 2) turns by 1 rad, (1, 3) by 0.1 rad (theta 100, position 1; PyTorch)") {
  // inv_freq = 1 / 100^([0, 2] / 4) = [1, 0.1]; pairs are (i, i + 2), not neighbours.
  CHECK(same(apply_rope(Mat{{1, 2, 3, 4}}, 1, 100.0f), Mat{{-1.98411059f, 1.59067464f, 2.46237803f, 4.17968369f}},
             1e-5));
}

TEST_CASE("Llama 3's theta 500000 at positions 100 .. 102 (values printed by PyTorch 1.13)") {
  const Mat x = {{0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, 0.125f, -0.5f},
                 {1.0f, 0.0f, -2.0f, 0.5f, 0.0f, -1.0f, 1.0f, 0.25f},
                 {-0.25f, 0.75f, 1.25f, -1.5f, 2.0f, 0.5f, -0.125f, 1.0f}};  // (3, 8)
  const Mat expected = {
      {0.05138519f, 1.68479729f, 0.22988535f, 2.00263095f, -0.89992195f, -0.64145029f, 0.15898968f, -0.48935640f},
      {0.89200485f, -0.61044043f, -2.12198305f, 0.49864992f, 0.45202580f, 0.79206216f, 0.70511556f, 0.25268212f},
      {-2.01504993f, -0.25651947f, 1.25498629f, -1.50540257f, -0.04553530f, -0.86411673f, 0.05598578f, 0.99184835f}};
  CHECK(same(apply_rope(x, 100, 500000.0f), expected, 1e-5));
}

TEST_CASE("attn lesson rope, stage 3: q_rope and k_rope of the default run (seed 0)") {
  // The lesson's q and k: torch.manual_seed(0); torch.rand(6, 8) * 2 - 1, twice.
  attn::TorchGenerator gen(0);
  const Mat q = gen.rand(6, 8) * 2.0f - 1.0f;  // (T, d_k)
  const Mat k = gen.rand(6, 8) * 2.0f - 1.0f;  // (T, d_k)
  const Mat q_rope = {{-0.0075, 0.5364, -0.8230, -0.7359, -0.3852, 0.2682, -0.0198, 0.7929},   // Your
                      {0.7559, 0.3294, -0.2981, -0.1966, -0.5909, -0.6326, -0.4152, 0.0368},   // journey
                      {-0.4948, 0.4231, -0.6737, -0.4370, 0.2083, 0.9330, -0.2193, 0.7474},    // starts
                      {0.2484, 0.1759, 0.9168, -0.9303, 0.6005, -0.2106, -0.3625, 0.8612},     // with
                      {-0.0181, -0.7587, -0.7159, -0.9385, 0.8721, 0.6125, 0.4179, 0.4809},    // one
                      {-0.6780, -0.2028, 0.1374, -0.9366, -0.2554, -0.6982, 0.6386, 0.5816}};  // step
  const Mat k_rope = {{-0.4435, -0.0361, 0.6396, 0.9941, 0.3969, 0.1351, 0.6705, -0.5888},
                      {-0.2801, -0.8116, -0.6871, -0.5169, 0.4013, 0.3227, -0.5993, 0.3016},
                      {-0.7926, -0.3145, 0.0536, 0.2324, 0.2410, 0.9160, -0.7697, -0.3660},
                      {-0.4172, 1.0485, 0.8671, 0.8842, -0.1416, -0.5859, 0.1181, -0.6230},
                      {0.7508, 0.8840, 0.7663, -0.9957, 0.5830, 0.1908, -0.1340, -0.4617},
                      {0.7956, -0.6991, 0.4156, 0.5089, -0.1657, 0.0442, -0.9702, -0.6462}};
  CHECK(same(apply_rope(q, 0, 10000.0f), q_rope, 5e-5));  // half the last printed digit
  CHECK(same(apply_rope(k, 0, 10000.0f), k_rope, 5e-5));
}

TEST_CASE("attn lesson rope, stage 6: q_rope_shifted, the same q at positions 5 .. 10") {
  attn::TorchGenerator gen(0);
  const Mat q = gen.rand(6, 8) * 2.0f - 1.0f;  // (T, d_k)
  const Mat printed = {{-0.3715, 0.3422, -0.8210, -0.7399, -0.1021, 0.4925, -0.0609, 0.7892},
                       {-0.3521, 0.5923, -0.2770, -0.1968, -0.8925, -0.3972, -0.4296, 0.0359},
                       {0.0594, -0.0760, -0.6619, -0.4407, 0.5336, 1.0217, -0.2527, 0.7452},
                       {0.6463, 0.2553, 0.9337, -0.9346, -0.0679, -0.1005, -0.3162, 0.8566},
                       {0.8311, -0.9595, -0.7359, -0.9409, 0.2647, 0.1737, 0.3816, 0.4762},
                       {-0.4372, 0.1568, 0.1054, -0.9395, 0.5777, -0.7100, 0.6447, 0.5770}};
  CHECK(same(apply_rope(q, 5, 10000.0f), printed, 5e-5));
}

TEST_CASE("PyTorch's fixture (seed 3, 2 heads of (6, 8)): q_rope_half and k_rope_half, head by head") {
  const Ten4 q = load_fixture<4>("rope__q.npy"), k = load_fixture<4>("rope__k.npy");  // (1, 2, 6, 8)
  const Ten4 q_rope = load_fixture<4>("rope__q_rope_half.npy");                       // (1, 2, 6, 8)
  const Ten4 k_rope = load_fixture<4>("rope__k_rope_half.npy");                       // (1, 2, 6, 8)
  for (std::size_t head = 0; head < 2; ++head) {
    CAPTURE(head);
    CHECK(same(apply_rope(head_of(q, head), 0, 10000.0f), head_of(q_rope, head)));
    CHECK(same(apply_rope(head_of(k, head), 0, 10000.0f), head_of(k_rope, head)));
  }
}

TEST_CASE("only the distance matters: your rotation at positions 5 .. 10 gives PyTorch's scores_shifted") {
  const Ten4 q = load_fixture<4>("rope__q.npy"), k = load_fixture<4>("rope__k.npy");  // (1, 2, 6, 8)
  const Ten4 shifted = load_fixture<4>("rope__scores_shifted.npy");                  // (1, 2, 6, 6)
  const Ten4 unshifted = load_fixture<4>("rope__scores_half.npy");                   // (1, 2, 6, 6)
  for (std::size_t head = 0; head < 2; ++head) {
    CAPTURE(head);
    const Mat scores = attn::matmul_bt(apply_rope(head_of(q, head), 5, 10000.0f),
                                       apply_rope(head_of(k, head), 5, 10000.0f));  // (T, d_k) @ (d_k, T) -> (T, T)
    CHECK(same(scores, head_of(shifted, head)));
    CHECK(same(scores, head_of(unshifted, head)));  // the positions moved, the scores did not
  }
}

TEST_CASE("a long, wide run matches attn's own apply_rope (T 40, d_k 64, positions 1000 .. 1039)") {
  Mat x = xt::empty<float>({std::size_t{40}, std::size_t{64}});  // (T, d_k)
  attn::TorchGenerator(11).uniform_(x.data(), x.size(), -1.0f, 1.0f);
  Ten4 x4 = xt::empty<float>({std::size_t{1}, std::size_t{1}, std::size_t{40}, std::size_t{64}});  // (1, 1, T, d_k)
  std::copy(x.begin(), x.end(), x4.begin());
  const Ten4 expected = attn::apply_rope(x4, attn::rope_tables(40, 64, 500000.0f, 1000), attn::RopeStyle::half);
  // Near position 1000 one float32 step of the angle is 6e-5 rad: an angle computed in double
  // instead of float may land a step away, so this case allows 1e-4.
  CHECK(same(apply_rope(x, 1000, 500000.0f), head_of(expected, 0), 1e-4));
}

TEST_CASE("no tokens: T = 0 gives a (0, d_k) tensor") {
  const Mat none = xt::zeros<float>({std::size_t{0}, std::size_t{8}});  // (0, d_k)
  CHECK(same(apply_rope(none, 0, 10000.0f), none, 0));
}

TEST_CASE("an odd d_k is refused with std::invalid_argument: the last dimension has no partner") {
  const Mat odd = xt::zeros<float>({std::size_t{3}, std::size_t{7}});  // (T, 7)
  CHECK_THROWS_AS(apply_rope(odd, 0, 10000.0f), std::invalid_argument);
}
