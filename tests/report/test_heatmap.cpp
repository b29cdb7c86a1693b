// The terminal heatmaps: what each cell shows, and the layout at several widths. A picture that
// overflows the terminal wraps into garbage, so every line is measured.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "report/heatmap.hpp"
#include "report/text_sink.hpp"
#include "report/text_width.hpp"

using namespace attn::report;
using attn::Shape;

namespace {

// The causal lesson's default attn_weights (6, 6).
TensorItem causal_weights() {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = {6, 6};
  t.values = {1.0000f, 0, 0, 0, 0, 0,
              0.5517f, 0.4483f, 0, 0, 0, 0,
              0.3800f, 0.3097f, 0.3103f, 0, 0, 0,
              0.2758f, 0.2460f, 0.2462f, 0.2319f, 0, 0,
              0.2175f, 0.1983f, 0.1984f, 0.1888f, 0.1971f, 0,
              0.1935f, 0.1663f, 0.1666f, 0.1542f, 0.1666f, 0.1529f};
  t.row_labels = t.col_labels = {"Your", "journey", "starts", "with", "one", "step"};
  t.attention = true;
  return t;
}

// A tensor of the given shape whose last two axes are (T, T), with rows that sum to 1.
TensorItem weights(Shape shape, const Labels& tokens) {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = shape;
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  const std::size_t cols = shape.back();
  for (std::size_t i = 0; i < n; ++i) t.values.push_back(static_cast<float>((i * 7919 % 13) + 1) / (13.0f * cols));
  t.row_labels = t.col_labels = tokens;
  t.attention = true;
  return t;
}

Labels words(std::size_t n) {
  const char* pool[] = {"the", "financial", "bank", "is", "located", "on", "river", "bank"};
  Labels out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(i < 8 ? pool[i] : "token" + std::to_string(i));
  return out;
}

// Display width of a line after removing colour escapes.
std::size_t visible_width(const std::string& line) {
  std::string plain;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      while (i < line.size() && line[i] != 'm') ++i;
      continue;
    }
    plain += line[i];
  }
  return display_width(plain);
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a causal matrix: labels on both axes, blanks exactly where the mask put 0") {
  const std::string h = render_heatmap(causal_weights(), {});
  CAPTURE(h);
  CHECK(contains(h, "heatmap of attn_weights (rows attend to columns)\n"));
  // Column labels climb as a staircase above their columns; row labels sit right-aligned.
  CHECK(contains(h, "         Your\n         : journey\n"));
  CHECK(contains(h, "         : : : : : step\n"));
  CHECK(contains(h, "   Your |@@          |\n"));       // 1.0 is the top of the scale; then five zeros
  CHECK(contains(h, "journey |++++        |\n"));       // 0.55 and 0.45, then masked
  CHECK(contains(h, "   step |::::::::::::|\n"));       // six small weights, none blank
  CHECK(contains(h, "scale: blank is exactly 0.0000; .:-=+*#%@ climb in 9 equal steps to 1.0000\n"));
  CHECK_FALSE(contains(h, "\x1b"));
}

TEST_CASE("every weight above 0 leaves a mark, however small") {
  TensorItem t = causal_weights();
  t.values[1] = 1e-6f;  // row "Your", column "journey"
  CHECK(contains(render_heatmap(t, {}), "   Your |@@..        |\n"));
}

TEST_CASE("a NaN row is drawn as ?? with the cause the tensor carries, not a crash") {
  TensorItem t = causal_weights();
  for (int j = 0; j < 6; ++j) t.values[5 * 6 + j] = std::nanf("");
  // No cause known: the legend claims none.
  const std::string bare = render_heatmap(t, {});
  CHECK(contains(bare, "   step |????????????|\n"));
  CHECK(contains(bare, "?? is nan\n"));
  t.nan_cause = attn::report::kMaskedRowNan;
  const std::string h = render_heatmap(t, {});
  CHECK(contains(h, "?? is nan: a row with nothing to attend to (0/0)\n"));
  // All NaN: still a picture.
  for (float& v : t.values) v = std::nanf("");
  CHECK(contains(render_heatmap(t, {}), "   Your |????????????|\n"));
}

TEST_CASE("multi-head weights: one panel per [b, h], side by side when they fit") {
  const TensorItem t = weights({1, 2, 8, 8}, words(8));
  HeatmapOptions wide;
  wide.width = 120;
  const std::string h = render_heatmap(t, wide);
  CHECK(contains(h, "heatmaps of attn_weights (1, 2, 8, 8), one per [b, h] (rows attend to columns)\n"));
  CHECK(contains(h, "[0, 0]                          [0, 1]\n"));  // one line: side by side
  HeatmapOptions narrow;
  narrow.width = 40;
  const std::string n = render_heatmap(t, narrow);
  CHECK(contains(n, "\n[0, 0]\n"));  // alone on its line: wrapped below each other
  CHECK(contains(n, "\n[0, 1]\n"));
}

TEST_CASE("batched (B, T, T) weights are titled [b]") {
  const std::string h = render_heatmap(weights({2, 3, 3}, {"a", "b", "c"}), {});
  CHECK(contains(h, "one per [b]"));
  CHECK(contains(h, "[0]"));
  CHECK(contains(h, "[1]"));
}

TEST_CASE("no line is longer than the width: 40, 80 and 120 columns, with and without colour") {
  struct Case {
    const char* what;
    TensorItem t;
  };
  TensorItem rect = weights({7, 6}, words(6));  // (T_tgt, S) with different labels
  rect.row_labels = {"l'accord", "a", "\xc3\xa9t\xc3\xa9", "sign\xc3\xa9", "par", "les", "d\xc3\xa9l\xc3\xa9gu\xc3\xa9s"};
  TensorItem long_labels = weights({12, 12}, {});
  for (std::size_t i = 0; i < 12; ++i) long_labels.row_labels.push_back("a-very-long-token-number-" + std::to_string(i));
  long_labels.col_labels = long_labels.row_labels;
  std::vector<Case> cases = {
      {"causal (6, 6)", causal_weights()},
      {"heads (1, 2, 8, 8)", weights({1, 2, 8, 8}, words(8))},
      {"heads (3, 4, 6, 6)", weights({3, 4, 6, 6}, words(6))},
      {"alignment (7, 6), UTF-8 labels", rect},
      {"long labels (12, 12)", long_labels},
      {"large (40, 40)", weights({40, 40}, words(40))},
      {"large (2, 2, 100, 100)", weights({2, 2, 100, 100}, words(100))},
      {"one token (1, 1)", weights({1, 1}, {"solo"})},
      {"a vector (5,)", weights({5}, words(5))},
  };
  for (const auto& c : cases)
    for (std::size_t width : {40, 80, 120})
      for (ColorDepth color : {ColorDepth::none, ColorDepth::xterm256, ColorDepth::truecolor}) {
        CAPTURE(c.what);
        CAPTURE(width);
        CAPTURE(static_cast<int>(color));
        HeatmapOptions o;
        o.width = width;
        o.color = color;
        const std::string h = render_heatmap(c.t, o);
        REQUIRE_FALSE(h.empty());
        CHECK(h.back() == '\n');
        for (const auto& line : lines_of(h)) {
          CAPTURE(line);
          CHECK(visible_width(line) <= width);
          CHECK((line.empty() || line.back() != ' '));  // no trailing blanks
        }
        CHECK(contains(h, "\x1b[") == (color != ColorDepth::none));
      }
}

TEST_CASE("too many columns for the width: the first and last ones, with ~ between") {
  HeatmapOptions o;
  o.width = 40;
  const std::string h = render_heatmap(weights({40, 40}, words(40)), o);
  CAPTURE(h);
  CHECK(contains(h, "~~"));
  CHECK(contains(h, "~ stands for rows or columns left out\n  (40 x 40 in all)\n"));  // wrapped at 40
  CHECK(contains(h, "   the |"));        // first row
  CHECK(contains(h, "token39 |"));       // last row
  CHECK(contains(h, "token39\n"));       // last column's label ends the staircase
}

TEST_CASE("labels with control characters cannot smuggle escape codes into a pipe") {
  TensorItem t = weights({2, 2}, {"\x1b[31mred", "ok\x07"});
  const std::string h = render_heatmap(t, {});
  CHECK_FALSE(contains(h, "\x1b"));
  CHECK_FALSE(contains(h, "\x07"));
  CHECK(contains(h, "?[31mred"));
}

TEST_CASE("colour: 24-bit and 256-colour cells, a colour bar, and the same layout") {
  HeatmapOptions o;
  o.color = ColorDepth::truecolor;
  const std::string h = render_heatmap(causal_weights(), o);
  CHECK(contains(h, "\x1b[48;2;253;231;37m  \x1b[0m"));  // 1.0: viridis' yellow end
  CHECK(contains(h, "\x1b[48;2;68;1;84m  \x1b[0m"));     // 0: the dark purple end
  CHECK(contains(h, "scale: 0.0000 "));
  o.color = ColorDepth::xterm256;
  const std::string h256 = render_heatmap(causal_weights(), o);
  CHECK(contains(h256, "\x1b[48;5;" + std::to_string(xterm256_viridis(1.0)) + "m  \x1b[0m"));  // 1.0: the ramp's top
  CHECK(contains(h256, "\x1b[48;5;" + std::to_string(xterm256_viridis(0.0)) + "m  \x1b[0m"));  // 0: its bottom
  // The bar shows every step of the ramp once and says how many there are.
  std::string bar = " ";
  for (int index : xterm256_viridis_ramp()) bar += "\x1b[48;5;" + std::to_string(index) + "m \x1b[0m";
  CAPTURE(h256);
  CHECK(contains(h256, bar + " 1.0000 (" + std::to_string(xterm256_viridis_ramp().size()) + " equal steps)\n"));
}

TEST_CASE("the text printer draws a heatmap after each attention tensor, and only there") {
  Report r;
  r.header.lesson = "causal";
  const attn::Mat w = {{1.0f, 0.0f}, {0.4f, 0.6f}};
  r.stage("Weights").show("attn_weights", w, {"a", "b"}, {"a", "b"}).attention_weights().show("scores", w);
  auto text = [&](TextOptions o) {
    std::ostringstream out;
    TextSink sink(out, o);
    deliver(r, sink);
    return out.str();
  };
  const std::string plain = text({});
  CHECK(contains(plain, "heatmap of attn_weights"));
  CHECK_FALSE(contains(plain, "heatmap of scores"));
  TextOptions shapes;
  shapes.shapes_only = true;
  CHECK_FALSE(contains(text(shapes), "heatmap"));
  TextOptions off;
  off.heatmaps = false;
  CHECK_FALSE(contains(text(off), "heatmap"));
}

TEST_CASE("labels: cleaned, measured in characters, cut with ~") {
  CHECK(clean_label("ok") == "ok");
  CHECK(clean_label("a\tb") == "a?b");
  CHECK(clean_label("\xff\xfe") == "??");                 // not UTF-8
  CHECK(clean_label("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");  // "été" is kept
  CHECK(clean_label("\xc3") == "?");                      // cut short
  CHECK(display_width("\xc3\xa9t\xc3\xa9") == 3);
  CHECK(fit_label("financial", 6) == "finan~");
  CHECK(fit_label("bank", 6) == "bank");
  CHECK(fit_label("d\xc3\xa9l\xc3\xa9gu\xc3\xa9s", 4) == "d\xc3\xa9l~");
}

TEST_CASE("labels: wide characters take two columns, combining marks none, and the grid stays aligned") {
  const std::string cat = "\xe7\x8c\xab\xe3\x81\x8c";                          // 猫が
  const std::string japanese = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae";  // 日本語の
  CHECK(display_width(cat) == 4);
  CHECK(display_width(japanese) == 8);
  CHECK(display_width("e\xcc\x81t\xc3\xa9") == 3);  // e + combining acute, t, é
  CHECK(display_width("\xff") == 1);                   // a stray byte: one '?' once cleaned
  CHECK(fit_label(japanese, 8) == japanese);
  CHECK(fit_label(japanese, 5) == "\xe6\x97\xa5\xe6\x9c\xac~");  // 日本~: 5 columns
  CHECK(fit_label(japanese, 4) == "\xe6\x97\xa5~");               // 日~: 本 would not fit before ~
  CHECK(display_width(fit_label(japanese, 4)) <= 4);
  // Every row's bar '|' in the same column, whatever its label's script: the labels are padded to
  // 8 columns, the width of 日本語の (4 wide characters), not to its 4 code points or 12 bytes.
  const std::string h = render_heatmap(weights({4, 4}, {cat, "\xe5\xba\xa7\xe3\x81\xa3\xe3\x81\x9f", japanese,
                                                        "\xe6\x96\x87"}), {});
  CAPTURE(h);
  CHECK(contains(h, "\n    " + cat + " |"));
  CHECK(contains(h, "\n  \xe5\xba\xa7\xe3\x81\xa3\xe3\x81\x9f |"));  // 座った
  CHECK(contains(h, "\n" + japanese + " |"));
  CHECK(contains(h, "\n      \xe6\x96\x87 |"));  // 文
}

// --- --heatmap-scale row and --head (docs/pictures.md) ----------------------------------------

namespace {

// Two rows: one peaked, one flat as untrained weights are (0.24..0.26).
TensorItem peaked_and_flat() {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = {2, 4};
  t.values = {0.90f, 0.05f, 0.05f, 0.00f,   //
              0.24f, 0.25f, 0.25f, 0.26f};
  t.row_labels = {"a", "b"};
  t.col_labels = {"a", "b", "c", "d"};
  t.attention = true;
  return t;
}

HeatmapOptions with_view(const PanelView& view) {
  HeatmapOptions o;
  o.view = view;
  return o;
}

// The line of the grid whose row label is `label`.
std::string grid_row(const std::string& h, const std::string& label) {
  std::istringstream in(h);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(label + " |", 0) == 0) return line;
  return "";
}

// (2, 3, 2, 2): two batch entries, three heads, each head's values different.
TensorItem three_heads() {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = {2, 3, 2, 2};
  for (std::size_t i = 0; i < 24; ++i) t.values.push_back(static_cast<float>((i * 7) % 11) / 10.0f);
  t.row_labels = t.col_labels = {"x", "y"};
  t.attention = true;
  return t;
}

}  // namespace

TEST_CASE("--heatmap-scale row stretches a flat row over the whole ramp, global keeps it in a band") {
  const TensorItem t = peaked_and_flat();
  HeatmapOptions global;
  const std::string g = render_heatmap(t, global);
  CAPTURE(g);
  // One scale 0..0.90: the flat row's 0.24..0.26 all land on one mark, '-'.
  CHECK(grid_row(g, "b") == "b |--------|");
  CHECK(contains(g, "scale: blank is exactly 0.0000; .:-=+*#%@ climb in 9 equal steps to 0.9000"));

  HeatmapOptions row;
  row.view.scale = HeatmapScale::row;
  const std::string r = render_heatmap(t, row);
  CAPTURE(r);
  // Its smallest weight 0.24 takes the first mark '.', its largest 0.26 '@', the two 0.25 halfway
  // ('+': 1 + floor(0.5 * 9) = 5). Blank is left to exact zeros.
  CHECK(grid_row(r, "b") == "b |..++++@@|");
  // Row a's range is 0.05..0.90, its masked 0 outside it: 0.05 is '.', the 0 blank.
  CHECK(grid_row(r, "a") == "a |@@....  |");
  CHECK(contains(r, "scale: each row from its smallest weight (.) to its largest (@), .:-=+*#%@ in 9\n  equal steps; blank is exactly 0\n"));
  CHECK_FALSE(contains(r, "0.9000"));  // no shared numbers: they would be wrong for every row but one

  row.color = ColorDepth::truecolor;
  const std::string c = render_heatmap(t, row);
  CHECK(contains(c, "scale: row min "));
  CHECK(contains(c, "row max"));
  CHECK(contains(c, "scale: each row from its smallest weight to its largest (bright); exactly 0 is"));
  // The flat row's ends are the map's ends.
  CHECK(contains(grid_row(c, "b"), viridis_background(0.0, ColorDepth::truecolor)));
  CHECK(contains(grid_row(c, "b"), viridis_background(1.0, ColorDepth::truecolor)));
}

TEST_CASE("--heatmap-scale row: positions per row, a row of one value mid-scale, NaN kept") {
  TensorItem t = peaked_and_flat();
  PanelView view;
  view.scale = HeatmapScale::row;
  const PanelSet set = panels_of(t, view);
  REQUIRE(set.panels.size() == 1);
  const Panel& p = set.panels[0];
  CHECK(set.per_row);
  CHECK(p.row_lo[1] == doctest::Approx(0.24));
  CHECK(p.row_hi[1] == doctest::Approx(0.26));
  CHECK(scale_position(0.24f, set, p, 1) > 0.0);  // the row's smallest weight keeps a mark
  CHECK(scale_position(0.24f, set, p, 1) == doctest::Approx(0.0));
  CHECK(scale_position(0.25f, set, p, 1) == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(scale_position(0.26f, set, p, 1) == doctest::Approx(1.0));
  // Row a: range 0.05..0.90 over its weights; the exact 0 (a masked key) is the bottom itself.
  CHECK(p.row_lo[0] == doctest::Approx(0.05));
  CHECK(scale_position(0.05f, set, p, 0) > 0.0);
  CHECK(scale_position(0.05f, set, p, 0) == doctest::Approx(0.0));
  CHECK(scale_position(0.475f, set, p, 0) == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(scale_position(0.0f, set, p, 0) == 0.0);
  CHECK_FALSE(set.has_flat_row);

  t.values = {0.25f, 0.25f, 0.25f, 0.25f, NAN, NAN, NAN, NAN};
  const PanelSet flat = panels_of(t, view);
  CHECK(flat.has_flat_row);
  CHECK(scale_position(0.25f, flat, flat.panels[0], 0) == 0.5);
  CHECK(std::isnan(scale_position(NAN, flat, flat.panels[0], 1)));
  const std::string h = render_heatmap(t, with_view(view));
  CAPTURE(h);
  CHECK(grid_row(h, "a") == "a |++++++++|");
  CHECK(grid_row(h, "b") == "b |????????|");
  CHECK(contains(h, "a row with one value throughout is drawn mid-scale"));
  // The default view is untouched: no per-row numbers, the shared scale.
  const PanelSet plain = panels_of(peaked_and_flat());
  CHECK_FALSE(plain.per_row);
  CHECK(plain.panels[0].row_lo.empty());
}

TEST_CASE("--head mean: one panel per batch entry, the average of the heads' weights") {
  const TensorItem t = three_heads();
  CHECK(head_count(t.shape) == 3);
  CHECK(head_count({2, 2, 2}) == 0);
  PanelView view;
  view.heads = PanelView::Heads::mean;
  const PanelSet set = panels_of(t, view);
  REQUIRE(set.panels.size() == 2);
  CHECK(set.head_mean);
  CHECK(set.note == "mean of 3 heads");
  for (std::size_t b = 0; b < 2; ++b) {
    CHECK(set.panels[b].index == std::vector<std::size_t>{b});
    for (std::size_t i = 0; i < 4; ++i) {
      // attn_weights[b, :, r, c].mean(), from the tensor's own values.
      const double mean = (t.values[(b * 3 + 0) * 4 + i] + t.values[(b * 3 + 1) * 4 + i] + t.values[(b * 3 + 2) * 4 + i]) / 3.0;
      CAPTURE(b);
      CAPTURE(i);
      CHECK(set.panels[b].values[i] == doctest::Approx(mean).epsilon(1e-6));
    }
  }
  // A copy of the set still reads live values: the mean is shared, not owned by one copy.
  const PanelSet copy = [&] { PanelSet inner = panels_of(t, view); return PanelSet(inner); }();
  CHECK(copy.panels[1].values[3] == set.panels[1].values[3]);
  const std::string h = render_heatmap(t, with_view(view));
  CAPTURE(h);
  CHECK(contains(h, "heatmaps of attn_weights (2, 3, 2, 2), mean of 3 heads, one per [b] (rows attend\n"));
  CHECK(contains(h, "attn_weights[0], mean of 3 heads"));
  CHECK(contains(h, "attn_weights[1], mean of 3 heads"));
  CHECK_FALSE(contains(h, "[0, 1]"));
  // A tensor without a head axis is drawn whole.
  const TensorItem no_heads = weights({2, 3, 3}, words(3));
  CHECK(panels_of(no_heads, view).panels.size() == 2);
  CHECK(panels_of(no_heads, view).note.empty());
}

TEST_CASE("--head N: only head N of every batch entry") {
  const TensorItem t = three_heads();
  PanelView view;
  view.heads = PanelView::Heads::one;
  view.head = 2;
  const PanelSet set = panels_of(t, view);
  REQUIRE(set.panels.size() == 2);
  CHECK(set.note == "head 2 of 3");
  for (std::size_t b = 0; b < 2; ++b) {
    CHECK(set.panels[b].index == std::vector<std::size_t>{b, 2});
    CHECK(set.panels[b].values == t.values.data() + (b * 3 + 2) * 4);  // attn_weights[b, 2]
  }
  const std::string h = render_heatmap(t, with_view(view));
  CAPTURE(h);
  CHECK(contains(h, "heatmaps of attn_weights (2, 3, 2, 2), head 2 of 3, one per [b, h] (rows attend\n"));
  CHECK(contains(h, "[0, 2]"));
  CHECK(contains(h, "[1, 2]"));
  CHECK_FALSE(contains(h, "[0, 1]"));
  view.head = 3;
  CHECK(panels_of(t, view).panels.empty());  // past the last head: nothing (the CLI refuses it first)
}

TEST_CASE("--heatmap-scale auto (the default): rows near uniform are stretched, and the legend says why") {
  // Causal weights within 15% of 1/k for the k keys each row sees: a wall on the global scale.
  TensorItem t;
  t.name = "attn_weights";
  t.shape = {3, 3};
  t.values = {1.0f, 0.0f, 0.0f,  //
              0.52f, 0.48f, 0.0f,  //
              0.35f, 0.32f, 0.33f};
  t.row_labels = t.col_labels = {"a", "b", "c"};
  t.attention = true;
  const PanelSet set = panels_of(t);
  CHECK(set.auto_row);
  CHECK(set.per_row);
  const std::string h = render_heatmap(t, HeatmapOptions{});
  CAPTURE(h);
  CHECK(grid_row(h, "a") == "a |@@    |");  // its one weight, beside masked keys, is its row's top
  CHECK(grid_row(h, "b") == "b |@@..  |");
  CHECK(grid_row(h, "c") == "c |@@..==|");  // 0.33 is a third of the way from 0.32 to 0.35: '=' (1 + 3)
  CHECK(contains(h, "scale: every weight is within 15% of uniform (1/k over the k keys its row sees),"));
  CHECK(contains(h, "--heatmap-scale global draws them as they are"));
  CHECK_FALSE(contains(h, "a row with one value throughout"));

  // 0.60 is 20% above its row's 1/2: not near uniform, so the global scale stays.
  t.values[3] = 0.60f;
  t.values[4] = 0.40f;
  CHECK_FALSE(panels_of(t).per_row);
  // An explicit choice wins: global stays global however flat the weights.
  t.values[3] = 0.52f;
  t.values[4] = 0.48f;
  PanelView global;
  global.scale = HeatmapScale::global;
  CHECK_FALSE(panels_of(t, global).per_row);
  CHECK(contains(render_heatmap(t, with_view(global)), "scale: blank is exactly 0.0000"));
  // One key per row (nothing to stretch) and values that are no weights (negative) stay global.
  TensorItem one = t;
  one.shape = {2, 1};
  one.values = {1.0f, 1.0f};
  one.col_labels = {"a"};
  one.row_labels = {"a", "b"};
  CHECK_FALSE(panels_of(one).per_row);
  TensorItem scores = t;
  scores.values = {-0.1f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.3f, 0.3f, 0.3f};
  CHECK_FALSE(panels_of(scores).per_row);
}

TEST_CASE("the row scale does not stretch rounding: weights one ulp apart are one value, drawn mid-scale") {
  TensorItem t;
  t.name = "attn_weights";
  t.shape = {1, 3};
  const float third = 1.0f / 3.0f;
  t.values = {third, std::nextafter(third, 1.0f), std::nextafter(third, 0.0f)};
  t.row_labels = {"a"};
  t.col_labels = {"a", "b", "c"};
  t.attention = true;
  PanelView row;
  row.scale = HeatmapScale::row;
  const std::string h = render_heatmap(t, with_view(row));
  CAPTURE(h);
  // Stretched, the three would be '.', '@' and a mark between, decided by the last bit (another
  // CPU's BLAS rounds them differently); as one value they share the middle mark.
  CHECK(grid_row(h, "a") == "a |++++++|");
  CHECK(contains(h, "a row with one value throughout is drawn mid-scale"));
}

TEST_CASE("labels of one character: one line above the grid instead of a staircase") {
  TensorItem t = weights({4, 4}, {"k", "y", "z", "d"});
  const std::string h = render_heatmap(t, {});
  CAPTURE(h);
  CHECK(contains(h, "(rows attend to columns)\n   k y z d\nk |"));
  CHECK_FALSE(contains(h, ": y"));
  t.col_labels = {"k", "yy", "z", "d"};  // one longer label: the staircase again
  CHECK(contains(render_heatmap(t, {}), "   : yy\n"));
}

TEST_CASE("marked cells: drawn with a bracket before their shade, counted in the legend, in every panel") {
  TensorItem t = causal_weights();
  t.marked = {{1, 0}, {3, 1}, {5, 4}};  // journey -> Your is its row's largest; with -> journey, step -> one are not
  t.marked_what = "the cells a test picked";
  HeatmapOptions wide;  // the legend on one line
  wide.width = 120;
  const std::string h = render_heatmap(t, wide);
  CAPTURE(h);
  CHECK(contains(h, "journey |[+++        |\n"));  // 0.55: '+' kept as the second character
  CHECK(contains(h, "   with |--[-----    |\n"));
  CHECK(contains(h, "   step |::::::::[:::|\n"));
  CHECK(contains(h, "[ marks the cells a test picked; 1 of 3 marked cells are their row's largest weight\n"));
  // Two panels: each drawn with the marks, each counted.
  TensorItem two = weights({1, 2, 3, 3}, {"a", "b", "c"});
  two.marked = {{2, 1}};
  two.marked_what = "one cell";
  const std::string p = render_heatmap(two, wide);
  CAPTURE(p);
  std::size_t drawn = 0;  // the panels sit side by side: row c of both on one line
  for (const auto& line : lines_of(p))
    if (line.rfind("c |", 0) == 0) drawn += static_cast<std::size_t>(std::count(line.begin(), line.end(), '['));
  CHECK(drawn == 2);
  CHECK(contains(p, "[ marks one cell; "));
  CHECK(contains(p, " in [0, 0] and "));
  CHECK(contains(p, " in [0, 1] marked cells are their row's largest weight\n"));
  // In colour the cell keeps its colour with [] written over it, and the legend says [].
  HeatmapOptions colour;
  colour.color = ColorDepth::truecolor;
  const std::string c = render_heatmap(t, colour);
  CHECK(contains(c, "[]\x1b[0m"));
  CHECK(contains(c, "[] marks the cells a test picked"));
  // A cell outside the grid is neither drawn nor counted; no marks, no legend line.
  t.marked = {{1, 0}, {9, 9}};
  CHECK(contains(render_heatmap(t, {}), "1 of 1 marked cells"));
  CHECK_FALSE(contains(render_heatmap(causal_weights(), {}), "marks"));
}

TEST_CASE("a batch that repeats one entry is drawn once, and a line says so") {
  // Raschka's torch.stack((inputs, inputs)): batch entry 1 holds entry 0's values.
  TensorItem t = weights({1, 2, 4, 4}, words(4));
  TensorItem twice = t;
  twice.shape = {2, 2, 4, 4};
  std::vector<float> values(t.values.begin(), t.values.end());
  values.insert(values.end(), t.values.begin(), t.values.end());
  twice.values = values;
  HeatmapOptions wide;
  wide.width = 120;
  const std::string h = render_heatmap(twice, wide);
  CHECK(contains(h, "heatmaps of attn_weights (2, 2, 4, 4), one per [b, h] (rows attend to columns)\n"
                    "batch entry 1 repeats entry 0: drawn once\n"));
  CHECK(contains(h, "[0, 0]"));
  CHECK(contains(h, "[0, 1]"));
  CHECK_FALSE(contains(h, "[1, 0]"));
  CHECK_FALSE(contains(h, "[1, 1]"));
  // Entry 0's grids are the same lines as those of the one-entry tensor.
  const std::string one = render_heatmap(t, wide);
  CHECK(h.substr(h.find("[0, 0]")) == one.substr(one.find("[0, 0]")));

  // Four equal entries, also through the mean of the heads: one line names entries 1-3.
  TensorItem four = t;
  four.shape = {4, 2, 4, 4};
  std::vector<float> v4;
  for (int b = 0; b < 4; ++b) v4.insert(v4.end(), t.values.begin(), t.values.end());
  four.values = v4;
  CHECK(contains(render_heatmap(four, wide), "batch entries 1-3 repeat entry 0: drawn once\n"));
  HeatmapOptions mean = wide;
  mean.view.heads = PanelView::Heads::mean;
  const std::string m = render_heatmap(four, mean);
  CHECK(contains(m, "batch entries 1-3 repeat entry 0: drawn once\n"));
  CHECK(contains(m, "attn_weights[0], mean of 2 heads"));
  CHECK_FALSE(contains(m, "attn_weights[1]"));

  // One value apart (the last bit of one weight): every entry is drawn, and no line claims a repeat.
  TensorItem apart = twice;
  apart.values[apart.values.size() - 1] = std::nextafter(apart.values[apart.values.size() - 1], 1.0f);
  const std::string d = render_heatmap(apart, wide);
  CHECK(contains(d, "[1, 1]"));
  CHECK_FALSE(contains(d, "repeat"));

  // Pictures (--svg) keep every entry unless asked: panels_of's default view draws them all.
  CHECK(panels_of(twice).panels.size() == 4);
  CHECK(panels_of(twice).batch_drawn_once == 0);
  PanelView once;
  once.repeated_batch_once = true;
  CHECK(panels_of(twice, once).panels.size() == 2);
  CHECK(panels_of(twice, once).batch_drawn_once == 2);
  CHECK(batch_repeats_one_entry(twice));
  CHECK_FALSE(batch_repeats_one_entry(apart));
  CHECK_FALSE(batch_repeats_one_entry(t));  // one entry: nothing repeats
}

TEST_CASE("a long batch of different entries draws the first 64 grids and counts the rest") {
  const TensorItem t = weights({70, 2, 2}, {"a", "b"});  // entries differ (not all equal)
  const std::string h = render_heatmap(t, {});
  CHECK(contains(h, "... and 6 more grids like these, left out (the first 64 of 70 are drawn;"));
  CHECK_FALSE(contains(h, "repeat"));
}
