// The one table of the output options, and their parse into OutputOptions (output_options.hpp).
#include "cli/output_options.hpp"

#include <cctype>

namespace attn::cli {

namespace {

// The option's text, shortened and without control characters, for a message.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 40)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return text.size() > 40 ? out + "..." : out;
}

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 6) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// The parsers the rows name: each writes its row's field.
void stage(const std::string& text, OutputOptions& o) {
  report::StageSelectionProblem problem;
  o.stage = report::parse_stage_selection(text, problem);
  if (!o.stage) throw UsageError(problem.what, "--stage", problem.expected, problem.got);
}

void dump(const std::string& text, OutputOptions& o) {
  if (text.empty()) throw UsageError("--dump needs a directory", "--dump", "a new or empty directory", "an empty path");
  o.dump = text;
}

void npz(const std::string& text, OutputOptions& o) {
  if (text.empty()) throw UsageError("--npz needs a file name", "--npz", "a file name such as out/causal.npz", "an empty path");
  o.npz = text;
}

void format(const std::string& text, OutputOptions& o) {
  if (text != "text" && text != "json") throw UsageError("unknown --format", "--format", "text or json", "'" + text + "'");
  o.format = text == "json" ? OutputFormat::json : OutputFormat::text;
}

void svg(const std::string& text, OutputOptions& o) { o.svg = text; }

void html(const std::string& text, OutputOptions& o) {
  if (text.empty()) throw UsageError("--html needs a file name", "--html", "a file name such as out/causal.html", "an empty path");
  o.html = text;
}

void svg_panels(const std::string& text, OutputOptions& o) {
  o.svg_panels = parse_panel_selection(text);
  if (!o.svg_panels)
    throw UsageError("--svg-panels lists panels as in the file names", "--svg-panels",
                     "bN, hN or bN-hN separated by commas, e.g. b0,h1", "'" + escaped(text) + "'");
}

void precision(const std::string& text, OutputOptions& o) {
  o.print.precision = static_cast<int>(parse_whole("--precision", text, 1, 10));
}

void sci_mode(const std::string& text, OutputOptions& o) {
  if (text != "auto" && text != "on" && text != "off")
    throw UsageError("unknown --sci-mode", "--sci-mode", "auto, on or off", "'" + text + "'");
  if (text != "auto") o.print.sci_mode = text == "on";
}

void color(const std::string& text, OutputOptions& o) {
  const auto choice = parse_color_choice(text);
  if (!choice) throw UsageError("unknown --color", "--color", "auto, always or never", "'" + text + "'");
  o.color = *choice;
}

void heatmap_scale(const std::string& text, OutputOptions& o) {
  if (text == "row") o.view.scale = report::HeatmapScale::row;
  else if (text == "global") o.view.scale = report::HeatmapScale::global;
  else if (text != "auto")
    throw UsageError("unknown --heatmap-scale", "--heatmap-scale", "auto, global or row", "'" + escaped(text) + "'");
}

// "" means "every head" nowhere: typed, it is a value missing.
void head(const std::string& text, OutputOptions& o) {
  if (text == "mean") {
    o.view.heads = report::PanelView::Heads::mean;
  } else if (all_digits(text)) {
    o.view.heads = report::PanelView::Heads::one;
    o.view.head = static_cast<std::size_t>(std::stoul(text));
    o.head = text;
  } else {
    throw UsageError("--head names one head or their mean", "--head", "mean or a head number (0, 1, ...)",
                     "'" + escaped(text) + "'");
  }
}

}  // namespace

const char* format_name(OutputFormat format) { return format == OutputFormat::json ? "json" : "text"; }

const std::vector<OutputOption>& output_options() {
  using G = OptionGroup;
  using O = OutputOptions;
  // Group by group, in the order of --help. Flags without a value set their field to true.
  static const std::vector<OutputOption> table = {
      {"--stage", G::Outputs, "SEL",
       "Only these stages, in every output: 5, 5-7, 2,5-7, or words of a title (softmax); the lesson still runs whole",
       stage},
      {"--dump", G::Outputs, "DIR",
       "Write every tensor as .npy plus manifest.json into DIR (parents created; a previous dump there is replaced)",
       dump},
      {"--npz", G::Outputs, "FILE",
       "The same files as --dump, in one .npz archive: numpy.load(FILE) (parents created; an existing FILE is replaced)",
       npz},
      {"--format", G::Outputs, "text|json", "text (default) or json: the manifest with values inline, on stdout", format},
      {"--full-json", G::Outputs, nullptr, "With --format json: every value of every tensor (default: over 1000 values, a summary)",
       [](const std::string&, O& o) { o.full_json = true; }},
      {"--svg", G::Outputs, "DIR", "Write each attention matrix as an SVG heatmap into DIR (created if missing)", svg},
      {"--html", G::Outputs, "FILE",
       "Write one self-contained page to explore the run: every stage, each attention matrix as a heatmap with values on "
       "hover, a head view and (attn model) a layer x head model view (parents created; an existing FILE is replaced)",
       html},
      {"--svg-panels", G::Outputs, "LIST",
       "Only these panels of --svg: b0 (batch entry 0), h1 (head 1), b0-h1, comma-separated", svg_panels},
      {"--precision", G::Display, "INT", "Decimals printed, 1..10 (default 4)", precision},
      {"--sci-mode", G::Display, "auto|on|off",
       "Tensors in e-notation: on, off, or auto (default: PyTorch's choice, when a value is below 1e-4 or the "
       "largest is over 1000 times the smallest), as torch.set_printoptions(sci_mode=True/False/None)",
       sci_mode},
      {"--full", G::Display, nullptr,
       "Print every stage whole and every tensor: a lesson's default run folds stages that repeat an earlier one to "
       "their titles and leaves out tensors a line names, to fit one sitting",
       [](const std::string&, O& o) { o.full = true; }},
      {"--shapes-only", G::Display, nullptr, "Names and shapes, no values, in every output (text, JSON, dump)",
       [](const std::string&, O& o) { o.shapes_only = true; }},
      {"--step", G::Display, nullptr, "Pause after each stage: Enter/n next, p back, q quit (needs a terminal)",
       [](const std::string&, O& o) { o.step = true; }},
      {"--color", G::Display, "auto|always|never",
       "Colour the heatmaps: auto (a terminal without NO_COLOR, or CLICOLOR_FORCE), always, never", color},
      {"--heatmap-scale", G::Display, "auto|global|row",
       "Heatmaps and --svg: global, one scale 0..max for the tensor; row, each row from its own min to max; auto "
       "(default), row when every weight is within 15% of uniform, else global",
       heatmap_scale},
      {"--head", G::Display, "HEAD",
       "Heatmaps and --svg of (B, h, T, S) weights: mean (averaged over heads, one per batch entry) or N (only head N)",
       head},
  };
  return table;
}

OutputOptions parse_output_options(const TypedOptions& typed, const std::string& command) {
  OutputOptions o;
  o.command = command;
  for (const auto& row : output_options())
    if (const auto it = typed.find(row.flag); it != typed.end()) row.parse(it->second, o);
  return o;
}

std::vector<SharedOption> lesson_command_options() {
  std::vector<SharedOption> all;
  for (OptionGroup g : {OptionGroup::Sizes, OptionGroup::Inputs, OptionGroup::Outputs, OptionGroup::Display}) {
    for (const auto& o : shared_options())
      if (o.group == g) all.push_back(o);
    for (const auto& o : output_options())
      if (o.group == g) all.push_back({o.flag, 0, o.group, o.value, o.help, nullptr});
  }
  return all;
}

void check_own_options(const std::vector<LessonEntry>& lessons) {
  for (const auto& lesson : lessons)
    for (const auto& own : lesson.extra)
      for (const auto& output : output_options())
        if (std::string(own.flag) == output.flag)
          throw std::logic_error("lesson '" + std::string(lesson.name) + "': " + own.flag +
                                 " is a shared option (an output's); no lesson reads it");
}

std::optional<report::PanelSelection> parse_panel_selection(const std::string& text) {
  report::PanelSelection sel;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    report::PanelSelection::Pick pick;
    pick.text = item;
    std::size_t i = 0;
    // "b" digits, then optionally "-h" digits; or "h" digits alone.
    auto number = [&](long& into) {
      const std::size_t from = i;
      while (i < item.size() && std::isdigit(static_cast<unsigned char>(item[i])) && i - from < 6) ++i;
      if (i == from) return false;
      into = std::stol(item.substr(from, i - from));
      return true;
    };
    bool ok = false;
    if (i < item.size() && item[i] == 'b') {
      ++i;
      ok = number(pick.batch);
      if (ok && i < item.size()) ok = item.compare(i, 2, "-h") == 0 && (i += 2, number(pick.head));
    } else if (i < item.size() && item[i] == 'h') {
      ++i;
      ok = number(pick.head);
    }
    if (!ok || i != item.size()) return std::nullopt;
    sel.picks.push_back(pick);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sel;
}

}  // namespace attn::cli
