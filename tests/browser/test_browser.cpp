// --html pages in a real browser (headless chromium, Debian's `chromium`, which scripts/setup.sh
// installs). Each test writes one page with the built attn, takes the expected numbers from the
// same command's --format json, appends tests/browser/driver.js (test code, not the product's),
// loads the page once with --dump-dom and reads the driver's verdicts from the dumped DOM: the
// stage panels and heatmaps counted, a tooltip read over a known cell and compared with the JSON,
// heads switched in a heatmap and in the head view, a model-view thumbnail clicked, and no script
// error anywhere. One chromium launch per page.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::run;
using attn::testing::TempDir;
using nlohmann::json;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kChromium = ATTN_CHROMIUM;
const std::string kDriver = std::string(ATTN_BROWSER_DIR) + "/driver.js";
const std::string kModels = std::string(ATTN_TEST_DATA) + "/models";

// Catches every error from the page's first script on; goes at the top of <head>.
const char* kErrorCatcher =
    "<script>window.__attnErrors = [];"
    "window.addEventListener('error', (e) => window.__attnErrors.push('error: ' + e.message));"
    "window.addEventListener('unhandledrejection', (e) => window.__attnErrors.push('rejection: ' + e.reason));"
    "(function () { const original = console.error; console.error = function (...a) {"
    " window.__attnErrors.push('console.error: ' + a.join(' ')); original.apply(console, a); }; })();</script>";

// The value at `index` of nested lists.
double at(const json& values, const std::vector<std::size_t>& index) {
  const json* v = &values;
  for (std::size_t i : index) v = &v->at(i);
  return v->get<double>();
}

std::string label(const json& manifest, const json& tensor, const char* key, std::size_t i) {
  if (!tensor.contains(key)) return std::to_string(i);
  return json(manifest.at("labels").at(tensor.at(key).get<std::size_t>()).at(i).get<std::string>()).dump();
}

// What the driver checks for one heatmap cell, from the --format json output.
json cell(const json& manifest, std::size_t stage, const json& tensor, std::vector<std::size_t> lead, std::size_t row,
          std::size_t col, const std::vector<std::string>& axes, const std::string& row_one = "query",
          const std::string& col_one = "key") {
  std::vector<std::size_t> index = lead;
  index.push_back(row);
  index.push_back(col);
  json c;
  c["stage"] = stage;
  c["tensor"] = tensor.at("name");
  c["index"] = lead;
  c["axes"] = axes;
  c["row"] = row;
  c["col"] = col;
  c["value"] = at(tensor.at("values"), index);
  c["text"] = row_one + " " + label(manifest, tensor, "row_labels", row) + " -> " + col_one + " " +
              label(manifest, tensor, tensor.contains("col_labels") ? "col_labels" : "row_labels", col);
  return c;
}

struct Counted {
  std::size_t stages = 0, heatmaps = 0, checks = 0;
};
Counted count(const json& manifest) {
  Counted n;
  for (const auto& s : manifest.at("stages")) {
    ++n.stages;
    n.checks += s.at("checks").size();
    for (const auto& t : s.at("tensors")) n.heatmaps += t.value("attention", false) && t.contains("values");
  }
  return n;
}

// Writes `page` with the error catcher and the driver (after `expect`) into `dir`, loads it in
// chromium once, and returns the driver's verdict lines.
std::vector<std::string> drive(const TempDir& dir, const std::string& page, const json& expect) {
  REQUIRE_MESSAGE(fs::exists(kChromium), "chromium is not installed (" << kChromium << "): bash scripts/setup.sh installs it");
  std::string driven = page;
  const auto head = driven.find("<head>");
  REQUIRE(head != std::string::npos);
  driven.insert(head + 6, kErrorCatcher);
  const auto body = driven.rfind("</body>");
  REQUIRE(body != std::string::npos);
  driven.insert(body, "<script>window.ATTN_EXPECT = " + expect.dump() + ";</script>\n<script>\n" + read_file(kDriver) + "</script>\n");
  const fs::path file = dir.path / "driven.html";
  std::ofstream(file, std::ios::binary) << driven;
  const auto r = run({kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                      "--user-data-dir=" + (dir.path / "profile").string(), "--window-size=1200,900",
                      "--virtual-time-budget=5000", "--dump-dom", "file://" + file.string()},
                     120);
  REQUIRE_MESSAGE(r.status == 0, "chromium failed: " << r.err.substr(0, 2000));
  const auto from = r.out.rfind("<pre id=\"attn-test-verdicts\">");  // the last: driver.js names it too
  REQUIRE_MESSAGE(from != std::string::npos, "the driver wrote no verdicts; chromium's stderr: " << r.err.substr(0, 2000));
  const auto to = r.out.find("</pre>", from);
  std::string text = r.out.substr(from + 29, to - from - 29);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const auto nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return lines;
}

void check_verdicts(const std::vector<std::string>& lines, std::size_t at_least) {
  std::string all;
  std::size_t oks = 0;
  bool done = false;
  for (const auto& l : lines) {
    all += l + "\n";
    oks += l.rfind("ok: ", 0) == 0;
    done = done || l == "done";
  }
  INFO(all);
  CHECK(done);
  CHECK(all.find("FAIL") == std::string::npos);
  CHECK(oks >= at_least);
}

json lesson_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kAttn, "lesson"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--format");
  argv.push_back("json");
  argv.push_back("--full-json");
  const auto r = run(argv);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return json::parse(r.out);
}

std::string write_page(const TempDir& dir, std::vector<std::string> argv) {
  const fs::path page = dir.path / "page.html";
  argv.push_back("--html");
  argv.push_back(page.string());
  const auto r = run(argv);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return read_file(page);
}

json expectations(const json& manifest) {
  const Counted n = count(manifest);
  json e;
  e["stages"] = n.stages;
  e["heatmaps"] = n.heatmaps;
  e["checks"] = n.checks;
  return e;
}

}  // namespace

TEST_CASE("lesson causal: panels, a tooltip against the JSON, the head view") {
  TempDir dir("attn-browser-causal");
  const json m = lesson_json({"causal"});
  const std::string page = write_page(dir, {kAttn, "lesson", "causal"});
  json e = expectations(m);
  REQUIRE(e["heatmaps"].get<int>() >= 1);
  // The first attention matrix: its last query against key 1.
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors"))
      if (t.value("attention", false) && e["cells"].is_null()) {
        const auto& shape = t.at("shape");
        const std::size_t rows = shape.at(shape.size() - 2), cols = shape.back();
        std::vector<std::size_t> lead(shape.size() - 2, 0);
        std::vector<std::string> axes = shape.size() == 3 ? std::vector<std::string>{"batch"} : std::vector<std::string>{};
        e["cells"] = json::array({cell(m, s.at("index"), t, lead, rows - 1, std::min<std::size_t>(1, cols - 1), axes)});
        json hv;
        hv["source"] = "[" + std::to_string(s.at("index").get<int>()) + "] " + t.at("name").get<std::string>();
        hv["picks"] = json::array();
        hv["head"] = nullptr;
        hv["row"] = rows - 1;
        hv["col"] = 0;
        std::vector<std::size_t> index = lead;
        index.push_back(rows - 1);
        index.push_back(0);
        hv["value"] = at(t.at("values"), index);
        e["headview"] = hv;
      }
  check_verdicts(drive(dir, page, e), 10);
}

TEST_CASE("lesson heads: switch heads in a heatmap and in the head view") {
  TempDir dir("attn-browser-heads");
  const json m = lesson_json({"heads"});
  const std::string page = write_page(dir, {kAttn, "lesson", "heads"});
  json e = expectations(m);
  // The first (B, h, T, T) tensor with two heads or more: head 1 of the last batch entry.
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors")) {
      const auto& shape = t.at("shape");
      if (!t.value("attention", false) || shape.size() != 4 || shape.at(1) < 2 || !e["cells"].is_null()) continue;
      const std::size_t B = shape.at(0), T = shape.at(2);
      e["cells"] = json::array({cell(m, s.at("index"), t, {B - 1, 1}, T - 1, 1, {"batch", "head"})});
      json hv;
      hv["source"] = "[" + std::to_string(s.at("index").get<int>()) + "] " + t.at("name").get<std::string>();
      hv["picks"] = B > 1 ? json::array({json::array({"batch", B - 1})}) : json::array();
      hv["head"] = 1;
      hv["row"] = T - 1;
      hv["col"] = 1;
      hv["value"] = at(t.at("values"), {B - 1, 1, T - 1, 1});
      e["headview"] = hv;
    }
  REQUIRE_FALSE(e["cells"].is_null());
  check_verdicts(drive(dir, page, e), 12);
}

TEST_CASE("attn model --text: the model view opens a head, the head view follows") {
  TempDir dir("attn-browser-model");
  // A tiny checkpoint with the tiny tokenizer (as tests/cli/test_model_run.cpp does).
  const fs::path model = dir.path / "llama3_tiny_bf16";
  fs::create_directory(model);
  for (const auto& f : fs::directory_iterator(kModels + "/llama3_tiny_bf16"))
    if (f.is_regular_file()) fs::copy_file(f.path(), model / f.path().filename());
  fs::copy_file(kModels + "/tiny_tokenizer.json", model / "tokenizer.json");
  const std::vector<std::string> argv = {kAttn, "model", model.string(), "--text", "a bank by the river bank"};
  std::vector<std::string> as_json = argv;
  for (const char* a : {"--format", "json", "--full-json"}) as_json.push_back(a);
  const auto r = run(as_json);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const json m = json::parse(r.out);
  const std::string page = write_page(dir, argv);
  json e = expectations(m);
  const json* attentions = nullptr;
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors"))
      if (t.at("name") == "attentions") attentions = &t;
  REQUIRE(attentions != nullptr);
  const auto& shape = attentions->at("shape");  // (L, 1, h, T, T)
  const std::size_t L = shape.at(0), H = shape.at(2), T = shape.at(3);
  REQUIRE(H >= 3);
  // The model view: layer 0, head 2, the last query against key 2; labels are the run's tokens.
  json mv;
  mv["thumbs"] = L * H;
  mv["layer"] = 0;
  mv["head"] = 2;
  mv["row"] = T - 1;
  mv["col"] = 2;
  mv["value"] = at(attentions->at("values"), {0, 0, 2, T - 1, 2});
  const auto& tokens = m.at("tokens");
  mv["text"] = "query " + json(tokens.at(T - 1)).dump() + " -> key " + json(tokens.at(2)).dump();
  e["model"] = mv;
  // Clicking the thumbnail points the head view at layer 0, head 2.
  json hv;
  hv["picks"] = json::array();
  hv["head"] = 2;
  hv["row"] = T - 1;
  hv["col"] = 2;
  hv["value"] = mv["value"];
  e["headview"] = hv;
  // The shown layer's own heatmap (the last layer): head 1. (The head role maps, (L, h), are
  // attention-like too, but have no head axis.)
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors"))
      if (t.value("attention", false) && t.contains("values") && t.at("shape").size() == 4)
        e["cells"] = json::array({cell(m, s.at("index"), t, {0, 1}, T - 1, 0, {"batch", "head"})});
  check_verdicts(drive(dir, page, e), 16);
}
