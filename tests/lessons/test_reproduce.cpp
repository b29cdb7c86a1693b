// Every "reproduce in PyTorch" block rebuilds the tensors the lesson prints.
//
// For self-attention, causal and heads, in every way x and the weights can be made (the seed,
// --input .npy and text files, --weights in both layouts, --tokens, several sentences, --batch,
// presets), the header's lines are run by reproduce_runner.hpp and what they build (x, W_query,
// W_query.weight, out_proj.bias, ...) is compared with the tensors of the same name the lesson
// shows, to 1e-6. The `setting:` line names a seed exactly when the lines draw from one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <unistd.h>

#include "io/npy.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/recipe.hpp"
#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

// A scratch directory for the files a mode reads, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("attn_test_reproduce_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};
const Scratch& scratch() {
  static Scratch s;
  return s;
}

// Values that are not round in decimal, so a lost digit would show.
std::vector<float> values(std::size_t n, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.7f * static_cast<float>(i) + offset) * 0.9f;
  return v;
}

ExternalTensor npy_file(const std::string& name, const Shape& shape, float offset, const std::string& source) {
  const std::string path = scratch().path(name);
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  const auto v = values(n, offset);
  write_npy(path, shape, v.data());
  return ExternalTensor{source + " " + path, shape, v, path};
}

// A text matrix with `sep` between values (attn reads commas, semicolons and white space alike),
// a comment line and a blank line.
ExternalTensor csv_file(const std::string& name, std::size_t rows, std::size_t cols, const std::string& sep = ",") {
  const std::string path = scratch().path(name);
  const NpyArray a = [&] {
    std::ofstream out(path);
    out << "# x, one row per token\n\n";
    const auto v = values(rows * cols, 0.3f);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v[r * cols + c]));
        out << (c ? sep : "") << buf;
      }
      out << "\n";
    }
    out.close();
    return read_text_matrix(path);
  }();
  return ExternalTensor{"--input " + path, a.shape, a.values, path};
}

// --weights DIR for d_in 3, d_out 2: the three projections, out_proj and (with_bias) all biases.
void add_weights(LessonOptions& o, bool torch_layout, bool with_bias) {
  const std::string dir = torch_layout ? "w_torch" : "w_math";
  fs::create_directories(scratch().dir / dir);
  o.weights_dir = scratch().path(dir);
  o.weights_torch_layout = torch_layout;
  float offset = 1.0f;
  for (const std::string layer : {"W_query", "W_key", "W_value", "out_proj"}) {
    const std::size_t in = layer == "out_proj" ? 2 : 3, out = 2;
    const Shape shape = torch_layout ? Shape{out, in} : Shape{in, out};
    o.weights[layer] = npy_file(dir + "/" + layer + ".npy", shape, offset += 0.5f, "--weights");
    if (with_bias) o.weights[layer + "_bias"] = npy_file(dir + "/" + layer + "_bias.npy", {out}, offset += 0.5f, "--weights");
  }
}

std::vector<std::string> words(const std::string& s) { return detail::split_words(s); }

struct Mode {
  std::string name;
  std::function<LessonOptions(const std::string& lesson)> options;
};

std::vector<Mode> modes() {
  return {
      {"defaults", [](const std::string&) { return LessonOptions{}; }},
      {"--seed 5 --d-in 4 --d-out 4 --seq-len 7",
       [](const std::string&) {
         LessonOptions o;
         o.seed = 5, o.d_in = 4, o.d_out = 4, o.seq_len = 7;
         return o;
       }},
      {"--batch 3",
       [](const std::string&) {
         LessonOptions o;
         o.batch = 3;
         return o;
       }},
      {"--batch 1 (heads: unsqueeze)",
       [](const std::string&) {
         LessonOptions o;
         o.batch = 1;
         return o;
       }},
      {"--input (T, d_in) .npy",
       [](const std::string&) {
         LessonOptions o;
         o.input = npy_file("x2.npy", {5, 3}, 0.1f, "--input");
         return o;
       }},
      {"--input (T, d_in) .npy --batch 2",
       [](const std::string&) {
         LessonOptions o;
         o.input = npy_file("x2b.npy", {4, 3}, 0.2f, "--input");
         o.batch = 2;
         return o;
       }},
      {"--input (B, T, d_in) .npy",
       [](const std::string&) {
         LessonOptions o;
         o.input = npy_file("x3.npy", {2, 4, 3}, 0.4f, "--input");
         return o;
       }},
      {"--input .csv",
       [](const std::string&) {
         LessonOptions o;
         o.input = csv_file("x.csv", 4, 3);
         return o;
       }},
      {"--input .txt with semicolons",
       [](const std::string&) {
         LessonOptions o;
         o.input = csv_file("x.txt", 5, 3, " ; ");
         return o;
       }},
      {"--weights math layout",
       [](const std::string&) {
         LessonOptions o;
         add_weights(o, false, false);
         return o;
       }},
      {"--weights torch layout with biases",
       [](const std::string&) {
         LessonOptions o;
         add_weights(o, true, true);
         return o;
       }},
      {"--tokens with book words, new words, quotes and UTF-8",
       [](const std::string&) {
         LessonOptions o;
         o.tokens = words("Your cat \"starts\" \xc3\x89T\xc3\x89 back\\slash journey");
         return o;
       }},
      {"--tokens --d-in 5",
       [](const std::string&) {
         LessonOptions o;
         o.tokens = words("one two journey");
         o.d_in = 5;
         return o;
       }},
      {"three sentences",
       [](const std::string&) {
         LessonOptions o;
         o.tokens = words("a b");
         o.more_sentences = {words("c d"), words("e journey")};
         return o;
       }},
      {"three sentences with --weights",
       [](const std::string&) {
         LessonOptions o;
         o.tokens = words("a b");
         o.more_sentences = {words("c d"), words("e f")};
         add_weights(o, false, false);
         return o;
       }},
  };
}

// Runs the header's lines and compares what they build with the tensors the lesson shows.
void require_reproduced(const report::Report& r, const std::string& lesson) {
  const auto built = run_reproduce(r.header.reproduce);
  // Layers the lines build, under whatever names the lesson or its preset's article gives them
  // (W_query, wq, q_proj, ...).
  std::set<std::string> layers;
  for (const auto& line : r.header.reproduce) {
    const auto eq = line.find(" = nn.Linear(");
    if (eq != std::string::npos) layers.insert(line.substr(0, eq));
  }
  std::size_t compared = 0;
  std::set<std::string> shown;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item)) {
        const std::string base = t->name.substr(0, t->name.find('.'));
        // gqa's W_key_mha is made from W_key by the lesson, not by the lines.
        const bool recipe_made = (t->name == "x" || t->name.rfind("W_", 0) == 0 || base == "out_proj" ||
                                  layers.count(base) != 0) &&
                                 base.find("_mha") == std::string::npos;
        if (!recipe_made || !shown.insert(t->name).second) continue;
        INFO("tensor " << t->name);
        REQUIRE_MESSAGE(built.count(t->name), "the reproduce lines never build " << t->name);
        const Held& h = built.at(t->name);
        REQUIRE(h.shape == t->shape);
        double worst = 0;
        for (std::size_t i = 0; i < h.values.size(); ++i)
          worst = std::fmax(worst, std::fabs(static_cast<double>(h.values[i]) - t->values[i]));
        CHECK(worst <= 1e-6);
        ++compared;
      }
  // x and three projections at least (heads: four layers).
  CHECK(compared >= (lesson == "heads" ? 5u : 4u));
  // setting: names a seed exactly when a line draws from torch.manual_seed.
  bool seed_in_setting = false;
  for (const auto& item : r.header.setting) seed_in_setting = seed_in_setting || item.rfind("seed ", 0) == 0;
  bool draws = false, seeded = false;
  for (const auto& line : r.header.reproduce) {
    if (line.rfind("torch.manual_seed(", 0) == 0) seeded = true;
    if (seeded && (line.find(" = torch.rand(") != std::string::npos || line.find(" = nn.Linear(") != std::string::npos))
      draws = true;
  }
  CHECK(seed_in_setting == draws);
}

}  // namespace

TEST_CASE("reproduce lines rebuild x and the weights in every mode") {
  for (const std::string lesson : {"self-attention", "causal", "heads"})
    for (const Mode& mode : modes()) {
      CAPTURE(lesson);
      CAPTURE(mode.name);
      LessonOptions o = mode.options(lesson);
      if (lesson != "heads" && mode.name == "--weights torch layout with biases") o.weights.erase("out_proj");
      const report::Report r = run_lesson(lesson, o);
      require_reproduced(r, lesson);
    }
}

TEST_CASE("reproduce lines: heads with grouped heads, biases and the presets") {
  SUBCASE("--heads 4 --d-out 8 --kv-heads 2 --qkv-bias --seed 9") {
    LessonOptions o;
    o.heads = 4, o.d_out = 8, o.kv_heads = 2, o.qkv_bias = true, o.seed = 9;
    require_reproduced(run_lesson("heads", o), "heads");
  }
  for (const std::string preset : {"rakesh", "phillips", "raschka"}) {
    CAPTURE(preset);
    LessonOptions o;
    apply_preset(preset, "heads", false, o);
    require_reproduced(run_lesson("heads", o), "heads");
  }
  for (const std::string lesson : {"self-attention", "causal"}) {
    LessonOptions o;
    apply_preset("raschka", lesson, false, o);
    require_reproduced(run_lesson(lesson, o), lesson);
  }
}

TEST_CASE("reproduce lines: heads that are not d_in wide together (--d-k, --out-proj-width)") {
  // d_in 12, 4 heads of 6: W_query (24, 12) and out_proj (12, 24) as the lines build them.
  for (const std::string lesson : {"gqa", "kv-cache"})
    for (const Mode& mode : modes()) {
      CAPTURE(lesson);
      CAPTURE(mode.name);
      if (mode.name.find("--weights") != std::string::npos) continue;  // files of the default widths
      LessonOptions o = mode.options(lesson);
      o.d_in = 12, o.heads = 4, o.own["--d-k"] = 6;
      if (o.input) o.d_in.reset();  // the file's width, 3: 4 heads of 6 need not divide it
      const report::Report r = run_lesson(lesson, o);
      CHECK(tensor(r, "W_query.weight").shape[0] == 24);
      require_reproduced(r, lesson);
    }
  LessonOptions o;
  o.d_in = 12, o.d_out = 24, o.heads = 4, o.qkv_bias = true, o.seed = 5;
  o.own["--out-proj-width"] = 12;
  const report::Report r = run_lesson("heads", o);
  CHECK(tensor(r, "out_proj.weight").shape == Shape{12, 24});
  require_reproduced(r, "heads");
}

TEST_CASE("reproduce lines: the seed appears only when something is drawn from it") {
  for (const std::string lesson : {"self-attention", "causal", "heads"}) {
    CAPTURE(lesson);
    LessonOptions seeded;
    const report::Report a = run_lesson(lesson, seeded);
    CHECK(a.header.setting.front().rfind("seed ", 0) == 0);
    LessonOptions loaded;
    add_weights(loaded, true, false);
    if (lesson != "heads") loaded.weights.erase("out_proj");
    const report::Report b = run_lesson(lesson, loaded);
    for (const auto& item : b.header.setting) CHECK(item.rfind("seed ", 0) != 0);
    for (const auto& line : b.header.reproduce) CHECK(line.find("manual_seed(") == std::string::npos);
  }
}

TEST_CASE("reproduce lines: the runner notices numbers that do not match") {
  // A seed off by one draws other weights: the comparison must fail, or the tests above prove nothing.
  const report::Report r = run_lesson("causal");
  auto lines = r.header.reproduce;
  for (auto& line : lines)
    if (line == "torch.manual_seed(789)") line = "torch.manual_seed(790)";
  const auto built = run_reproduce(lines);
  const auto& shown = tensor(r, "W_query.weight");
  CHECK(built.at("W_query.weight").values != shown.values);
  CHECK(built.at("x").values == tensor(r, "x").values);
}

TEST_CASE("float literals: the fewest digits that give back the same float32") {
  CHECK(recipe::float_literal(0.43f) == "0.43");
  CHECK(recipe::float_literal(0.1f) == "0.1");
  CHECK(recipe::float_literal(1.0f) == "1.");
  CHECK(recipe::float_literal(-2.5e-9f) == "-2.5e-09");
  for (float v : values(200, 0.05f)) CHECK(static_cast<float>(std::strtod(recipe::float_literal(v).c_str(), nullptr)) == v);
}
