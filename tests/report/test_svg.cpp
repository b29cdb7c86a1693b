// The --svg pictures: well-formed XML (parsed by expat, as a browser would refuse a broken file),
// one annotated cell per weight, stable file names, and files that appear whole or not at all.
#include <doctest/doctest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/colormap.hpp"
#include "report/staging.hpp"
#include "report/svg_sink.hpp"
#include "xml_check.hpp"

using namespace attn::report;
using attn::Shape;
using attn::testing::check_xml;

namespace {

Report lesson_with(TensorItem t) {
  Report r;
  r.header.lesson = "causal";
  r.stage("Inputs");
  auto& s = r.stage("Softmax of the masked, scaled scores", "attn_weights = softmax(...)");
  s.items.emplace_back(std::move(t));
  return r;
}

TensorItem matrix(Shape shape, Labels tokens) {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = shape;
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  for (std::size_t i = 0; i < n; ++i) t.values.push_back(static_cast<float>(i % 5) / 10.0f);
  t.row_labels = t.col_labels = std::move(tokens);
  t.attention = true;
  return t;
}

std::string picture(const Report& r, std::size_t panel = 0) {
  const Stage& s = r.stages()[1];
  const auto& t = std::get<TensorItem>(s.items[0]);
  const PanelSet set = panels_of(t);
  return svg_picture(r.header, s, r.stages().size(), t, set, set.panels.at(panel));
}

std::string temp_dir() {
  char tmpl[] = "/tmp/attn-svg-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.insert(e->d_name);
    closedir(d);
  }
  return out;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("an SVG heatmap is well-formed XML with one cell per weight") {
  const Report r = lesson_with(matrix({3, 3}, {"Your", "journey", "starts"}));
  const std::string svg = picture(r);
  const auto x = check_xml(svg);
  CHECK(x.error == "");
  CHECK(x.root == "svg");
  // 9 cells, the background, the grid frame and the colour bar; each cell and the bar have a
  // tooltip, and so has the document.
  CHECK(x.count.at("rect") == 9 + 3);
  CHECK(x.count.at("title") == 9 + 1 + 1);
  CHECK(contains(svg, ">journey</text>"));                            // tick labels
  CHECK(contains(svg, "attn lesson causal, stage 2/2: Softmax of the masked, scaled scores"));
  CHECK(contains(svg, "linearGradient"));                             // the colour bar
  CHECK(contains(svg, ">0.40</text>"));                               // values in the cells
  CHECK(contains(svg, ">0</text>"));                                  // an exact 0 reads "0"
}

TEST_CASE("tokens with XML's special characters, control bytes or broken UTF-8 still give XML") {
  const Report r = lesson_with(matrix({3, 3}, {"<b>&amp;", "\"quoted\" 'single'", "bad\x01\xff\xc3"}));
  const std::string svg = picture(r);
  const auto x = check_xml(svg);
  CHECK(x.error == "");
  CHECK(contains(svg, "&lt;b&gt;&amp;amp;"));
}

TEST_CASE("a NaN row is drawn in grey with a note, and the file stays well-formed") {
  TensorItem t = matrix({2, 2}, {"a", "b"});
  t.values[2] = t.values[3] = std::nanf("");
  const Report r = lesson_with(t);
  const std::string svg = picture(r);
  CHECK(check_xml(svg).error == "");
  CHECK(contains(svg, ">nan</text>"));
  CHECK(contains(svg, "grey cells are nan"));
}

TEST_CASE("multi-head weights: one picture per [b, h], titled with the head") {
  const Report r = lesson_with(matrix({1, 2, 4, 4}, {"a", "b", "c", "d"}));
  const std::string svg = picture(r, 1);
  CHECK(check_xml(svg).error == "");
  CHECK(contains(svg, "attn_weights[0, 1]: batch 0, head 1"));
  CHECK(contains(svg, "one colour scale for all 2 matrices"));
}

TEST_CASE("large matrices stay well-formed, values are written only where they are legible") {
  const Report r = lesson_with(matrix({60, 60}, {}));
  const std::string svg = picture(r);
  const auto x = check_xml(svg);
  CHECK(x.error == "");
  CHECK(x.count.at("rect") == 3600 + 3);
  CHECK_FALSE(contains(svg, ">0.40</text>"));  // cells too small to annotate
}

TEST_CASE("file names: lesson, zero-padded stage, tensor, batch and head") {
  CHECK(svg_file_name("causal", 6, 10, "attn_weights", {}) == "causal-stage06-attn_weights.svg");
  CHECK(svg_file_name("heads", 9, 14, "attn_weights", {0, 1}) == "heads-stage09-attn_weights-b0-h1.svg");
  CHECK(svg_file_name("self-attention", 4, 9, "attn_weights", {1}) == "self-attention-stage04-attn_weights-b1.svg");
  CHECK(svg_file_name("x", 7, 120, "w * tril", {}) == "x-stage007-w___tril.svg");
  CHECK(svg_file_name("x", 1, 3, "t", {1, 2, 3}) == "x-stage01-t-i1-i2-i3.svg");
}

TEST_CASE("SvgSink stages every panel under a temporary name and commit() moves each to its own") {
  const std::string dir = temp_dir();
  Report r;
  r.header.lesson = "causal";
  r.stage("Inputs");
  auto& s = r.stage("Weights");
  s.items.emplace_back(matrix({1, 2, 3, 3}, {"a", "b", "c"}));
  TensorItem single = matrix({3, 3}, {"a", "b", "c"});
  single.name = "alignment";
  s.items.emplace_back(single);
  TensorItem plain = matrix({3, 3}, {});
  plain.attention = false;  // not attention weights: no picture
  plain.name = "scores";
  s.items.emplace_back(plain);

  const std::set<std::string> expected = {"causal-stage02-attn_weights-b0-h0.svg", "causal-stage02-attn_weights-b0-h1.svg",
                                          "causal-stage02-alignment.svg"};
  {
    // Destroyed before commit() (a later output failed): nothing stays.
    SvgSink dropped(dir);
    deliver(r, dropped);
    CHECK(dropped.written().size() == 3);
  }
  CHECK(files_in(dir).empty());
  SvgSink sink(dir);
  deliver(r, sink);
  // Until commit(), only the temporary names: staging.hpp's ".<name>.tmp-<pid>".
  std::set<std::string> staged;
  for (const auto& f : expected) staged.insert("." + f + ".tmp-" + std::to_string(getpid()));
  CHECK(files_in(dir) == staged);
  sink.commit();
  CHECK(files_in(dir) == expected);
  CHECK(sink.written().size() == 3);
  for (const auto& f : expected) {
    std::ifstream in(dir + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    CAPTURE(f);
    CHECK(check_xml(ss.str()).error == "");
  }
  for (const auto& f : expected) std::remove((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

TEST_CASE("the directory is checked before anything is written") {
  const std::string dir = temp_dir();
  CHECK(svg_dir_problem(dir) == "");
  CHECK(svg_dir_problem(dir + "/new/nested") == "");  // missing directories will be created
  CHECK(svg_dir_problem("") == "an empty path");
  const std::string file = dir + "/file.txt";
  std::ofstream(file) << "x";
  CHECK(contains(svg_dir_problem(file), "not a directory"));
  CHECK(contains(svg_dir_problem(file + "/below"), "which is not a directory"));
  MadeDirs(dir + "/new/nested").keep();  // what --svg makes them with (cli/pictures.cpp)
  struct stat st;
  CHECK(stat((dir + "/new/nested").c_str(), &st) == 0);
  rmdir((dir + "/new/nested").c_str());
  rmdir((dir + "/new").c_str());
  std::remove(file.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("matrices larger than kMaxSvgSide are named before any file is written") {
  CHECK(svg_size_problem(lesson_with(matrix({4, 4}, {}))) == "");
  CHECK(svg_size_problem(lesson_with(matrix({1, 300, 300}, {}))) == "attn_weights (1, 300, 300)");
}

// --- --heatmap-scale row and --head (docs/pictures.md) ----------------------------------------

namespace {

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fill of the cell whose tooltip starts with `pair` ("b -&gt; a", escaped as in the file).
std::string fill_of(const std::string& svg, const std::string& pair) {
  const std::size_t at = svg.find("<title>" + pair + ": ");
  if (at == std::string::npos) return "";
  const std::size_t fill = svg.rfind("fill=\"", at);
  return svg.substr(fill + 6, 7);
}

}  // namespace

TEST_CASE("--heatmap-scale row: a flat row spans the colour bar, ticked 0 (row min) to 1 (row max)") {
  TensorItem t = matrix({2, 3}, {"a", "b", "c"});
  t.values = {0.9f, 0.1f, 0.0f,  //
              0.32f, 0.33f, 0.35f};
  t.row_labels = {"a", "b"};
  const Report r = lesson_with(t);
  const Stage& s = r.stages()[1];
  PanelView view;
  view.scale = HeatmapScale::row;
  const PanelSet set = panels_of(t, view);
  const std::string svg = svg_picture(r.header, s, r.stages().size(), t, set, set.panels[0]);
  CHECK(check_xml(svg).error == "");
  CHECK(fill_of(svg, "b -&gt; a") == hex(viridis(0.0)));  // the row's own min: the dark end
  CHECK(fill_of(svg, "b -&gt; c") == hex(viridis(1.0)));  // its own max: the bright end
  CHECK(contains(svg, "<title>scale: each row from its smallest weight to its largest (bright); exactly 0 is the darkest</title>"));
  CHECK(contains(svg, "rows attend to columns; shape 2 x 3; each row from its smallest weight to its largest (bright); exactly 0 is the darkest"));
  CHECK(contains(svg, ">0 = row min</text>"));
  CHECK(contains(svg, ">1 = row max</text>"));
  CHECK_FALSE(contains(svg, "to 0.9000 (bright)"));  // the bar is not the shared scale (0 to 0.9)

  // The shared scale (the default) puts that row in one band near the dark end, with numbers.
  const PanelSet global = panels_of(t);
  const std::string g = svg_picture(r.header, s, r.stages().size(), t, global, global.panels[0]);
  CHECK(fill_of(g, "b -&gt; c") == hex(viridis(static_cast<double>(0.35f) / static_cast<double>(0.9f))));
  CHECK(contains(g, ">0.8</text>"));
  CHECK(contains(g, "<title>scale: from 0.0000 (dark) to 0.9000 (bright), the largest value drawn</title>"));
  CHECK_FALSE(contains(g, "row min"));
  CHECK_FALSE(contains(g, "own min"));
}

TEST_CASE("SvgSink with --head mean draws one picture per batch entry, with --head N only head N") {
  const std::string dir = temp_dir();
  Report r;
  r.header.lesson = "heads";
  r.stage("Inputs");
  auto& s = r.stage("Weights");
  s.items.emplace_back(matrix({2, 2, 3, 3}, {"a", "b", "c"}));

  PanelView mean;
  mean.heads = PanelView::Heads::mean;
  SvgSink sink(dir, {}, mean);
  deliver(r, sink);
  sink.commit();
  const std::set<std::string> expected = {"heads-stage02-attn_weights-mean-b0.svg", "heads-stage02-attn_weights-mean-b1.svg"};
  CHECK(files_in(dir) == expected);
  const std::string svg = read_whole(dir + "/heads-stage02-attn_weights-mean-b1.svg");
  CHECK(check_xml(svg).error == "");
  CHECK(contains(svg, "attn_weights[1]: batch 1, mean of 2 heads"));
  // Cell (a -> b) of batch 1: the mean of heads 0 and 1, from the tensor's values.
  const auto& t = std::get<TensorItem>(r.stages()[1].items[0]);
  const double m = (t.values[(1 * 2 + 0) * 9 + 1] + t.values[(1 * 2 + 1) * 9 + 1]) / 2.0;
  CHECK(contains(svg, "<title>a -&gt; b: " + fixed(m, 4) + "</title>"));
  for (const auto& f : expected) std::remove((dir + "/" + f).c_str());

  PanelView one;
  one.heads = PanelView::Heads::one;
  one.head = 1;
  SvgSink only(dir, {}, one);
  deliver(r, only);
  only.commit();
  CHECK(files_in(dir) == std::set<std::string>{"heads-stage02-attn_weights-b0-h1.svg", "heads-stage02-attn_weights-b1-h1.svg"});
  for (const auto& f : files_in(dir)) std::remove((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

// --- colour-bar ticks, axis titles, training ------------------------------------------------

namespace {

// The colour bar's tick labels, in order (lowest first), as the SVG carries them.
std::vector<std::string> bar_labels(const std::string& svg) {
  std::vector<std::string> out;
  const std::size_t from = svg.find("<g class=\"bar-ticks\"");
  const std::size_t to = svg.find("</g>", from);
  if (from == std::string::npos || to == std::string::npos) return out;
  const std::string mark = "dy=\"0.35em\">";
  for (std::size_t at = svg.find(mark, from); at != std::string::npos && at < to; at = svg.find(mark, at + 1)) {
    const std::size_t start = at + mark.size();
    out.push_back(svg.substr(start, svg.find('<', start) - start));
  }
  return out;
}

// The text of the element carrying class="NAME" ("" when there is none).
std::string text_of_class(const std::string& svg, const std::string& name) {
  const std::size_t at = svg.find("class=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const std::size_t start = svg.find('>', at) + 1;
  return svg.substr(start, svg.find('<', start) - start);
}

// Whether `step` is 1, 2 or 5 times a power of ten (up to rounding), and `v` a whole multiple of it.
bool round_step(double step) {
  if (!(step > 0)) return false;
  const double e = std::floor(std::log10(step) + 1e-9);
  const double m = step / std::pow(10.0, e);
  for (double want : {1.0, 2.0, 5.0})
    if (std::fabs(m - want) < 1e-6) return true;
  return false;
}
bool multiple_of(double v, double step) { return std::fabs(v / step - std::round(v / step)) < 1e-6; }

// Checks what the brief promises of a bar's ticks on [lo, hi]: 4 to 7 of them, inside the range,
// evenly spaced by a 1-2-5 step, every one a multiple of it, labels as short as the values.
void check_round_ticks(const std::vector<std::string>& labels, double lo, double hi) {
  CAPTURE(lo);
  CAPTURE(hi);
  REQUIRE(labels.size() >= 4);
  CHECK(labels.size() <= 7);
  std::vector<double> v;
  for (const auto& l : labels) {
    CAPTURE(l);
    char* end = nullptr;
    v.push_back(std::strtod(l.c_str(), &end));
    CHECK(end != l.c_str());
    // No float noise: a label is at most a sign, four significant digits and an exponent or point.
    CHECK(l.find("000000") == std::string::npos);
    CHECK(l.find("99999") == std::string::npos);
  }
  const double step = v[1] - v[0];
  CAPTURE(step);
  CHECK(round_step(step));
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(labels[i]);
    CHECK(v[i] >= lo - 1e-12 * std::fabs(hi - lo));
    CHECK(v[i] <= hi + 1e-12 * std::fabs(hi - lo));
    CHECK(multiple_of(v[i], step));
    if (i) CHECK(std::fabs((v[i] - v[i - 1]) - step) <= 1e-9 * step);
  }
}

}  // namespace

TEST_CASE("round_ticks: 4 to 7 round values inside the range, written without float noise") {
  // Spans from 1e-6 to 1e4 in small ratios, from 0 (weights) and around it (scores).
  for (double hi = 1e-6; hi < 1e4; hi *= 1.0371) {
    for (double lo : {0.0, -hi * 0.37, hi * 0.1}) {
      std::vector<std::string> labels;
      for (const Tick& k : round_ticks(lo, hi)) labels.push_back(k.label);
      const std::size_t n = labels.size();
      if (n < 4 || n > 7) {
        // Only where no 1-2-5 or 2.5 step can give 4..7 (never with lo = 0: tested below).
        CHECK(lo != 0.0);
        continue;
      }
      const auto ticks = round_ticks(lo, hi);
      const double step = ticks[1].value - ticks[0].value;
      const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
      if (std::fabs(m - 2.5) < 1e-6) continue;  // the fallback step; checked by the case below
      check_round_ticks(labels, lo, hi);
    }
  }
  // Familiar scales, exactly.
  auto labels = [](double lo, double hi) {
    std::string s;
    for (const Tick& k : round_ticks(lo, hi)) s += (s.empty() ? "" : " ") + k.label;
    return s;
  };
  CHECK(labels(0.0, 1.0) == "0 0.2 0.4 0.6 0.8 1");
  CHECK(labels(0.0, 0.6) == "0 0.2 0.4 0.6");
  CHECK(labels(0.0, 0.37) == "0 0.1 0.2 0.3");
  CHECK(labels(0.0, 0.0007) == "0 2e-4 4e-4 6e-4");  // tiny: exponents, not 0.0002
  CHECK(labels(0.0, 0.003) == "0 0.001 0.002 0.003");
  // -3..12: steps 2 (8 ticks) and 5 (3) miss, so 2.5.
  CHECK(labels(-3.0, 12.0) == "-2.5 0 2.5 5 7.5 10");
  // 0..1.44: steps 0.2 (8 ticks) and 0.5 (3) miss 4..7, so 0.25 (0 .. 1.25, 6 ticks).
  CHECK(labels(0.0, 1.44) == "0 0.25 0.5 0.75 1 1.25");
  // No step to count through: the ends (and no overflow of the tick counter).
  CHECK(round_ticks(1e20, 1e20 + 1e6).size() == 2);
  CHECK(round_ticks(0.5, 0.5).size() == 1);
}

TEST_CASE("the picture names its axes and its colour bar, with round ticks inside the scale") {
  TensorItem t = matrix({3, 3}, {"a", "b", "c"});
  t.values = {1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.2f, 0.37f, 0.43f};
  const Report r = lesson_with(t);
  const std::string svg = picture(r);
  CHECK(check_xml(svg).error == "");
  CHECK(text_of_class(svg, "row-axis") == "queries");
  CHECK(text_of_class(svg, "col-axis") == "keys");
  CHECK(text_of_class(svg, "bar-title") == "attention weight");
  CHECK(bar_labels(svg) == std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"});
  check_round_ticks(bar_labels(svg), 0.0, 1.0);

  // The lesson's words replace the defaults.
  t.row_axis = "target words";
  t.col_axis = "source words";
  t.value_name = "alpha (attention weight)";
  t.values = {0.9f, 0.05f, 0.05f, 0.1f, 0.3f, 0.6f, 0.2f, 0.2f, 0.6f};
  const std::string named = picture(lesson_with(t));
  CHECK(text_of_class(named, "row-axis") == "target words");
  CHECK(text_of_class(named, "col-axis") == "source words");
  CHECK(text_of_class(named, "bar-title") == "alpha (attention weight)");
  check_round_ticks(bar_labels(named), 0.0, static_cast<double>(0.9f));
  CHECK(bar_labels(named).back() == "0.8");  // the top of the scale is 0.9: no tick past it

  // With --heatmap-scale row the bar is each row's own range: 0 (its min) to 1 (its max).
  PanelView view;
  view.scale = HeatmapScale::row;
  const PanelSet set = panels_of(t, view);
  const std::string row = svg_picture(r.header, r.stages()[1], 2, t, set, set.panels[0]);
  const auto row_labels = bar_labels(row);
  CHECK(row_labels.front() == "0 = row min");
  CHECK(row_labels.back() == "1 = row max");
  check_round_ticks(row_labels, 0.0, 1.0);
  CHECK(contains(row, ">place in its row&apos;s range</text>"));
}

TEST_CASE("titles do not run into the tick labels, however long the labels are") {
  TensorItem t = matrix({2, 3}, {"a", "b", "c"});
  t.row_labels = {"a-rather-long-query-label", "b"};
  t.col_labels = {"x", "y", "a-very-long-key-label-indeed"};
  const std::string svg = picture(lesson_with(t));
  auto number_after = [&](std::size_t from, const std::string& attr) {
    const std::size_t at = svg.find(attr + "=\"", from);
    return std::stod(svg.substr(at + attr.size() + 2));
  };
  // The row title's baseline (turned, so its glyphs reach 0.75 em to the left of it and 0.25 em
  // to the right) lies left of where the longest row label starts (right-aligned at left - 8).
  const double row_title_x = number_after(svg.find("class=\"row-axis\""), "x");
  const std::size_t frame = svg.find("fill=\"none\" stroke=\"#444\"");
  const double left = number_after(svg.rfind("<rect", frame), "x");
  const double label_w = 0.6 * 12 * std::string("a-rather-long-query-label").size();
  CHECK(row_title_x + 0.25 * 12 < left - 8 - label_w);
  // The column title's baseline lies above the top of the slanted labels.
  const double col_title_y = number_after(svg.find("class=\"col-axis\""), "y");
  const double top = number_after(svg.rfind("<rect", frame), "y");
  const double slant = 0.7071 * 0.6 * 12 * std::string("a-very-long-key-label-indeed").size();
  CHECK(col_title_y < top - 6 - slant - 0.7 * 12);
  // The bar's title lies right of its longest tick label.
  const double bar_title_x = number_after(svg.find("class=\"bar-title\""), "x");
  double right = 0;
  const std::size_t ticks = svg.find("class=\"bar-ticks\"");
  for (std::size_t at = svg.find("<text", ticks); at < svg.find("</g>", ticks); at = svg.find("<text", at + 1)) {
    const std::size_t start = svg.find('>', at) + 1;
    right = std::max(right, number_after(at, "x") + 0.6 * 12 * (svg.find('<', start) - start));
  }
  CHECK(bar_title_x - 0.75 * 12 > right);
  // And everything fits the width.
  const double width = number_after(svg.find("<svg"), "width");
  CHECK(bar_title_x + 0.25 * 12 < width);
}

TEST_CASE("the picture says whether the weights that made it were trained") {
  TensorItem t = matrix({3, 3}, {"a", "b", "c"});
  const std::string unstated = picture(lesson_with(t));
  CHECK_FALSE(contains(unstated, "untrained"));
  CHECK_FALSE(contains(unstated, "trained for"));

  t.training = Training::untrained();
  const std::string untrained = picture(lesson_with(t));
  CHECK(check_xml(untrained).error == "");
  CHECK(text_of_class(untrained, "training").rfind("untrained weights", 0) == 0);
  CHECK(contains(untrained, "<title>attn_weights - attn lesson causal, stage 2/2: "));

  t.training = Training::trained(600);
  const std::string trained = picture(lesson_with(t));
  CHECK(check_xml(trained).error == "");
  CHECK(text_of_class(trained, "training") == "weights trained for 600 steps");
  CHECK_FALSE(contains(trained, "untrained"));

  // Stage::attention_weights carries it, per tensor: two pictures of one stage can differ.
  Report r;
  auto& s = r.stage("Snapshots");
  s.show_copy("before", {2, 2}, std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}.data());
  s.attention_weights(Training::untrained());
  s.show_copy("after", {2, 2}, std::vector<float>{1.0f, 0.0f, 0.0f, 1.0f}.data());
  s.attention_weights(Training::trained(30), "target words", "source words", "alpha");
  const auto& before = std::get<TensorItem>(s.items[0]);
  const auto& after = std::get<TensorItem>(s.items[1]);
  CHECK(before.training.kind == Training::Kind::untrained);
  CHECK(before.row_axis == "queries");
  CHECK(after.training.kind == Training::Kind::trained);
  CHECK(after.training.steps == 30);
  CHECK(after.col_axis == "source words");
  CHECK(after.value_name == "alpha");
}
