// What keeps a lesson's text to one sitting and to the page: stages folded to their titles, detail
// tensors left out with a line that says so (both undone by --full), tables in parts that fit,
// and equation and PyTorch lines wrapped. The whole-lesson effect is in the goldens and in
// test_cli's table of line counts; these check the parts.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/stage.hpp"
#include "report/text_sink.hpp"

using attn::Mat;
using attn::report::Relation;
using attn::report::Report;
using attn::report::TableItem;
using attn::report::TextOptions;
using attn::report::TextSink;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t widest(const std::string& text) {
  std::size_t w = 0;
  for (const auto& l : lines_of(text)) w = std::max(w, l.size());
  return w;
}

std::string without_spaces(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n'; }), s.end());
  return s;
}

std::string text_of(const Report& r, TextOptions o) {
  std::ostringstream out;
  TextSink sink(out, o);
  attn::report::deliver(r, sink);
  return out.str();
}

// Step 1 whole, then steps 2 and 3 that repeat it, then a closing stage.
Report decoder_run(bool failing_check_in_step_3) {
  Report r;
  r.header.lesson = "toy";
  Mat w = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  r.stage("Step 1: score every word").show("scores", w).note("step one, narrated");
  r.stage("Step 2: towards \"chat\"").fold("decoder step like step 1", "decoder steps like step 1").show("scores", w);
  auto& three = r.stage("Step 3: towards \"assis\"").fold("decoder step like step 1", "decoder steps like step 1");
  three.show("scores", w);
  three.check("rows sum to 1", "max |sum - 1|", failing_check_in_step_3 ? 0.5 : 0.0, Relation::AtMost, 1e-6);
  r.stage("The alignment matrix").show("alignment", w);
  return r;
}

}  // namespace

TEST_CASE("folded stages print their titles and one line that names --full and --stage") {
  const std::string text = text_of(decoder_run(false), TextOptions{});
  CHECK(contains(text, "[2/4] Step 2: towards \"chat\"\n[3/4] Step 3: towards \"assis\"\n"));
  CHECK(contains(text, "    2 more decoder steps like step 1, shown by their titles: --full prints them\n"
                       "    whole, --stage 2-3 just these\n\n[4/4]"));
  CHECK(contains(text, "step one, narrated"));  // a stage not folded is whole
  CHECK(contains(text, "[4/4] The alignment matrix"));
  // Only stage 1's and stage 4's tensors are printed; the passed check of stage 3 is not.
  std::size_t printed = 0;
  for (std::size_t at = text.find("tensor(["); at != std::string::npos; at = text.find("tensor([", at + 1)) ++printed;
  CHECK(printed == 2);
  CHECK_FALSE(contains(text, "rows sum to 1"));
  TextOptions full;
  full.full = true;
  const std::string whole = text_of(decoder_run(false), full);
  CHECK_FALSE(contains(whole, "--full prints"));
  CHECK(contains(whole, "check passed: rows sum to 1"));
  CHECK(lines_of(whole).size() > lines_of(text).size());
}

TEST_CASE("a folded stage still shows a check that failed, and one folded stage is named alone") {
  const std::string text = text_of(decoder_run(true), TextOptions{});
  CHECK(contains(text, "[3/4] Step 3: towards \"assis\"\n    check FAILED: rows sum to 1"));
  Report one;
  Mat w = {{1.0f}};
  one.stage("Step 1").show("s", w);
  one.stage("Step 2").fold("decoder step like step 1", "decoder steps like step 1").show("s", w);
  const std::string single = text_of(one, TextOptions{});
  CHECK(contains(single, "[2/2] Step 2\n    1 more decoder step like step 1, shown by its title: --full prints it whole,\n"
                         "    --stage 2 just this one\n"));
}

TEST_CASE("a detail tensor is named on one line and printed only with --full") {
  Report r;
  Mat w = {{0.25f, 0.5f}, {0.75f, 1.0f}};
  r.stage("Projections")
      .show("W_query.weight", w)
      .detail()
      .show("W_key.weight", w)
      .detail()
      .show("queries", w)
      .show("W_value.weight", w)
      .detail();
  const std::string text = text_of(r, TextOptions{});
  // One line for the stage, where the first of them was.
  CHECK(contains(text, "out: W_query.weight (2, 2), W_key.weight (2, 2), queries (2, 2),\n"
                       "         W_value.weight (2, 2)\n\n"
                       "(W_query.weight, W_key.weight and W_value.weight: --full prints them)\n\nqueries (2, 2)\n"));
  CHECK(contains(text, "queries (2, 2)\ntensor("));
  CHECK_FALSE(contains(text, "W_query.weight (2, 2)\ntensor("));
  CHECK(contains(text, "out: W_query.weight (2, 2)"));  // the shapes line still names it
  TextOptions full;
  full.full = true;
  const std::string whole = text_of(r, full);
  CHECK(contains(whole, "W_query.weight (2, 2)\ntensor("));
  CHECK_FALSE(contains(whole, "--full prints"));
  TextOptions shapes;
  shapes.shapes_only = true;  // nothing is printed, so nothing is said to be left out
  CHECK_FALSE(contains(text_of(r, shapes), "--full prints"));
}

TEST_CASE("detail by name marks a tensor shown earlier, and names one the stage does not show as an error") {
  Report r;
  Mat w = {{0.25f, 0.5f}, {0.75f, 1.0f}};
  auto& s = r.stage("Copies").show("x", w).show("y", w);
  s.detail("x");
  const std::string text = text_of(r, TextOptions{});
  CHECK(contains(text, "(x: --full prints it)\n\ny (2, 2)\ntensor("));
  CHECK_THROWS_AS(s.detail("z"), std::logic_error);
}

TEST_CASE("detail on attention weights leaves out the picture too, and one line names every cut") {
  Report r;
  Mat w = {{0.25f, 0.75f}, {0.5f, 0.5f}};
  r.stage("A copy").show("alignment_again", w).attention_weights().detail().show("b", w).detail();
  const std::string text = text_of(r, TextOptions{});
  CHECK(contains(text, "(alignment_again and b: --full prints them)\n"));
  CHECK_FALSE(contains(text, "heatmap of alignment_again"));
  CHECK_FALSE(contains(text, "tensor(["));
  TextOptions full;
  full.full = true;
  CHECK(contains(text_of(r, full), "heatmap of alignment_again"));
}

TEST_CASE("render_table prints a table too wide for the page in parts, each with the first column") {
  TableItem t;
  t.header = {"model", "a long column name one", "a long column name two", "a long column name three"};
  t.rows = {{"this lesson", "1", "2", "3"}, {"Llama-3.2-3B", "4", "5", "6"}};
  const std::string whole = attn::report::render_table(t);
  CHECK(lines_of(whole).size() == 4);
  const std::string parts = attn::report::render_table(t, 64);
  CHECK(widest(parts) <= 64);
  CHECK(parts ==
        "  model         a long column name one  a long column name two\n"
        "  ------------  ----------------------  ----------------------\n"
        "  this lesson                        1                       2\n"
        "  Llama-3.2-3B                       4                       5\n"
        "\n"
        "  model         a long column name three\n"
        "  ------------  ------------------------\n"
        "  this lesson                          3\n"
        "  Llama-3.2-3B                         6\n");
}

TEST_CASE("render_table wraps a column of sentences that does not fit even alone") {
  TableItem t;
  t.header = {"code", "what happens"};
  t.rows = {{"self.W_o(None)", "TypeError: linear(): argument 'input' (position 1) must be Tensor, not NoneType"},
            {"fixed", "runs"}};
  const std::string text = attn::report::render_table(t, 60);
  CHECK(widest(text) <= 60);
  CHECK(text ==
        "  code            what happens\n"
        "  --------------  ------------------------------------------\n"
        "  self.W_o(None)  TypeError: linear(): argument 'input'\n"
        "                  (position 1) must be Tensor, not NoneType\n"
        "  fixed           runs\n");
}

TEST_CASE("wrap_equation breaks after a semicolon first, then between words, four columns further in") {
  using attn::report::wrap_equation;
  CHECK(wrap_equation("a = b @ c", 100, "    ") == "    a = b @ c\n");
  CHECK(wrap_equation("scores = q @ k^T / sqrt(d_k);  weights = softmax(scores, dim=-1);  context = weights @ v", 70,
                      "    ") ==
        "    scores = q @ k^T / sqrt(d_k);  weights = softmax(scores, dim=-1);\n"
        "        context = weights @ v\n");
  // Before a comment rather than inside it.
  CHECK(wrap_equation("attn_weights = softmax(q @ cache_k^T / sqrt(d_k))   # (B, h, 1, t+1), head i reads kv head i", 80,
                      "    ") ==
        "    attn_weights = softmax(q @ cache_k^T / sqrt(d_k))\n"
        "        # (B, h, 1, t+1), head i reads kv head i\n");
  const std::string words = wrap_equation(
      "causal: skip a tile whose first key comes after the block's last query, mask one that crosses the diagonal", 50,
      "    ");
  CHECK(widest(words) <= 50);
  CHECK(without_spaces(words) == without_spaces("causal: skip a tile whose first key comes after the block's last "
                                                "query, mask one that crosses the diagonal"));
}

TEST_CASE("wrap_python breaks inside brackets, at the shallowest comma, under the open bracket") {
  using attn::report::wrap_python;
  const std::string literal = "x = torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]])";
  CHECK(wrap_python(literal, 100, "    ") == "    " + literal + "\n");  // fits: as it is
  CHECK(wrap_python(literal, 60, "    ") ==
        "    x = torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6],\n"
        "                      [0.7, 0.8, 0.9]])\n");
  // Simple statements split at "; ", each at the line's own indentation.
  CHECK(wrap_python("  a = torch.softmax(s, dim=-1); b = a @ v; c = b.sum()", 40, "") ==
        "  a = torch.softmax(s, dim=-1);\n"
        "  b = a @ v; c = b.sum()\n");
  // Not inside a string, not inside a comment, not between a loop's statements.
  const std::string quoted = "x = f(\"a, b, c, d, e, f, g, h\", 1)  # a comment, with, commas, in, it";
  const std::string q = wrap_python(quoted, 30, "");
  CHECK(contains(q, "\"a, b, c, d, e, f, g, h\","));
  CHECK(contains(q, "# a comment, with, commas, in, it"));
  const std::string loop = wrap_python("for byte in word: seed = (seed ^ byte) * 16777619 % 2**32; other = 1", 40, "");
  CHECK(contains(loop, "2**32; other = 1\n"));  // the second statement stays in the loop's line
  CHECK(without_spaces(loop) == without_spaces("for byte in word: seed = (seed ^ byte) * 16777619 % 2**32; other = 1"));
}

TEST_CASE("wrap_python keeps the code: only spaces become line breaks, every line within the page") {
  using attn::report::wrap_python;
  const std::string lines[] = {
      "x = torch.stack([embed(w) for w in b\"<|begin_of_text|> the financial bank is located on river bank\".split()])",
      "keys_only = torch.softmax(self_scores.masked_fill(key_pad[:, None, :].bool(), float(\"-inf\")), dim=-1)",
      "x = torch.tensor([[[-3.45, -1.34, 4.12, -3.33, -0.81, -1.93, -0.28, 8.25], [7.36, -1.09, 2.32, 1.52, 3.5, "
      "1.42, 0.46, -0.95], [-2.26, 0.53, -1.02, 1.49, -3.97, -2.19, 2.86, -0.59]]])"};
  for (const std::string& line : lines) {
    const std::string wrapped = wrap_python(line, 100, "    ");
    CAPTURE(wrapped);
    CHECK(lines_of(wrapped).size() > 1);
    CHECK(widest(wrapped) <= 100);
    CHECK(without_spaces(wrapped) == without_spaces(line));
  }
}

TEST_CASE("a picture-only tensor drawn by one head: one line names its values and the other heads") {
  Report r;
  attn::Ten4 w = attn::Ten4::from_shape({1, 3, 2, 2});
  for (std::size_t i = 0; i < w.size(); ++i) w.data()[i] = (i % 2) ? 0.75f : 0.25f;
  r.stage("Heads").show("attn_weights", w, {"a", "b"}, {"a", "b"}).attention_weights().picture_only().draw_head(1);
  const std::string text = text_of(r, TextOptions{});
  CAPTURE(text);
  // The picture's title names the tensor: no name line above it.
  CHECK(contains(text, "    out: attn_weights (1, 3, 2, 2)\n\nheatmaps of attn_weights (1, 3, 2, 2), head 1 of 3"));
  CHECK_FALSE(contains(text, "tensor("));  // the values are left out
  CHECK(contains(text, "[0, 1]\n"));       // head 1 drawn
  CHECK_FALSE(contains(text, "[0, 0]\n"));
  CHECK_FALSE(contains(text, "[0, 2]\n"));
  CHECK(contains(text, "(attn_weights: its values and the pictures of heads 0 and 2: --full prints them)\n"));
  TextOptions full;
  full.full = true;
  const std::string whole = text_of(r, full);
  CAPTURE(whole);
  CHECK(contains(whole, "tensor([[[[0.2500"));  // the values, printed
  CHECK(contains(whole, "[0, 0]"));  // every head, side by side
  CHECK(contains(whole, "[0, 2]"));
  CHECK_FALSE(contains(whole, "--full prints"));
  // --head mean (the learner's choice) wins over the lesson's head.
  TextOptions mean;
  mean.heatmap.view.heads = attn::report::PanelView::Heads::mean;
  const std::string averaged = text_of(r, mean);
  CHECK(contains(averaged, "mean of 3 heads"));
  CHECK(contains(averaged, "(attn_weights: its values: --full prints them)\n"));
}
