// The text plot of a curve (report/plot.*), as the text sink draws a loss curve, and how the
// other sinks see a curve (a 1-D tensor like any other).
#include <doctest/doctest.h>

#include <sstream>

#include "report/manifest.hpp"
#include "report/plot.hpp"
#include "report/text_sink.hpp"

using namespace attn;
using namespace attn::report;

namespace {

TensorItem curve_of(const std::vector<float>& v) {
  TensorItem t;
  t.name = "loss";
  t.shape = {v.size()};
  t.values = v;
  t.curve_x = "step";
  return t;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("a falling curve: the first point on the top row, the last on the bottom, labelled") {
  const std::string p = render_curve(curve_of({4, 3, 2, 1, 0}), 80, 5);
  const auto l = lines(p);
  REQUIRE(l.size() == 7);  // 5 rows, the axis, the step labels
  CHECK(l[0] == "  4.0000 |*");
  CHECK(l[1] == "         | *");
  CHECK(l[4] == "  0.0000 |    *");
  CHECK(l[5] == "         +-----");
  CHECK(l[6].find("1") != std::string::npos);
  CHECK(l[6].substr(l[6].size() - 6) == "5 step");
}

TEST_CASE("many points share columns, lines stay within the width, non-finite points are skipped") {
  std::vector<float> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 2.0f / (1.0f + static_cast<float>(i) / 50.0f);
  v[500] = NAN;
  const std::string p = render_curve(curve_of(v), 60, 8);
  for (const auto& l : lines(p)) CHECK(l.size() <= 60);
  CHECK(lines(p).back().find("1000 step") != std::string::npos);
  CHECK(render_curve(curve_of({NAN, INFINITY})) == "  (no finite values to plot)\n");
  // A flat curve sits on the bottom row.
  CHECK(lines(render_curve(curve_of({1, 1, 1}), 80, 3))[2] == "  1.0000 |***");
}

TEST_CASE("the text sink draws a curve and lists a kept tensor without printing either, and JSON keeps both") {
  Report r;
  r.header = {"x", "X", "", {}, {}};
  Vec loss = xt::zeros<float>({3});
  loss(0) = 2.5f;
  r.stage("Training").curve("loss", loss, "step").keep("weights", loss);
  std::ostringstream out;
  TextSink sink(out, {});
  deliver(r, sink);
  CHECK(out.str().find("loss (3,)\n  2.5000 |*") != std::string::npos);
  CHECK(out.str().find("tensor(") == std::string::npos);  // neither the curve nor the kept tensor prints values
  CHECK(out.str().find("out: loss (3,), weights (3,)") != std::string::npos);
  const std::string json = manifest_json(r.header, "attn lesson x", r.stages(), true);
  CHECK(json.find("\"curve_x\": \"step\"") != std::string::npos);
  CHECK(json.find("\"name\": \"weights\", \"shape\": [3], \"values\": [2.5, 0, 0]") != std::string::npos);
}
