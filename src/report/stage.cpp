#include "report/stage.hpp"

#include <cstdio>
#include <stdexcept>

namespace attn::report {

Stage& Stage::attention_weights() {
  for (auto it = items.rbegin(); it != items.rend(); ++it)
    if (auto* t = std::get_if<TensorItem>(&*it)) {
      t->attention = true;
      return *this;
    }
  throw std::logic_error("attention_weights(): the stage shows no tensor yet");
}

Stage& Stage::note(std::string text) {
  items.emplace_back(NoteItem{std::move(text)});
  return *this;
}

Stage& Stage::table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows) {
  items.emplace_back(TableItem{std::move(header), std::move(rows)});
  return *this;
}

Stage& Stage::check(std::string text) {
  items.emplace_back(CheckItem{std::move(text)});
  return *this;
}

std::vector<Shaped> Stage::outputs() const {
  std::vector<Shaped> out;
  for (const Item& item : items)
    if (const auto* t = std::get_if<TensorItem>(&item)) out.push_back({t->name, t->shape});
  return out;
}

Stage& Report::stage(std::string title, std::string equation) {
  Stage s;
  s.index = stages_.size() + 1;
  s.title = std::move(title);
  s.equation = std::move(equation);
  stages_.push_back(std::move(s));
  return stages_.back();
}

void deliver(const Report& report, Sink& sink) {
  const std::size_t total = report.stages().size();
  sink.begin(report.header, total);
  for (const Stage& s : report.stages()) sink.stage(s, total);
  sink.end();
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

}  // namespace attn::report
