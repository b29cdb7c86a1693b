// --svg for curves (TensorItem::curve_x): a training loss becomes a line plot beside the
// heatmaps. Well-formed XML (expat), a log axis when the curve falls by more than a factor of 20
// and a linear one otherwise, non-finite points breaking the line, and SvgSink writing the file
// under the stage's name.
#include <doctest/doctest.h>

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "report/svg_sink.hpp"
#include "xml_check.hpp"

using namespace attn::report;
using attn::testing::check_xml;

namespace {

Report lesson_with_curve(std::vector<float> values) {
  Report r;
  r.header.lesson = "align";
  r.stage("The task");
  auto& s = r.stage("Training <fast> & \"small\"");  // XML's special characters in the subtitle
  attn::Vec v = xt::empty<float>({values.size()});
  std::copy(values.begin(), values.end(), v.begin());
  s.curve("losses", v, "step");
  return r;
}

std::string curve_svg(const Report& r) {
  const Stage& s = r.stages()[1];
  return svg_curve(r.header, s, r.stages().size(), std::get<TensorItem>(s.items[0]));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a falling loss: well-formed, one line through every point, a logarithmic axis") {
  std::vector<float> loss;
  for (int i = 0; i < 300; ++i) loss.push_back(3.2f * std::exp(-0.025f * static_cast<float>(i)));  // 3.2 .. 0.0018
  const std::string svg = curve_svg(lesson_with_curve(loss));
  const auto xml = check_xml(svg);
  CHECK(xml.error == "");
  CHECK(xml.root == "svg");
  CHECK(xml.count.at("polyline") == 1);
  CHECK(count(svg, ",") >= 300);  // one "x,y" pair per point
  CHECK(contains(svg, "logarithmic scale"));
  CHECK(contains(svg, ">0.001<"));  // decade ticks from 0.001 to 10
  CHECK(contains(svg, ">10<"));
  CHECK(contains(svg, ">300<"));    // the last step is a tick
  CHECK(contains(svg, "stage 2/2"));
  CHECK(contains(svg, "&lt;fast&gt; &amp; &quot;small&quot;"));
}

TEST_CASE("a curve within a factor of 20 keeps a linear axis") {
  const std::string svg = curve_svg(lesson_with_curve({1.0f, 0.8f, 0.9f, 0.7f, 0.6f}));
  CHECK(check_xml(svg).error == "");
  CHECK_FALSE(contains(svg, "logarithmic"));
  CHECK(contains(svg, ">0.8<"));  // round ticks inside the data's range, 0.6 .. 1
}

TEST_CASE("non-finite points break the line, and an all-NaN or one-point curve still draws") {
  const std::string svg = curve_svg(lesson_with_curve({2.0f, 1.0f, NAN, 0.5f, 0.25f, INFINITY, 0.1f}));
  CHECK(check_xml(svg).error == "");
  CHECK(check_xml(svg).count.at("polyline") == 3);
  const std::string none = curve_svg(lesson_with_curve({NAN, NAN}));
  CHECK(check_xml(none).error == "");
  CHECK(contains(none, "no finite values"));
  CHECK(check_xml(curve_svg(lesson_with_curve({0.5f}))).error == "");
}

TEST_CASE("SvgSink writes the curve as <lesson>-stageNN-<name>.svg") {
  char tmpl[] = "/tmp/attn-svg-curve-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  SvgSink sink(dir);
  deliver(lesson_with_curve({3.0f, 2.0f, 1.0f}), sink);
  sink.commit();
  REQUIRE(sink.written() == std::vector<std::string>{"align-stage02-losses.svg"});
  std::ifstream in(dir + "/align-stage02-losses.svg");
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(check_xml(ss.str()).error == "");
  std::remove((dir + "/align-stage02-losses.svg").c_str());
  CHECK(rmdir(dir.c_str()) == 0);  // nothing else was left behind
}
