// The report layer: how a lesson's stages are numbered and collected, the order in which a sink
// hears about them, and what the terminal printer makes of them. Lessons never print; if this
// layer drops a stage, misnumbers it or loses a shape line, every lesson is wrong at once.
// (Exact whole-lesson output is the golden tests' job; these check the parts and their order.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "io/utf8.hpp"
#include "report/manifest.hpp"
#include "report/nonfinite.hpp"
#include "report/stage.hpp"
#include "report/text_sink.hpp"

using attn::Mat;
using attn::report::Report;
using attn::report::Stage;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Writes down every call, so the test can compare the sequence a sink was told.
class RecordingSink : public attn::report::Sink {
 public:
  std::vector<std::string> events;
  void begin(const attn::report::Header& h, std::size_t total) override {
    events.push_back("begin " + h.lesson + " " + std::to_string(total));
  }
  void stage(const Stage& s, std::size_t total) override {
    events.push_back("stage " + std::to_string(s.index) + "/" + std::to_string(total) + " " + s.title);
  }
  void end() override { events.push_back("end"); }
};

// A three-stage report shaped like a real lesson's.
Report sample_report() {
  Report r;
  r.header.lesson = "causal";
  r.header.title = "Causal attention";
  r.header.follows = "Build an LLM from scratch, 3.5";
  r.header.setting = {"seed 789", "d_out 2"};
  r.header.reproduce = {"torch.manual_seed(789)"};
  const Mat x = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}};  // (T, d_in)
  const Mat scores = {{0.5f, 0.25f}, {-1.0f, 2.0f}};              // (T, T)
  r.stage("Inputs", "x = embeddings").show("x", x, {"Your", "journey"});
  r.stage("Scores", "attn_scores = queries @ keys^T")
      .in("queries", x)
      .in("keys", x)
      .show("attn_scores", scores)
      .note("Each score says how much one token cares about another.")
      .check("scores are finite", "non-finite scores", 0.0, attn::report::Relation::AtMost, 0.0);
  r.stage("Weights").show("attn_weights", scores).table({"token", "sum"}, {{"Your", "1.0000"}});
  return r;
}

std::string render(const Report& r, attn::report::TextOptions opts = {}) {
  std::ostringstream out;
  attn::report::TextSink sink(out, opts);
  attn::report::deliver(r, sink);
  return out.str();
}

}  // namespace

// ------------------------------------------------------------------------- stages and report

TEST_CASE("Report::stage numbers stages from 1 in the order they are added") {
  Report r;
  Stage& first = r.stage("one", "a = b");
  Stage& second = r.stage("two");
  r.stage("three");
  REQUIRE(r.stages().size() == 3);
  CHECK(r.stages()[0].index == 1);
  CHECK(r.stages()[1].index == 2);
  CHECK(r.stages()[2].index == 3);
  CHECK(r.stages()[0].title == "one");
  CHECK(r.stages()[0].equation == "a = b");
  CHECK(r.stages()[1].equation.empty());
  // Lessons hold on to a Stage& while adding later ones; it must still be the same stage.
  first.note("added late");
  second.check("also late", "v", 0.0, attn::report::Relation::AtMost, 0.0);
  CHECK(r.stages()[0].items.size() == 1);
  CHECK(r.stages()[1].items.size() == 1);
}

TEST_CASE("Stage::outputs lists the shown tensors only, in order") {
  const Mat a = xt::zeros<float>({2, 3});
  const attn::Ten3 b = xt::zeros<float>({4, 2, 2});
  Stage s;
  s.in("x", a).show("first", a).note("n").show("second", b).table({"h"}, {{"v"}}).check("c", "v", 0.0, attn::report::Relation::AtMost, 0.0);
  const auto outs = s.outputs();
  REQUIRE(outs.size() == 2);
  CHECK(outs[0].name == "first");
  CHECK(outs[0].shape == attn::Shape{2, 3});
  CHECK(outs[1].name == "second");
  CHECK(outs[1].shape == attn::Shape{4, 2, 2});
  REQUIRE(s.inputs.size() == 1);  // in() records a shape, not an output
  CHECK(s.inputs[0].name == "x");
  CHECK(s.items.size() == 5);
}

TEST_CASE("Stage::show copies the values row-major and keeps the labels") {
  const Mat m = {{1, 2, 3}, {4, 5, 6}};
  Stage s;
  s.show("m", m, {"r0", "r1"}, {"c0", "c1", "c2"});
  const auto& t = std::get<attn::report::TensorItem>(s.items.at(0));
  CHECK(std::vector<float>(t.values.begin(), t.values.end()) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(t.values.data() != m.data());  // a copy: the stage owns it
  CHECK(t.row_labels == attn::report::Labels{"r0", "r1"});
  CHECK(t.col_labels == attn::report::Labels{"c0", "c1", "c2"});
}

TEST_CASE("Stage::show of a shared or held tensor points at the lesson's buffer instead of copying it") {
  auto m = std::make_shared<const Mat>(Mat{{1, 2, 3}, {4, 5, 6}});
  Stage s;
  s.show("m", m);
  const attn::report::Held<Mat> held(Mat{{7, 8}});
  s.show("held", held);
  const auto& t = std::get<attn::report::TensorItem>(s.items.at(0));
  CHECK(t.values.data() == m->data());  // the same memory, no copy
  CHECK(t.values.size() == 6);
  CHECK(t.values.at(5) == 6.0f);
  CHECK_THROWS_AS(t.values.at(6), std::out_of_range);
  const auto& h = std::get<attn::report::TensorItem>(s.items.at(1));
  CHECK(h.values.data() == held->data());
  CHECK(h.shape == attn::Shape{1, 2});
  // The stage keeps the buffer alive after the lesson's own handle is gone.
  const float* where = m->data();
  m.reset();
  CHECK(t.values.data() == where);
  CHECK(t.values[4] == 5.0f);
}

TEST_CASE("a report that keeps no values records names and shapes only") {
  Report r;
  r.keep_values = false;
  Stage& s = r.stage("Scores");
  s.show("m", Mat{{1, 2}, {3, 4}});
  s.show("not computed", attn::report::Held<Mat>(attn::Shape{5000, 5000}));
  for (const auto& item : s.items) {
    const auto& t = std::get<attn::report::TensorItem>(item);
    CHECK(t.values.empty());
  }
  CHECK(std::get<attn::report::TensorItem>(s.items.at(1)).shape == attn::Shape{5000, 5000});
  // A report that keeps values refuses a tensor that has none: a sink would read nothing.
  Report keeps;
  CHECK_THROWS_AS(keeps.stage("x").show("not computed", attn::report::Held<Mat>(attn::Shape{2, 2})), std::logic_error);
}

TEST_CASE("hold computes only when asked, and a computed shape must be the declared one") {
  int calls = 0;
  auto make = [&] {
    ++calls;
    return Mat{{1, 2, 3}};
  };
  const auto skipped = attn::report::hold(false, {1, 3}, make);
  CHECK(calls == 0);
  CHECK_FALSE(skipped.computed());
  CHECK(skipped.shape() == attn::Shape{1, 3});
  CHECK_THROWS_AS(*skipped, std::logic_error);
  const auto made = attn::report::hold(true, {1, 3}, make);
  CHECK(calls == 1);
  CHECK((*made)(0, 2) == 3.0f);
  CHECK_THROWS_AS(attn::report::hold(true, {3, 1}, make), std::logic_error);  // declared (3, 1), made (1, 3)
}

TEST_CASE("bytes: binary units") {
  CHECK(attn::report::bytes(512) == "512 B");
  CHECK(attn::report::bytes(1536) == "1.50 KiB");
  CHECK(attn::report::bytes(4.0 * 24 * 4096 * 4096) == "1.50 GiB");
  CHECK(attn::report::bytes(100.0 * 1024 * 1024) == "100 MiB");
}

TEST_CASE("deliver tells the sink begin, each stage, then end") {
  RecordingSink sink;
  attn::report::deliver(sample_report(), sink);
  CHECK(sink.events == std::vector<std::string>{"begin causal 3", "stage 1/3 Inputs", "stage 2/3 Scores",
                                                "stage 3/3 Weights", "end"});
  RecordingSink empty;
  attn::report::deliver(Report{}, empty);
  CHECK(empty.events == std::vector<std::string>{"begin  0", "end"});
}

// ------------------------------------------------------------------------------- text sink

TEST_CASE("TextSink prints the header and each stage with its equation and shapes") {
  const std::string out = render(sample_report());
  CHECK(contains(out, "attn lesson causal: Causal attention\n"));
  CHECK(contains(out, "follows: Build an LLM from scratch, 3.5\n"));
  CHECK(contains(out, "setting: seed 789, d_out 2\n"));
  CHECK(contains(out, "    torch.manual_seed(789)\n"));
  CHECK(contains(out, "3 stages\n"));
  CHECK(contains(out, "[2/3] Scores\n    attn_scores = queries @ keys^T\n"));
  CHECK(contains(out, "    in:  queries (2, 3), keys (2, 3)\n"));
  CHECK(contains(out, "    out: attn_scores (2, 2)\n"));
  CHECK(contains(out, "attn_scores (2, 2)\ntensor([[ 0.5000,  0.2500],\n        [-1.0000,  2.0000]])\n"));
  CHECK(contains(out, "Each score says how much one token cares about another.\n"));
  CHECK(contains(out, "check passed: scores are finite (non-finite scores = 0.00e+00 <= 0)\n"));
  // A stage without an equation goes straight to its shapes.
  CHECK(contains(out, "[3/3] Weights\n    out: attn_weights (2, 2)\n"));
  // Row labels reach the printed tensor.
  CHECK(contains(out, "  # journey"));
  // Stages in order, each once.
  const auto p1 = out.find("[1/3]"), p2 = out.find("[2/3]"), p3 = out.find("[3/3]");
  CHECK(p1 < p2);
  CHECK(p2 < p3);
  CHECK(p3 != std::string::npos);
  CHECK(out.find("[2/3]", p2 + 1) == std::string::npos);
}

TEST_CASE("TextSink in shapes-only mode keeps the shapes and drops the values") {
  attn::report::TextOptions opts;
  opts.shapes_only = true;
  const std::string out = render(sample_report(), opts);
  CHECK_FALSE(contains(out, "tensor("));
  CHECK(contains(out, "[2/3] Scores"));
  CHECK(contains(out, "    in:  queries (2, 3), keys (2, 3)\n"));
  CHECK(contains(out, "    out: attn_scores (2, 2)\n"));
  CHECK(contains(out, "check passed: scores are finite"));  // narration and checks stay
}

TEST_CASE("TextSink passes the print options to the tensors") {
  attn::report::TextOptions opts;
  opts.print.precision = 2;
  const std::string out = render(sample_report(), opts);
  CHECK(contains(out, "tensor([[ 0.50,  0.25],\n        [-1.00,  2.00]])"));
}

// -------------------------------------------------------------------------- wrap and tables

TEST_CASE("wrap breaks between words at the width") {
  using attn::report::wrap;
  CHECK(wrap("one two three four five", 10, "", "") == "one two\nthree four\nfive\n");
  // A prefix counts towards the width; continuation lines get the other prefix.
  CHECK(wrap("rows sum to one", 14, "check: ", "       ") == "check: rows\n       sum to\n       one\n");
  // A word longer than the width gets a line of its own rather than being cut.
  CHECK(wrap("incomprehensibilities ok", 10, "", "") == "incomprehensibilities\nok\n");
  CHECK(wrap("  spaced   out  ", 80, "", "") == "spaced out\n");
  CHECK(wrap("", 10, "check: ", "") == "");
  // Measured in columns: "été" is 3 wide in 5 bytes, "日本" 4 wide in 6.
  CHECK(wrap("\xc3\xa9t\xc3\xa9 abcdef", 10, "", "") == "\xc3\xa9t\xc3\xa9 abcdef\n");
  CHECK(wrap("\xe6\x97\xa5\xe6\x9c\xac abcdef", 10, "", "") == "\xe6\x97\xa5\xe6\x9c\xac\nabcdef\n");
}

TEST_CASE("render_table aligns words left and numbers right under a rule") {
  attn::report::TableItem t;
  t.header = {"token", "weight", "note"};
  t.rows = {{"Your", "0.1385", "low"}, {"journey", "0.2379", "high"}, {"x", "1.5", "-"}};
  CHECK(attn::report::render_table(t) ==
        "  token    weight  note\n"
        "  -------  ------  ----\n"
        "  Your     0.1385  low\n"
        "  journey  0.2379  high\n"
        "  x           1.5  -\n");
}

TEST_CASE("render_table pads short rows and uses the widest cell") {
  attn::report::TableItem t;
  t.header = {"n", "scaled variance"};
  t.rows = {{"1024", "1.02"}, {"2"}};
  CHECK(attn::report::render_table(t) ==
        "     n  scaled variance\n"
        "  ----  ---------------\n"
        "  1024             1.02\n"
        "     2\n");
}

TEST_CASE("fixed and scientific format numbers for checks and tables") {
  CHECK(attn::report::fixed(0.123456, 4) == "0.1235");
  CHECK(attn::report::fixed(-2.0, 2) == "-2.00");
  CHECK(attn::report::scientific(12345.0, 2) == "1.23e+04");
  CHECK(attn::report::scientific(0.000123, 1) == "1.2e-04");
}

// ------------------------------------------------------------------------------- checks

using attn::report::check_text;
using attn::report::CheckItem;
using attn::report::Relation;

// The one check a stage holds.
const CheckItem& only_check(const Stage& s) {
  const CheckItem* found = nullptr;
  for (const auto& item : s.items)
    if (const auto* c = std::get_if<CheckItem>(&item)) found = c;
  REQUIRE(found != nullptr);
  return *found;
}

TEST_CASE("a check is decided by its value and bound, never by its sentence") {
  Report r;
  auto& s = r.stage("s");
  s.check("rows sum to 1", "max |sum - 1|", 5.96e-8, Relation::AtMost, 1e-6);
  CHECK(std::get<CheckItem>(s.items.back()).passed);
  CHECK(check_text(std::get<CheckItem>(s.items.back())) ==
        "check passed: rows sum to 1 (max |sum - 1| = 5.96e-08 <= 1e-06)");
  s.check("rows sum to 1", "max |sum - 1|", 0.112, Relation::AtMost, 0.1);
  CHECK_FALSE(std::get<CheckItem>(s.items.back()).passed);
  CHECK(check_text(std::get<CheckItem>(s.items.back())) == "check FAILED: rows sum to 1 (max |sum - 1| = 0.112 > 0.1)");
  s.check("the state differs", "max |diff|", 0.0, Relation::AtLeast, 1e-6);
  CHECK(check_text(std::get<CheckItem>(s.items.back())) == "check FAILED: the state differs (max |diff| = 0.00e+00 < 1e-06)");
  // The bound itself passes: <= and >= are inclusive.
  s.check("exact", "max |diff|", 0.0, Relation::AtMost, 0.0);
  CHECK(std::get<CheckItem>(s.items.back()).passed);
}

TEST_CASE("NaN fails every check, whichever way the bound points") {
  const double nan = std::nan("");
  CHECK_FALSE(attn::report::holds(nan, Relation::AtMost, 1e30));
  CHECK_FALSE(attn::report::holds(nan, Relation::AtLeast, -1e30));
  Report r;
  r.stage("s").check("rows sum to 1", "max |sum - 1|", nan, Relation::AtMost, 1e-6);
  const CheckItem& c = only_check(r.stages().front());
  CHECK_FALSE(c.passed);
  CHECK(check_text(c) == "check FAILED: rows sum to 1 (max |sum - 1| = nan, not <= 1e-06)");
}

TEST_CASE("a question answers yes or no and explains a no, and NaN leaves it unanswered") {
  Report r;
  r.stage("a").question("do the fills agree here?", "max |diff|", 0.0, Relation::AtMost, 0.0, "scores are huge");
  r.stage("b").question("do the fills agree here?", "max |diff|", 1.0, Relation::AtMost, 0.0, "scores are huge");
  r.stage("c").question("do the fills agree here?", "max |diff|", std::nan(""), Relation::AtMost, 0.0);
  r.stage("d").question("do the fills agree here?", "max |diff|", std::nan(""), Relation::AtMost, 0.0, "scores are huge",
                        "the scores hold NaN");
  CHECK(check_text(only_check(r.stages()[0])) == "question: do the fills agree here? yes (max |diff| = 0.00e+00 <= 0)");
  CHECK(check_text(only_check(r.stages()[1])) ==
        "question: do the fills agree here? no (max |diff| = 1 > 0): scores are huge");
  // NaN answers neither yes nor no, and fails the run; a reason for a no is not one for NaN, the
  // lesson's reason for NaN is.
  CHECK(check_text(only_check(r.stages()[2])) ==
        "question UNANSWERED: do the fills agree here? (max |diff| = nan, not <= 0): the numbers compared hold "
        "NaN, so the question has no answer");
  CHECK(check_text(only_check(r.stages()[3])) ==
        "question UNANSWERED: do the fills agree here? (max |diff| = nan, not <= 0): the scores hold NaN");
  CHECK(attn::report::unanswered(only_check(r.stages()[2])));
  CHECK_FALSE(attn::report::unanswered(only_check(r.stages()[1])));
  const auto failed = attn::report::failed_checks(r);
  REQUIRE(failed.size() == 2);
  CHECK(failed[0].stage == 3);
  CHECK(failed[1].stage == 4);
  // A NaN bound prints as "nan", never printf's "-nan".
  Report b;
  b.stage("e").question("same?", "max |diff|", 0.5, Relation::AtLeast, -std::nan(""));
  CHECK(check_text(only_check(b.stages()[0])) ==
        "question UNANSWERED: same? (max |diff| = 0.5, not >= nan): the numbers compared hold NaN, so the "
        "question has no answer");
  CHECK(attn::report::fixed(-std::nan(""), 4) == "nan");
  CHECK(attn::report::scientific(-std::numeric_limits<double>::infinity(), 2) == "-inf");
}

TEST_CASE("failed_checks lists the failed invariants with their stages, in order") {
  Report r;
  r.stage("one").check("a", "v", 1.0, Relation::AtMost, 2.0);
  r.stage("two").check("b", "v", 3.0, Relation::AtMost, 2.0).check("c", "v", 0.0, Relation::AtLeast, 1.0);
  r.stage("three").question("d?", "v", 3.0, Relation::AtMost, 2.0);
  const auto failed = attn::report::failed_checks(r);
  REQUIRE(failed.size() == 2);
  CHECK(failed[0].stage == 2);
  CHECK(failed[0].check->text == "b");
  CHECK(failed[1].check->text == "c");
}

TEST_CASE("measured prints values the way checks show them") {
  CHECK(attn::report::measured(0.0) == "0.00e+00");
  CHECK(attn::report::measured(0.112) == "0.112");
  CHECK(attn::report::measured(5.96e-8) == "5.96e-08");
  CHECK(attn::report::measured(1e9) == "1.00e+09");
  CHECK(attn::report::measured(std::nan("")) == "nan");
  CHECK(attn::report::measured(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("TextSink shows a failed check as failed, and keeps its numbers on one line") {
  Report r;
  r.stage("s").check("every row of a rather long tensor name sums to one as promised", "max |sum - 1|", 0.5,
                     Relation::AtMost, 1e-6);
  const std::string out = render(r);
  CHECK(contains(out, "check FAILED: every row of a rather long tensor name sums to one as promised\n"
                      "    (max |sum - 1| = 0.5 > 1e-06)\n"));
}

TEST_CASE("the manifest carries each check as text, value, bound and verdict") {
  Report r;
  r.header.lesson = "causal";
  r.stage("s")
      .check("rows sum to 1", "max |sum - 1|", std::nan(""), Relation::AtMost, 1e-6)
      .question("same?", "max |diff|", 0.0, Relation::AtMost, 0.0);
  const std::string j = attn::report::manifest_json(r.header, "attn lesson causal", r.stages(), true);
  CHECK(contains(j, "\"format\": \"attn-manifest-3\""));
  CHECK(contains(j, "\"checks\": {\"passed\": 0, \"failed\": 1, \"questions\": 1}"));
  CHECK(contains(j, "{\"kind\": \"check\", \"text\": \"rows sum to 1\", \"measure\": \"max |sum - 1|\", "
                    "\"value\": \"nan\", \"relation\": \"<=\", \"bound\": 9.9999999999999995e-07, \"passed\": false"));
  CHECK(contains(j, "\"kind\": \"question\", \"text\": \"same?\""));
  CHECK(contains(j, "\"passed\": true, \"answer\": \"yes\""));
}

TEST_CASE("json_string replaces each maximal invalid UTF-8 sequence with U+FFFD and keeps valid text") {
  using attn::report::json_string;
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  CHECK(json_string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  CHECK(json_string("\xFF\xFE") == "\"" + r + r + "\"");          // never UTF-8: one each
  CHECK(json_string("a\xE2\x82") == "\"a" + r + "\"");            // cut short at the end: one
  CHECK(json_string("\xE2\x82z") == "\"" + r + "z\"");            // cut short by an ASCII byte
  CHECK(json_string("\xC0\x80") == "\"" + r + r + "\"");          // overlong NUL
  CHECK(json_string("\xED\xA0\x80") == "\"" + r + r + r + "\"");  // a surrogate
  CHECK(json_string("\xF4\x90\x80\x80") == "\"" + r + r + r + r + "\"");  // past U+10FFFF
  CHECK(json_string("\x80") == "\"" + r + "\"");                  // a lone continuation byte
  CHECK(json_string("q\"\\\x01") == "\"q\\\"\\\\\\u0001\"");
}

TEST_CASE("parse_setting reads a setting entry as a name, a value and a note") {
  using attn::report::parse_setting;
  auto check = [](const std::string& item, const std::string& name, const std::string& value, const std::string& note) {
    CAPTURE(item);
    const auto e = parse_setting(item);
    CHECK(e.name == name);
    CHECK(e.value == value);
    CHECK(e.note == note);
  };
  check("seed 789", "seed", "789", "");
  check("source words 6", "source_words", "6", "");
  check("keys per row 8", "keys_per_row", "8", "");
  check("held-out 64", "held_out", "64", "");
  check("causal True", "causal", "True", "");
  check("preset llama", "preset", "llama", "");
  check("valid_lens [3, 2, 1]", "valid_lens", "[3, 2, 1]", "");
  check("d_k in (2, 8, 32)", "d_k", "(2, 8, 32)", "");
  check("seed 2014 (the alignment model)", "seed", "2014", "the alignment model");
  check("states from my dir", "states", "my dir", "");
  check("weights from w (torch layout (out, in))", "weights", "w", "torch layout (out, in)");
  check("source embeddings from x.npy", "source_embeddings", "x.npy", "");
  check("lr 0.01", "lr", "0.01", "");
}

TEST_CASE("shell_command quotes only the words that need it, so a shell reads back the same words") {
  using attn::report::shell_command;
  CHECK(shell_command({"attn", "lesson", "causal", "--dump", "out/c-1"}) == "attn lesson causal --dump out/c-1");
  CHECK(shell_command({"attn", "--tokens", "the cat"}) == "attn --tokens 'the cat'");
  CHECK(shell_command({"attn", "--tokens", "it's"}) == "attn --tokens 'it'\\''s'");
  CHECK(shell_command({"attn", "--tokens", ""}) == "attn --tokens ''");
  CHECK(shell_command({"attn", "--tokens", "caf\xC3\xA9 $HOME"}) == "attn --tokens 'caf\xC3\xA9 $HOME'");
  CHECK(shell_command({"attn", "--tokens", "a\xFF'\\\n"}) == "attn --tokens $'a\\xff\\'\\\\\\x0a'");
  // A sequence cut short keeps both its bytes; a valid character beside them stays as it is.
  CHECK(shell_command({"attn", "x\xE2\x82 \xC3\xA9"}) == "attn $'x\\xe2\\x82 \xC3\xA9'");
}

TEST_CASE("a manifest without values lists names and shapes, and version 3's setting is an object") {
  Report r = sample_report();
  r.header.setting = {"seed 789", "d_out 2", "causal True", "seed 3 (again)"};
  const std::string j = attn::report::manifest_json(r.header, "attn lesson causal", r.stages(),
                                                    attn::report::ValueMode::None);
  CHECK(contains(j, "\"version\": 3,"));
  CHECK(contains(j, "\"setting\": {\"seed\": 789, \"d_out\": 2, \"causal\": true, \"seed_2\": 3},"));
  CHECK(contains(j, "\"setting_notes\": {\"seed_2\": \"again\"},"));
  CHECK(contains(j, "\"tokens\": [\"Your\", \"journey\"],"));
  CHECK(contains(j, "{\"name\": \"x\", \"shape\": [2, 3], \"row_labels\": 0}"));
  CHECK(contains(j, "\"mode\": \"none\""));
  CHECK_FALSE(contains(j, "\"file\""));
  CHECK_FALSE(contains(j, "\"values\": ["));
}

namespace {

Mat two_by_three(const std::vector<float>& v) {
  Mat m({2, 3});
  std::copy(v.begin(), v.end(), m.begin());
  return m;
}

// A report with x, then scores, then weights, each (2, 3); `scores` and `weights` as given.
Report nan_run(const std::vector<float>& scores, const std::vector<float>& weights) {
  Report r;
  r.stage("input").show("x", two_by_three({1, 2, 3, 4, 5, 6}));
  r.stage("scores").show("scores", two_by_three(scores));
  r.stage("softmax").show("weights", two_by_three(weights)).attention_weights();
  return r;
}

using attn::report::Item;
using attn::report::NoteItem;
using attn::report::TensorItem;

const TensorItem& tensor_of(const Stage& s, std::size_t k) {
  std::size_t seen = 0;
  for (const Item& item : s.items)
    if (const auto* t = std::get_if<TensorItem>(&item))
      if (seen++ == k) return *t;
  throw std::logic_error("no such tensor");
}

std::size_t notes_in(const Stage& s) {
  std::size_t n = 0;
  for (const Item& item : s.items) n += std::holds_alternative<NoteItem>(item) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("explain_nonfinite names an overflow where inf first appears") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Report r = nan_run({1, inf, 2, 3, 4, 5}, {nan, nan, nan, 0.2f, 0.3f, 0.5f});
  attn::report::explain_nonfinite(r, false);
  CHECK(tensor_of(r.stages()[2], 0).nan_cause == "an overflow to inf, first in `scores` [0, 1] (stage 2)");
  REQUIRE(notes_in(r.stages()[1]) == 1);
  CHECK(notes_in(r.stages()[2]) == 0);
  CHECK(contains(std::get<NoteItem>(r.stages()[1].items.back()).text, "Overflow: `scores` holds inf (first at [0, 1])"));
}

TEST_CASE("explain_nonfinite calls NaN under an all -inf row a masked row, and adds no note") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Report r = nan_run({1, 2, 3, -inf, -inf, -inf}, {0.2f, 0.3f, 0.5f, nan, nan, nan});
  attn::report::explain_nonfinite(r, false);
  CHECK(tensor_of(r.stages()[2], 0).nan_cause == attn::report::kMaskedRowNan);
  CHECK(notes_in(r.stages()[1]) + notes_in(r.stages()[2]) == 0);
  // Only one row masked, the other NaN too: not every NaN row is explained by a mask.
  Report part = nan_run({1, 2, 3, -inf, -inf, -inf}, {nan, nan, nan, nan, nan, nan});
  attn::report::explain_nonfinite(part, false);
  CHECK(tensor_of(part.stages()[2], 0).nan_cause == "made from finite values, first in `weights` [0, 0] (stage 3)");
  CHECK(notes_in(part.stages()[2]) == 1);
}

TEST_CASE("explain_nonfinite keeps a lesson's masked-row cause unless the input or an overflow made the NaN") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Report r = nan_run({1, 2, 3, 4, 5, 6}, {0.2f, 0.3f, 0.5f, nan, nan, nan});
  r.stages_to_annotate()[2].nan_from_masked_rows();  // the lesson masked row 1 on purpose
  attn::report::explain_nonfinite(r, false);
  CHECK(tensor_of(r.stages()[2], 0).nan_cause == attn::report::kMaskedRowNan);
  CHECK(notes_in(r.stages()[2]) == 0);
  Report over = nan_run({inf, 2, 3, 4, 5, 6}, {nan, nan, nan, nan, nan, nan});
  over.stages_to_annotate()[2].nan_from_masked_rows();
  attn::report::explain_nonfinite(over, false);
  CHECK(contains(tensor_of(over.stages()[2], 0).nan_cause, "an overflow to inf"));
  Report input = nan_run({1, 2, 3, 4, 5, 6}, {nan, nan, nan, nan, nan, nan});
  input.stages_to_annotate()[2].nan_from_masked_rows();
  attn::report::explain_nonfinite(input, true);
  CHECK(tensor_of(input.stages()[2], 0).nan_cause == "from the input's nan or inf (kept by --allow-nonfinite)");
  // Finite everywhere: nothing said, nothing set.
  Report fine = nan_run({1, 2, 3, 4, 5, 6}, {0.2f, 0.3f, 0.5f, 0.2f, 0.3f, 0.5f});
  attn::report::explain_nonfinite(fine, false);
  CHECK(tensor_of(fine.stages()[2], 0).nan_cause.empty());
  CHECK(notes_in(fine.stages()[1]) + notes_in(fine.stages()[2]) == 0);
}

TEST_CASE("io/utf8: one character's length, the invalid stretch one U+FFFD replaces, its code point") {
  using attn::utf8_code_point;
  using attn::utf8_invalid_length;
  using attn::utf8_length;
  CHECK(utf8_length("a", 0) == 1);
  CHECK(utf8_length("\xC3\xA9", 0) == 2);
  CHECK(utf8_length("\xE2\x82\xAC", 0) == 3);
  CHECK(utf8_length("\xF0\x9F\x98\x80", 0) == 4);
  CHECK(utf8_length("\x80", 0) == 0);              // a stray continuation byte
  CHECK(utf8_length("\xC0\x80", 0) == 0);          // overlong
  CHECK(utf8_length("\xE0\x80\x80", 0) == 0);      // overlong
  CHECK(utf8_length("\xED\xA0\x80", 0) == 0);      // a surrogate
  CHECK(utf8_length("\xF4\x90\x80\x80", 0) == 0);  // past U+10FFFF
  CHECK(utf8_length("\xE2\x82", 0) == 0);          // cut short
  CHECK(utf8_invalid_length("\xE2\x82", 0) == 2);
  CHECK(utf8_invalid_length("\xE0\x80\x80", 0) == 1);  // 80 cannot follow E0
  CHECK(utf8_invalid_length("\xFF", 0) == 1);
  CHECK(utf8_code_point("\xE2\x82\xAC", 0, 3) == 0x20AC);
  CHECK(utf8_code_point("\xF0\x9F\x98\x80", 0, 4) == 0x1F600);
}
