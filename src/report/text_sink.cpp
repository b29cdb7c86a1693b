#include "report/text_sink.hpp"

#include <algorithm>
#include <sstream>

#include "report/plot.hpp"
#include "report/text.hpp"
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

std::string render_table(const TableItem& whole, std::size_t width) {
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
  // The printed width of the columns `cols` at column widths `w`.
  auto part_width = [](const std::vector<std::size_t>& cols, const std::vector<std::size_t>& w) {
    std::size_t total = 2;
    for (std::size_t k = 0; k < cols.size(); ++k) total += (k ? 2 : 0) + w[cols[k]];
    return total;
  };
  // The columns of each part: all of them when they fit, else the first (the row's label) and as
  // many of the next as fit beside it, at least one.
  std::vector<std::vector<std::size_t>> parts;
  for (std::size_t c = 1; c < widths.size(); ++c) {
    if (parts.empty() || part_width(parts.back(), widths) + 2 + widths[c] > width) parts.push_back({0});
    parts.back().push_back(c);
  }
  if (parts.empty()) parts.push_back({0});
  // A part still too wide (a column of sentences): its widest column of words wraps, as often as
  // it takes, down to 16 columns.
  auto line = [&](const std::vector<std::string>& row, const std::vector<std::size_t>& cols,
                  const std::vector<std::size_t>& w) {
    // Each cell as its lines: one, or a wrapped column's several.
    std::vector<std::vector<std::string>> cells;
    std::size_t height = 1;
    for (std::size_t c : cols) {
      const std::string cell = c < row.size() ? row[c] : "";
      std::vector<std::string> lines;
      if (display_width(cell) <= w[c]) {
        lines.push_back(cell);
      } else {
        std::istringstream wrapped(wrap(cell, w[c], "", ""));
        for (std::string l; std::getline(wrapped, l);) lines.push_back(l);
      }
      height = std::max(height, lines.size());
      cells.push_back(std::move(lines));
    }
    std::string out;
    for (std::size_t h = 0; h < height; ++h) {
      std::string s = "  ";
      for (std::size_t k = 0; k < cols.size(); ++k) {
        const std::size_t c = cols[k];
        const std::string cell = h < cells[k].size() ? cells[k][h] : "";
        const std::size_t used = display_width(cell);
        const std::string pad(w[c] > used ? w[c] - used : 0, ' ');
        if (k) s += "  ";
        s += right[c] ? pad + cell : cell + pad;
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out += s + "\n";
    }
    return out;
  };
  std::string out;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& cols = parts[p];
    std::vector<std::size_t> w = widths;
    while (part_width(cols, w) > width) {
      std::size_t widest = cols.size();
      for (std::size_t k = 0; k < cols.size(); ++k)
        if (!right[cols[k]] && w[cols[k]] > 16 && (widest == cols.size() || w[cols[k]] > w[cols[widest]])) widest = k;
      if (widest == cols.size()) break;  // nothing left to wrap
      const std::size_t excess = part_width(cols, w) - width;
      w[cols[widest]] = std::max<std::size_t>(16, w[cols[widest]] > excess ? w[cols[widest]] - excess : 16);
    }
    if (p) out += "\n";
    out += line(table.header, cols, w);
    std::string rule = "  ";
    for (std::size_t k = 0; k < cols.size(); ++k) rule += (k ? "  " : "") + std::string(w[cols[k]], '-');
    out += rule + "\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      if (left_out && r == kHead)
        out += "  ... " + std::to_string(left_out) + " more rows like these (" + std::to_string(whole.rows.size()) +
               " in all; the first " + std::to_string(kHead) + " and the last " + std::to_string(kTail) + " are shown)\n";
      out += line(table.rows[r], cols, w);
    }
  }
  return out;
}

std::string wrap_equation(const std::string& text, std::size_t width, const std::string& indent) {
  const std::string more = indent + "    ";
  std::string out, rest = text, prefix = indent;
  while (display_width(prefix) + display_width(rest) > width) {
    const std::size_t room = width > display_width(prefix) ? width - display_width(prefix) : 0;
    // The last break after "; " or before a "# comment" that leaves the part before it within the
    // room, else the last space (not the one after a '#'); when no space does, the first one.
    std::size_t semicolon = std::string::npos, space = std::string::npos;
    for (std::size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] != ' ' || rest[i - 1] == ' ' || rest[i - 1] == '#') continue;
      if (display_width(rest.substr(0, i)) > room) {
        if (space == std::string::npos) space = i;
        break;
      }
      const std::size_t next = rest.find_first_not_of(' ', i);
      const bool comment = next != std::string::npos && rest[next] == '#';
      (rest[i - 1] == ';' || comment ? semicolon : space) = i;
    }
    const std::size_t at = semicolon != std::string::npos ? semicolon : space;
    if (at == std::string::npos) break;  // one word wider than the page: printed as it is
    out += prefix + rest.substr(0, at) + "\n";
    const std::size_t next = rest.find_first_not_of(' ', at);
    if (next == std::string::npos) return out;
    rest = rest.substr(next);
    prefix = more;
  }
  return out + prefix + rest + "\n";
}

namespace {

bool opens(char c) { return c == '(' || c == '[' || c == '{'; }
bool closes(char c) { return c == ')' || c == ']' || c == '}'; }

// A place a line of Python may break: after ", " inside brackets; after "; " between simple
// statements (not in a line that starts a compound statement, "for x in y: a; b", where the
// second statement belongs to the loop); else at any space inside brackets, outside strings.
struct PythonBreak {
  std::size_t end;        // the line printed so far ends before this index
  std::size_t next;       // the next line starts at this index
  bool preferred;         // after a comma or a semicolon
  bool statement;         // after "; ": the next line starts a statement
  std::size_t bracket;    // the innermost bracket open here (its index), or npos
  std::size_t depth;      // how many brackets are open here
};

std::vector<PythonBreak> python_breaks(const std::string& line) {
  std::vector<PythonBreak> breaks;
  const std::size_t lead = line.find_first_not_of(' ');
  bool compound = false;
  for (const std::string k : {"for ", "while ", "if ", "elif ", "else", "with ", "def ", "class ", "try", "except"})
    if (lead != std::string::npos && line.compare(lead, k.size(), k) == 0) compound = true;
  std::vector<std::size_t> open;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') break;  // a comment runs to the end: never broken
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (opens(c)) {
      open.push_back(i);
    } else if (closes(c)) {
      if (!open.empty()) open.pop_back();
    } else if (c == ' ' && i > 0 && line[i - 1] != ' ') {
      const bool comma = line[i - 1] == ',' && !open.empty();
      const bool statement = line[i - 1] == ';' && open.empty() && !compound;
      if (!comma && !statement && open.empty()) continue;  // outside brackets only "; " breaks
      std::size_t next = line.find_first_not_of(' ', i);
      if (next == std::string::npos || line[next] == '#') continue;
      breaks.push_back({i, next, comma || statement, statement, open.empty() ? std::string::npos : open.back(), open.size()});
    }
  }
  return breaks;
}

}  // namespace

std::string wrap_python(const std::string& line, std::size_t width, const std::string& indent) {
  if (display_width(indent) + display_width(line) <= width) return indent + line + "\n";
  const std::vector<PythonBreak> breaks = python_breaks(line);
  const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
  // Each printed line: where it starts in `line`, and its first column.
  struct Printed {
    std::size_t start, column;
  };
  std::vector<Printed> printed = {{0, display_width(indent)}};
  auto column_of = [&](std::size_t index) {  // the printed column of line[index]
    const Printed* at = &printed.front();
    for (const auto& p : printed)
      if (p.start <= index) at = &p;
    return at->column + display_width(line.substr(at->start, index - at->start));
  };
  std::string out;
  std::size_t b = 0;  // the first break not yet passed
  while (true) {
    const Printed here = printed.back();
    // Of the preferred breaks that fit, the last of the least nested ("], [" before "0.1, 0.2"),
    // else the last break that fits, else the first.
    std::size_t pick = std::string::npos, fallback = std::string::npos;
    for (std::size_t k = b; k < breaks.size(); ++k) {
      if (here.column + display_width(line.substr(here.start, breaks[k].end - here.start)) > width) break;
      if (!breaks[k].preferred) fallback = k;
      else if (pick == std::string::npos || breaks[k].depth <= breaks[pick].depth) pick = k;
    }
    if (here.column + display_width(line.substr(here.start)) <= width || breaks.size() == b) break;
    if (pick == std::string::npos) pick = fallback != std::string::npos ? fallback : b;
    const PythonBreak& brk = breaks[pick];
    out += std::string(here.column, ' ') + line.substr(here.start, brk.end - here.start) + "\n";
    std::size_t column = display_width(indent) + lead;  // a new statement: the line's own indentation
    if (!brk.statement) {
      column = brk.bracket == std::string::npos ? column + 4 : column_of(brk.bracket) + 1;
      if (column + 20 > width) column = display_width(indent) + lead + 8;
    }
    printed.push_back({brk.next, column});
    b = pick + 1;
  }
  return out + std::string(printed.back().column, ' ') + line.substr(printed.back().start) + "\n";
}

namespace {

// Items joined by ", " and wrapped only between items, never inside one ("causal False",
// "queries (6, 2)").
std::string wrap_items(const std::vector<std::string>& items, std::size_t width, const std::string& first) {
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
    for (const auto& line : h.reproduce) out_ << wrap_python(line, opts_.page_width, "    ");
  }
  out_ << stages_line(h, total_stages) << "\n";
}

void TextSink::flush_folded() {
  if (!folded_count_) return;
  const Stage& s = *folded_last_;
  out_ << "\n" << folded_titles_;
  const bool one = folded_count_ == 1;
  const std::string stages = one ? std::to_string(s.index) : std::to_string(folded_first_) + "-" + std::to_string(s.index);
  out_ << wrap(std::to_string(folded_count_) + " more " + (one ? s.fold_one : s.fold_many) + ", shown by " +
                   (one ? "its title" : "their titles") + ": --full prints " + (one ? "it" : "them") + " whole, --stage " +
                   stages + " just " + (one ? "this one" : "these"),
               opts_.width, "    ", "    ");
  folded_titles_.clear();
  folded_count_ = 0;
  folded_last_ = nullptr;
}

void TextSink::stage(const Stage& s, std::size_t total) {
  const std::string title = "[" + std::to_string(s.index) + "/" + std::to_string(total) + "] " + s.title + "\n";
  if (s.folded() && !opts_.full) {
    // A stage like the one before it: its title, and a failed check if it has one (the run's
    // status says so too).
    if (folded_count_ && folded_last_->fold_many != s.fold_many) flush_folded();
    if (!folded_count_) folded_first_ = s.index;
    folded_titles_ += title;
    for (const Item& i : s.items)
      if (const auto* c = std::get_if<CheckItem>(&i); c && fails_run(*c)) folded_titles_ += "    " + check_text(*c) + "\n";
    ++folded_count_;
    folded_last_ = &s;
    return;
  }
  flush_folded();
  out_ << "\n" << title;
  std::istringstream equation(s.equation);  // one line per equation
  for (std::string line; std::getline(equation, line);) out_ << wrap_equation(line, opts_.page_width, "    ");
  if (!s.inputs.empty()) out_ << shapes_lines(s.inputs, opts_.width, "    in:  ");
  const auto outs = s.outputs();
  if (!outs.empty()) out_ << shapes_lines(outs, opts_.width, "    out: ");
  // Detail tensors left out: one line for the stage, where the first of them would be. (A
  // picture without its values, Stage::picture_only, says so under its picture.)
  std::vector<std::string> hidden;
  auto skips = [&](const TensorItem& t) { return t.detail && !opts_.full && !opts_.shapes_only && t.printed; };
  for (const Item& i : s.items)
    if (const auto* t = std::get_if<TensorItem>(&i); t && skips(*t)) hidden.push_back(t->name);
  bool said = false;
  for (const Item& i : s.items) {
    const auto* t = std::get_if<TensorItem>(&i);
    if (!t || !skips(*t)) {
      item(i);
      continue;
    }
    if (!said) {
      std::string names;
      for (std::size_t k = 0; k < hidden.size(); ++k)
        names += (k == 0 ? "" : k + 1 == hidden.size() ? " and " : ", ") + hidden[k];
      out_ << "\n" << wrap("(" + names + ": --full prints " + (hidden.size() == 1 ? "it" : "them") + ")", opts_.width, "", " ");
      said = true;
    }
  }
}

void TextSink::item(const Item& i) {
  if (const auto* t = std::get_if<TensorItem>(&i)) {
    if (opts_.shapes_only || !t->printed) return;  // the "out:" line already names every shape
    if (!t->curve_x.empty()) {  // a loss curve: a picture, not 300 numbers
      out_ << "\n" << t->name << " " << shape_str(t->shape) << "\n" << render_curve(*t, opts_.width);
      return;
    }
    // The default text may draw a picture alone, or one head of it (Stage::picture_only,
    // Stage::draw_head); a line then says what --full adds.
    const bool brief = !opts_.full && t->attention;
    const bool values_left = brief && t->values_detail;
    HeatmapOptions heatmap = opts_.heatmap;
    std::string heads_left;
    const std::size_t heads = head_count(t->shape);
    if (brief && t->text_head < heads && heatmap.view.heads == PanelView::Heads::all) {
      heatmap.view.heads = PanelView::Heads::one;
      heatmap.view.head = t->text_head;
      std::vector<std::string> others;
      for (std::size_t i = 0; i < heads; ++i)
        if (i != t->text_head) others.push_back(std::to_string(i));
      for (std::size_t k = 0; k < others.size(); ++k)
        heads_left += (k == 0 ? "" : k + 1 == others.size() ? " and " : ", ") + others[k];
      heads_left = (others.size() == 1 ? "the picture of head " : "the pictures of heads ") + heads_left;
    }
    auto say_left = [&] {
      if (!opts_.heatmaps || (!values_left && heads_left.empty())) return;
      const std::string what = values_left && !heads_left.empty() ? "its values and " + heads_left
                               : values_left                    ? std::string("its values")
                                                                 : heads_left;
      out_ << wrap("(" + t->name + ": " + what + ": --full prints them)", opts_.width, "", " ");
    };
    if ((t->attention && !t->values_printed) || (values_left && opts_.heatmaps)) {
      // A map, or a picture whose values are detail: its picture alone (values in --dump and JSON).
      // The picture's title names a tensor whose values wait for --full.
      out_ << "\n";
      if (!values_left) out_ << t->name << " " << shape_str(t->shape) << "\n";
      if (opts_.heatmaps) out_ << render_heatmap(*t, heatmap);
      say_left();
      return;
    }
    out_ << "\n" << t->name << " " << shape_str(t->shape) << "\n" << format_tensor(*t, opts_.print) << "\n";
    if (t->attention && opts_.heatmaps) out_ << "\n" << render_heatmap(*t, heatmap);
    say_left();
  } else if (const auto* n = std::get_if<NoteItem>(&i)) {
    out_ << "\n" << wrap(n->text, opts_.width, "", "");
  } else if (const auto* tb = std::get_if<TableItem>(&i)) {
    out_ << "\n" << render_table(*tb, opts_.page_width);
  } else if (const auto* c = std::get_if<CheckItem>(&i)) {
    std::string text = wrap(check_text(*c, kKeep), opts_.width, "", "    ");
    std::replace(text.begin(), text.end(), kKeep, ' ');
    out_ << "\n" << text;
  }
}

void TextSink::end() {
  flush_folded();
  out_.flush();
}

}  // namespace attn::report
