// The --svg pictures: well-formed XML (parsed by expat, as a browser would refuse a broken file),
// one annotated cell per weight, stable file names, and files that appear whole or not at all.
#include <doctest/doctest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "report/colormap.hpp"
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
  // 9 cells, the background, the grid frame and the colour bar; each cell has a tooltip.
  CHECK(x.count.at("rect") == 9 + 3);
  CHECK(x.count.at("title") == 9 + 1);
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

TEST_CASE("SvgSink writes every panel under its name, leaving no temporary file") {
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

  SvgSink sink(dir);
  deliver(r, sink);
  const std::set<std::string> expected = {"causal-stage02-attn_weights-b0-h0.svg", "causal-stage02-attn_weights-b0-h1.svg",
                                          "causal-stage02-alignment.svg"};
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
  make_svg_dir(dir + "/new/nested");
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

TEST_CASE("--heatmap-scale row: a flat row spans the colour bar, which says so instead of numbers") {
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
  CHECK(contains(svg, "<title>scale: each row from its own min (dark) to its own max (bright)</title>"));
  CHECK(contains(svg, "rows attend to columns; shape 2 x 3; each row from its own min (dark) to its own max (bright)"));
  CHECK(contains(svg, ">row min</text>"));
  CHECK(contains(svg, ">row max</text>"));
  CHECK_FALSE(contains(svg, ">0.45</text>"));  // no numeric ticks on the bar (the shared scale has 0.45)

  // The shared scale (the default) puts that row in one band near the dark end, with numbers.
  const PanelSet global = panels_of(t);
  const std::string g = svg_picture(r.header, s, r.stages().size(), t, global, global.panels[0]);
  CHECK(fill_of(g, "b -&gt; c") == hex(viridis(static_cast<double>(0.35f) / static_cast<double>(0.9f))));
  CHECK(contains(g, ">0.45</text>"));
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
  CHECK(files_in(dir) == std::set<std::string>{"heads-stage02-attn_weights-b0-h1.svg", "heads-stage02-attn_weights-b1-h1.svg"});
  for (const auto& f : files_in(dir)) std::remove((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}
