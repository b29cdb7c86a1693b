// --html's page (src/report/html_sink.hpp) without a browser: its size limits, what the data holds,
// and the escaping that keeps a token from ending the data's <script> element. The page's
// behaviour in a browser is tested by tests/browser (chromium).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "report/html_sink.hpp"

using namespace attn;
using namespace attn::report;

namespace {

// (n, 1, h, T, T) causal weights: row i spread evenly over keys 0..i.
std::vector<float> causal(std::size_t panels, std::size_t T) {
  std::vector<float> v(panels * T * T, 0.0f);
  for (std::size_t p = 0; p < panels; ++p)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j <= i; ++j) v[(p * T + i) * T + j] = 1.0f / static_cast<float>(i + 1);
  return v;
}

Labels tokens(std::size_t T) {
  Labels l;
  for (std::size_t i = 0; i < T; ++i) l.push_back("t" + std::to_string(i));
  return l;
}

// A model run's shape of report: one stage keeping `attentions` (L, 1, h, T, T).
Report model_report(std::size_t L, std::size_t h, std::size_t T, bool is_causal = true) {
  Report r;
  r.header.lesson = "model";
  r.header.title = "Llama checkpoint";
  r.header.command = "attn model";
  auto& s = r.stage("Every layer at a glance");
  std::vector<float> v = causal(L * h, T);
  if (!is_causal)
    for (float& x : v) x = x == 0.0f ? 0.001f : x;
  TensorItem t{"attentions", {L, 1, h, T, T}, TensorValues(std::move(v)), tokens(T), tokens(T)};
  t.printed = false;
  s.items.emplace_back(std::move(t));
  return r;
}

// The number the page states as its own size.
std::size_t stated_bytes(const std::string& page) {
  const auto at = page.find("\"bytes\":");
  REQUIRE(at != std::string::npos);
  return std::stoul(page.substr(at + 8, 20));
}

std::vector<unsigned char> unbase64(const std::string& s) {
  std::vector<unsigned char> out;
  unsigned v = 0;
  int bits = 0;
  for (char c : s) {
    const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = std::strchr(k, c);
    if (c == '=' || !at) break;
    v = (v << 6) | static_cast<unsigned>(at - k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((v >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the model view of 28 layers x 24 heads x 9 tokens is well under 2 MB and whole") {
  const Report r = model_report(28, 24, 9);
  const std::string page = html_page(r);
  MESSAGE("the page of a 28 x 24 x 9 model view: " << page.size() << " bytes");
  CHECK(page.size() < 1000000);  // the causal triangle: 28 * 24 * 45 values, about 160 KB of base64
  CHECK(stated_bytes(page) == page.size());
  const HtmlPlan plan = html_plan(r);
  CHECK(plan.side == 0);  // every token kept
  CHECK(plan.heatmap_values == 28 * 24 * 45);
  CHECK(page.find("\"model\":{") != std::string::npos);
  CHECK(page.find("\"cut\":") == std::string::npos);
}

TEST_CASE("a long prompt keeps the first tokens within the budget and says so") {
  const Report r = model_report(28, 24, 300);
  const HtmlPlan plan = html_plan(r);
  MESSAGE("a 300-token prompt keeps " << plan.side << " tokens");
  REQUIRE(plan.side > 0);
  CHECK(plan.side < 300);
  CHECK(plan.heatmap_values <= kHtmlHeatmapValues);
  // One more token would not fit.
  const std::size_t next = plan.side + 1;
  CHECK(28 * 24 * next * (next + 1) / 2 > kHtmlHeatmapValues);
  const std::string page = html_page(r);
  CHECK(page.size() <= kHtmlPageBudget);
  const std::string n = std::to_string(plan.side);
  CHECK(page.find("The page keeps the first " + n + " of 300 queries and " + n + " of 300 keys") != std::string::npos);
  CHECK(page.find("so each row is whole") != std::string::npos);  // causal: the rows kept are complete
  CHECK(page.find("Heatmaps keep the first " + std::to_string(plan.side) + " tokens") != std::string::npos);
}

TEST_CASE("weights that are not causal are kept whole-square and cost rows x columns") {
  const Report r = model_report(2, 2, 300, false);
  const HtmlPlan plan = html_plan(r);
  CHECK(plan.side == kHtmlMaxSide);  // 4 * 128 * 128 fits; the side limit cuts
  CHECK(plan.heatmap_values == 4 * kHtmlMaxSide * kHtmlMaxSide);
  const std::string page = html_page(r);
  CHECK(page.find("do not add up to the whole") != std::string::npos);
  CHECK(page.size() <= kHtmlPageBudget);
}

TEST_CASE("printed values stop at the text budget and the page stays within its own") {
  Report r;
  r.header.lesson = "big";
  r.header.title = "many tensors";
  std::size_t stages = 0;
  while (stages * 12000 < 3 * kHtmlTextBytes) {  // far more printed text than the budget holds
    auto& s = r.stage("stage " + std::to_string(++stages));
    std::vector<float> v(7 * 7 * 7 * 7);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 1.2345f;
    s.items.emplace_back(TensorItem{"x", {7, 7, 7, 7}, TensorValues(std::move(v)), {}, {}});
    for (int k = 0; k < 3; ++k) s.note("A note that goes with the stage, as lessons write them.");
  }
  const std::string page = html_page(r);
  CHECK(page.size() <= kHtmlPageBudget);
  CHECK(page.find("values left out: the page's") != std::string::npos);
  CHECK(page.find("tensors are listed by name and shape only") != std::string::npos);
  CHECK(page.find("summarised as PyTorch prints it: 1,296 of 2,401 values shown, 1,105 left out") != std::string::npos);
}

TEST_CASE("the page's budget holds its limits together") {
  CHECK(kHtmlHeatmapValues * 16 / 3 + kHtmlTextBytes < kHtmlPageBudget);
  CHECK(kHtmlMaxSide * kHtmlMaxSide <= kHtmlHeatmapValues);
}

TEST_CASE("a token cannot end the data's script element") {
  Report r;
  r.header.lesson = "causal";
  r.header.title = "Causal attention";
  auto& s = r.stage("weights");
  const Labels evil = {"</script><script>alert(1)</script>", "<!--", "a&b"};
  s.items.emplace_back(TensorItem{"attn_weights", {3, 3}, TensorValues(causal(1, 3)), evil, evil});
  s.attention_weights();
  const std::string page = html_page(r);
  std::size_t closes = 0;
  for (std::size_t at = page.find("</script>"); at != std::string::npos; at = page.find("</script>", at + 1)) ++closes;
  CHECK(closes == 2);  // the data's and the script's own
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
}

TEST_CASE("attention values are kept exactly, lower triangle only when causal") {
  Report r;
  r.header.lesson = "causal";
  auto& s = r.stage("weights");
  const std::vector<float> v = {1.0f, 0.0f, 0.0f, 0.25f, 0.75f, 0.0f, 0.1f, 0.2f, 0.7f};
  s.items.emplace_back(TensorItem{"attn_weights", {3, 3}, TensorValues(v), tokens(3), tokens(3)});
  s.attention_weights();
  const std::string page = html_page(r);
  CHECK(page.find("\"tril\":true") != std::string::npos);
  const auto at = page.find("\"f32\":\"");
  REQUIRE(at != std::string::npos);
  const std::string b64 = page.substr(at + 7, page.find('"', at + 7) - at - 7);
  const auto bytes = unbase64(b64);
  REQUIRE(bytes.size() == 6 * sizeof(float));
  float got[6];
  std::memcpy(got, bytes.data(), sizeof got);
  const float want[6] = {1.0f, 0.25f, 0.75f, 0.1f, 0.2f, 0.7f};
  for (int i = 0; i < 6; ++i) CHECK(got[i] == want[i]);
  CHECK(page.find("\"row_one\":\"query\",\"col_one\":\"key\"") != std::string::npos);
}

TEST_CASE("check_html_target refuses a directory and a name ending in a slash") {
  CHECK_THROWS_WITH_AS(check_html_target("/tmp"), doctest::Contains("is a directory"), std::runtime_error);
  CHECK_THROWS_WITH_AS(check_html_target("out/"), doctest::Contains("ends in '/'"), std::runtime_error);
  CHECK_THROWS_WITH_AS(check_html_target("/proc/version/page.html"), doctest::Contains("not a directory"), std::runtime_error);
  CHECK_NOTHROW(check_html_target("/tmp/attn-test-html-new-dir/page.html"));
}
