#include "report/text_sink.hpp"

#include <algorithm>
#include <sstream>

#include "report/plot.hpp"
#include "report/text_width.hpp"

namespace attn::report {

std::string wrap(const std::string& text, std::size_t width, const std::string& first,
                 const std::string& rest) {
  // Widths in columns, not bytes: a word of a token in Japanese or with accents is shorter on
  // screen than in UTF-8 bytes.
  std::istringstream words(text);
  std::string word, line = first, out;
  std::size_t line_width = display_width(first);
  bool empty = true;
  while (words >> word) {
    const std::size_t word_width = display_width(word);
    if (!empty && line_width + 1 + word_width > width) {
      out += line + "\n";
      line = rest;
      line_width = display_width(rest);
      empty = true;
    }
    if (!empty) line += ' ', ++line_width;
    line += word;
    line_width += word_width;
    empty = false;
  }
  if (!empty) out += line + "\n";
  return out;
}

namespace {

bool numeric(const std::string& cell) {
  return !cell.empty() && cell.find_first_not_of("0123456789.-+eE%x ") == std::string::npos &&
         cell.find_first_of("0123456789") != std::string::npos;
}

}  // namespace

std::string render_table(const TableItem& whole) {
  // A table with a row per sequence of a large --batch would run to megabytes: its first and last
  // rows are printed, and a line counts the rest.
  constexpr std::size_t kHead = 32, kTail = 8;
  TableItem table = whole;
  const std::size_t left_out = whole.rows.size() > kMaxTableRows ? whole.rows.size() - kHead - kTail : 0;
  if (left_out) {
    table.rows.assign(whole.rows.begin(), whole.rows.begin() + kHead);
    table.rows.insert(table.rows.end(), whole.rows.end() - kTail, whole.rows.end());
  }
  std::vector<std::size_t> widths(table.header.size(), 0);
  // Numbers line up on the right; words read from the left.
  std::vector<bool> right(table.header.size(), true);
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < row.size() && c < right.size(); ++c)
      if (!numeric(row[c]) && row[c] != "..." && !row[c].empty()) right[c] = false;
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  };
  measure(table.header);
  for (const auto& row : table.rows) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "  ";
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const std::string pad(widths[c] - display_width(cell), ' ');
      if (c) s += "  ";
      s += right[c] ? pad + cell : cell + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(table.header);
  std::string rule = "  ";
  for (std::size_t c = 0; c < widths.size(); ++c) rule += (c ? "  " : "") + std::string(widths[c], '-');
  out += rule + "\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (left_out && r == kHead)
      out += "  ... " + std::to_string(left_out) + " more rows like these (" + std::to_string(whole.rows.size()) +
             " in all; the first " + std::to_string(kHead) + " and the last " + std::to_string(kTail) + " are shown)\n";
    out += line(table.rows[r]);
  }
  return out;
}

namespace {

// Items joined by ", " and wrapped only between items, never inside one ("causal False",
// "queries (6, 2)").
std::string wrap_items(const std::vector<std::string>& items, std::size_t width, const std::string& first) {
  constexpr char kKeep = '\x01';  // a space wrap() must not break at
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i];
    for (char& c : item)
      if (c == ' ') c = kKeep;
    s += (i ? ", " : "") + item;
  }
  std::string out = wrap(s, width, first, std::string(first.size(), ' '));
  for (char& c : out)
    if (c == kKeep) c = ' ';
  return out;
}

std::string shapes_lines(const std::vector<Shaped>& shaped, std::size_t width, const std::string& first) {
  std::vector<std::string> items;
  for (const auto& t : shaped) items.push_back(t.name + " " + shape_str(t.shape));
  return wrap_items(items, width, first);
}

}  // namespace

void TextSink::begin(const Header& h, std::size_t total_stages) {
  out_ << h.invocation() << ": " << h.title << "\n";
  if (!h.follows.empty()) out_ << wrap(h.follows, opts_.width, "follows: ", "         ");
  if (!h.setting.empty()) out_ << wrap_items(h.setting, opts_.width, "setting: ");
  if (!h.reproduce.empty()) {
    out_ << "reproduce in PyTorch:\n";
    for (const auto& line : h.reproduce) out_ << "    " << line << "\n";
  }
  out_ << stages_line(h, total_stages) << "\n";
}

void TextSink::stage(const Stage& s, std::size_t total) {
  out_ << "\n[" << s.index << "/" << total << "] " << s.title << "\n";
  std::istringstream equation(s.equation);  // one line per equation
  for (std::string line; std::getline(equation, line);) out_ << "    " << line << "\n";
  if (!s.inputs.empty()) out_ << shapes_lines(s.inputs, opts_.width, "    in:  ");
  const auto outs = s.outputs();
  if (!outs.empty()) out_ << shapes_lines(outs, opts_.width, "    out: ");
  for (const Item& i : s.items) item(i);
}

void TextSink::item(const Item& i) {
  if (const auto* t = std::get_if<TensorItem>(&i)) {
    if (opts_.shapes_only || !t->printed) return;  // the "out:" line already names every shape
    if (!t->curve_x.empty()) {  // a loss curve: a picture, not 300 numbers
      out_ << "\n" << t->name << " " << shape_str(t->shape) << "\n" << render_curve(*t, opts_.width);
      return;
    }
    if (t->attention && !t->values_printed) {  // a map: its picture alone (values in --dump and JSON)
      out_ << "\n" << t->name << " " << shape_str(t->shape) << "\n";
      if (opts_.heatmaps) out_ << render_heatmap(*t, opts_.heatmap);
      return;
    }
    out_ << "\n" << t->name << " " << shape_str(t->shape) << "\n" << format_tensor(*t, opts_.print) << "\n";
    if (t->attention && opts_.heatmaps) out_ << "\n" << render_heatmap(*t, opts_.heatmap);
  } else if (const auto* n = std::get_if<NoteItem>(&i)) {
    out_ << "\n" << wrap(n->text, opts_.width, "", "");
  } else if (const auto* tb = std::get_if<TableItem>(&i)) {
    out_ << "\n" << render_table(*tb);
  } else if (const auto* c = std::get_if<CheckItem>(&i)) {
    constexpr char kKeep = '\x01';  // the numbers stay on one line
    std::string text = wrap(check_text(*c, kKeep), opts_.width, "", "    ");
    std::replace(text.begin(), text.end(), kKeep, ' ');
    out_ << "\n" << text;
  }
}

void TextSink::end() { out_.flush(); }

}  // namespace attn::report
