// The step-through loop, driven by a list of keys instead of a keyboard (the pty test in
// tests/cli drives the real terminal). It must show stages in the order the keys ask for, keep
// "back" at stage 1 from going anywhere, and stop cleanly on quit.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/step.hpp"
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
