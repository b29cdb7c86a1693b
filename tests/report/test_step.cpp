// The step-through loop, driven by a list of keys instead of a keyboard (the pty test in
// tests/cli drives the real terminal). It must show stages in the order the keys ask for, keep
// "back" at stage 1 from going anywhere, and stop cleanly on quit.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/step.hpp"
#include "report/text_width.hpp"
#include "report/text_sink.hpp"

using namespace attn::report;

namespace {

class ScriptedKeys : public KeySource {
 public:
  explicit ScriptedKeys(std::vector<Key> keys) : keys_(std::move(keys)) {}
  Key read_key() override {
    if (next_ < keys_.size()) return keys_[next_++];
    return Key::quit;  // a script that runs out is the end of input
  }
  std::size_t used() const { return next_; }

 private:
  std::vector<Key> keys_;
  std::size_t next_ = 0;
};

// Records which stages a sink was shown, in order.
class Recorder : public Sink {
 public:
  std::string log;
  void begin(const Header&, std::size_t total) override { log += "begin/" + std::to_string(total) + " "; }
  void stage(const Stage& s, std::size_t) override { log += std::to_string(s.index) + " "; }
  void end() override { log += "end"; }
};

Report three_stages() {
  Report r;
  r.header.lesson = "causal";
  r.stage("one");
  r.stage("two");
  r.stage("three");
  return r;
}

std::size_t count_of(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("next, back and quit move through the stages") {
  const Report r = three_stages();
  Recorder sink;
  std::ostringstream out;
  ScriptedKeys keys({Key::next, Key::back, Key::next, Key::next, Key::quit});
  CHECK(step_through(r, sink, out, keys, {}) == StepEnd::quit);
  CHECK(sink.log == "begin/3 1 2 1 2 3 end");
}

TEST_CASE("next after the last stage finishes, back at the first shows it again") {
  const Report r = three_stages();
  Recorder sink;
  std::ostringstream out;
  ScriptedKeys keys({Key::back, Key::next, Key::next, Key::next});
  CHECK(step_through(r, sink, out, keys, {}) == StepEnd::finished);
  CHECK(sink.log == "begin/3 1 1 2 3 end");
  CHECK(keys.used() == 4);
}

TEST_CASE("other keys are ignored, the end of input quits") {
  const Report r = three_stages();
  Recorder sink;
  std::ostringstream out;
  ScriptedKeys keys({Key::other, Key::other, Key::next});
  CHECK(step_through(r, sink, out, keys, {}) == StepEnd::quit);
  CHECK(sink.log == "begin/3 1 2 end");
}

TEST_CASE("the footer says where the learner is, and is blanked before the next stage") {
  const Report r = three_stages();
  std::ostringstream out;
  TextSink sink(out, {});
  ScriptedKeys keys({Key::next, Key::quit});
  step_through(r, sink, out, keys, {});
  const std::string s = out.str();
  const std::string footer1 = "stage 1/3 \u00b7 n next \u00b7 p back \u00b7 q quit";
  const auto at = s.find(footer1);
  REQUIRE(at != std::string::npos);
  // Then a carriage return, blanks over the footer's 36 columns, and another carriage return.
  CHECK(s.compare(at + footer1.size(), 38, "\r" + std::string(36, ' ') + "\r") == 0);
  CHECK(s.find("[2/3] two") > at);
  CHECK(s.find("stage 2/3") != std::string::npos);
  CHECK(s.find("[3/3]") == std::string::npos);  // quit at stage 2
  CHECK(s.find("\x1b") == std::string::npos);   // no highlight asked for
}

TEST_CASE("footer text: the last stage ends, a narrow terminal gets a short form") {
  CHECK(step_footer(4, 9, 80) == "stage 4/9 \u00b7 n next \u00b7 p back \u00b7 q quit");
  CHECK(step_footer(9, 9, 80) == "stage 9/9 \u00b7 n end \u00b7 p back \u00b7 q quit");
  CHECK(step_footer(4, 9, 20) == "4/9 \u00b7 n p q");
}

TEST_CASE("a footer never wraps, however narrow the terminal: a 10-column one keeps the keys") {
  // A footer one column too wide wraps, scrolls the screen a line and pushes the heading off.
  CHECK(step_footer(4, 14, 10) == "4/14 n p q");
  CHECK(page_footer(6, 14, 1, 18, 57, 10, false, false) == "6/14 1-18");
  for (std::size_t width = 1; width <= 60; ++width) {
    CAPTURE(width);
    CHECK(attn::report::display_width(step_footer(12, 14, width)) <= width);
    CHECK(attn::report::display_width(page_footer(12, 14, 100, 118, 1057, width, false, false)) <= width);
  }
}

// --- paging: a stage taller than the window ------------------------------------------------------

namespace {

// Stage 1 has a heading of 3 lines (title, equation, "out:") and a body of 20 one-line notes; stage 2
// is short. Rendered by a TextSink, as the CLI does.
Report tall_then_short() {
  Report r;
  r.header.lesson = "causal";
  auto& s = r.stage("tall", "y = f(x)");
  const std::vector<float> y = {1.f, 2.f};
  s.show_copy("y", {2}, y.data());
  for (int i = 1; i <= 20; ++i) s.note("note " + std::to_string(i));
  r.stage("short");
  return r;
}

StepOptions paged(std::size_t rows, TextSink& render_sink, std::ostringstream& render_out) {
  StepOptions o;
  o.window = [rows] { return std::pair<std::size_t, std::size_t>{80, rows}; };
  o.render = [&](const Stage& s, std::size_t total) {
    render_out.str("");
    render_sink.stage(s, total);
    return render_out.str();
  };
  return o;
}

}  // namespace

TEST_CASE("page_starts cuts a body into pages of at most the budget's rows") {
  CHECK(page_starts({1, 1, 1, 1, 1}, 2) == std::vector<std::size_t>{0, 2, 4});
  CHECK(page_starts({1, 3, 1}, 3) == std::vector<std::size_t>{0, 1, 2});  // a wrapped line of 3 rows
  CHECK(page_starts({5}, 2) == std::vector<std::size_t>{0});               // taller than a page: alone
  CHECK(page_starts({}, 4) == std::vector<std::size_t>{0});
}

TEST_CASE("page footers: where in the stage, more / next / end, and a narrow form") {
  CHECK(page_footer(6, 14, 1, 18, 57, 80, false, false) ==
        "stage 6/14 \u00b7 lines 1-18 of 57 \u00b7 n more \u00b7 p back \u00b7 q quit");
  CHECK(page_footer(6, 14, 40, 57, 57, 80, true, false).find("n next") != std::string::npos);
  CHECK(page_footer(14, 14, 40, 57, 57, 80, true, true).find("n end") != std::string::npos);
  CHECK(page_footer(6, 14, 1, 18, 57, 30, false, false) == "6/14 1-18/57 \u00b7 n p q");
}

TEST_CASE("a tall stage is paged under its heading: next, back and redraw move by pages") {
  const Report r = tall_then_short();
  std::ostringstream out, render_out;
  TextSink sink(out, {}), render_sink(render_out, {});
  // 12 rows: the heading's 3 (title, equation, "out:"), the footer's 1, 8 for the body. The body is
  // 43 lines: a blank, "y (2,)", its values, then 20 times a blank and a note.
  ScriptedKeys keys({Key::next, Key::redraw, Key::back, Key::next, Key::next, Key::next, Key::back, Key::quit});
  CHECK(step_through(r, sink, out, keys, paged(12, render_sink, render_out)) == StepEnd::quit);
  const std::string s = out.str();
  // Every page footer of stage 1, in order: the keys' moves, page by page.
  std::vector<std::string> footers;
  for (std::size_t at = s.find("stage "); at != std::string::npos; at = s.find("stage ", at + 1))
    footers.push_back(s.substr(at, s.find(" \u00b7 n", at) - at));
  const std::vector<std::string> expected = {"stage 1/2 \u00b7 lines 1-8 of 43",   "stage 1/2 \u00b7 lines 9-16 of 43",
                                             "stage 1/2 \u00b7 lines 9-16 of 43", "stage 1/2 \u00b7 lines 1-8 of 43",
                                             "stage 1/2 \u00b7 lines 9-16 of 43", "stage 1/2 \u00b7 lines 17-24 of 43",
                                             "stage 1/2 \u00b7 lines 25-32 of 43", "stage 1/2 \u00b7 lines 17-24 of 43"};
  CHECK(footers == expected);
  CHECK(count_of(s, "[1/2] tall") == 8);  // the title on every page
  CHECK(count_of(s, "    y = f(x)") == 8);
}

TEST_CASE("after a stage's last page comes the next stage, and back from a first page is the previous stage") {
  const Report r = tall_then_short();
  std::ostringstream out, render_out;
  TextSink sink(out, {}), render_sink(render_out, {});
  std::vector<Key> script(6, Key::next);  // 43 lines in pages of 8: 6 pages, then stage 2
  script.push_back(Key::back);             // stage 2 fits: back goes to stage 1, its first page
  script.push_back(Key::quit);
  ScriptedKeys keys(script);
  CHECK(step_through(r, sink, out, keys, paged(12, render_sink, render_out)) == StepEnd::quit);
  const std::string s = out.str();
  CHECK(s.find("lines 41-43 of 43 \u00b7 n next") != std::string::npos);  // the last page, filled out
  CHECK(s.find("note 20") != std::string::npos);
  const std::size_t two = s.find("stage 2/2 \u00b7 n end");
  REQUIRE(two != std::string::npos);
  CHECK(s.find("stage 1/2 \u00b7 lines 1-8 of 43", two) != std::string::npos);
}
