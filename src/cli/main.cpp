// attn: the command line. CLI11 wiring only: parse options into LessonOptions, pick the sinks,
// run the lesson, and turn every failure into one line on stderr with a non-zero status.

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/exercises.hpp"
#include "cli/external_io.hpp"
#include "cli/progress.hpp"
#include "cli/render.hpp"
#include "cli/terminal.hpp"
#include "cli/verify.hpp"
#include "core/heap.hpp"
#include "io/text_matrix.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"
#include "report/manifest.hpp"
#include "report/svg_sink.hpp"
#include "report/text_sink.hpp"

namespace {

using attn::UsageError;

constexpr int kExitUsage = 2;
constexpr int kExitCheckFailed = 3;  // a lesson's check failed: everything was printed, then this

// Strict whole numbers: digits only, inside [lo, hi].
std::uint64_t parse_number(const std::string& flag, const std::string& text, std::uint64_t lo,
                           std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    const bool negative = !text.empty() && text[0] == '-' && text.size() > 1 &&
                          text.find_first_not_of("0123456789", 1) == std::string::npos;
    throw UsageError(flag + (negative ? " must not be negative" : " expects a whole number"), flag,
                     range, "'" + text + "'");
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi)
    throw UsageError(flag + " is out of range", flag, range, text);
  return v;
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Words separated by spaces: at least one, at most `limit` (a longer sentence could not be printed
// one word per row).
std::vector<std::string> parse_words(const std::string& flag, const std::string& text, std::size_t limit) {
  auto words = split_words(text);
  if (words.empty()) throw UsageError(flag + " needs at least one word", flag, "words separated by spaces", "'" + text + "'");
  if (words.size() > limit)
    throw UsageError(flag + " is too long to print", flag, "at most " + std::to_string(limit) + " words",
                     std::to_string(words.size()));
  return words;
}

struct RawOptions {  // every option as typed, so the messages can quote it
  std::string lesson;
  std::string seed, precision, batch, seq_len, d_in, d_out, heads, tokens, src, tgt, hidden;
  std::string input, weights, weights_layout, states, dump, format, preset, kv_heads;
  bool values = false;
  bool shapes_only = false, causal = false, no_causal = false, qkv_bias = false;
  std::string color, svg, svg_panels;  // pictures: --color, --svg, --svg-panels
  bool full_json = false;                // --full-json
  bool step = false;
  std::map<std::string, std::string> own;  // lessons' own options (LessonEntry::extra), by flag
  bool allow_nonfinite = false;  // --allow-nonfinite: keep NaN and inf from --input, --weights, --states
};

attn::LessonOptions convert(const RawOptions& raw, CLI::App& cmd, const attn::LessonEntry& lesson,
                            std::set<std::string>& given) {
  attn::LessonOptions o;
  auto seen = [&](const char* flag) {
    if (cmd.get_option(flag)->count() == 0) return false;
    given.insert(flag);
    return true;
  };
  const std::uint64_t max_size = attn::kMaxSize;
  if (seen("--seed")) o.seed = parse_number("--seed", raw.seed, 0, (std::uint64_t{1} << 63) - 1);
  if (seen("--precision")) o.precision = static_cast<int>(parse_number("--precision", raw.precision, 1, 10));
  if (seen("--batch")) o.batch = parse_number("--batch", raw.batch, 1, max_size);
  if (seen("--seq-len")) o.seq_len = parse_number("--seq-len", raw.seq_len, 1, max_size);
  if (seen("--d-in")) o.d_in = parse_number("--d-in", raw.d_in, 1, max_size);
  if (seen("--d-out")) o.d_out = parse_number("--d-out", raw.d_out, 1, max_size);
  if (seen("--heads")) o.heads = parse_number("--heads", raw.heads, 1, max_size);
  const bool causal = seen("--causal"), no_causal = seen("--no-causal");
  if (causal && no_causal)
    throw UsageError("--causal and --no-causal contradict each other", "--causal", "one of them", "both");
  if (causal) o.causal = true;
  if (no_causal) o.causal = false;
  o.qkv_bias = seen("--qkv-bias");
  o.shapes_only = raw.shapes_only;
  if (seen("--tokens")) {
    // "a b c | d e f": one sentence per batch entry.
    std::vector<std::vector<std::string>> sentences;
    std::string rest = raw.tokens + "|";
    for (std::size_t bar; (bar = rest.find('|')) != std::string::npos; rest.erase(0, bar + 1))
      sentences.push_back(parse_words("--tokens", rest.substr(0, bar), attn::kMaxSize));
    o.tokens = sentences.front();
    o.more_sentences.assign(sentences.begin() + 1, sentences.end());
  }
  if (seen("--kv-heads")) o.kv_heads = parse_number("--kv-heads", raw.kv_heads, 1, max_size);
  const bool allow_nonfinite = raw.allow_nonfinite;
  if (allow_nonfinite && !cmd.get_option("--input")->count() && !cmd.get_option("--weights")->count() &&
      !cmd.get_option("--states")->count())
    throw UsageError("--allow-nonfinite has no file to apply to", "--allow-nonfinite", "--input, --weights or --states",
                     "none of them");
  if (seen("--src")) o.src = parse_words("--src", raw.src, attn::kMaxSentence);
  // Files are read only for a lesson that takes them (the others refuse the option by name), and
  // a file's declared shape meets the lesson's limits before its data is read.
  if (seen("--input") && (lesson.options & attn::kInput)) {
    const auto limits = [&](const attn::Shape& shape, const std::string& source, bool complete) {
      attn::cli::check_declared_input(lesson, o, shape, source, complete);
    };
    o.input = attn::cli::load_input(raw.input, allow_nonfinite, limits);
  }
  if (seen("--weights") && (lesson.options & attn::kWeights)) {
    o.weights_dir = raw.weights;
    attn::cli::load_npy_dir("--weights", raw.weights, attn::weight_file_names(lesson.name), o.weights, allow_nonfinite,
                            o.shapes_only);
    attn::cli::refuse_unused_weights(lesson.name, raw.weights);
  }
  if (seen("--states") && (lesson.options & attn::kStates)) {
    o.states_dir = raw.states;
    attn::cli::load_npy_dir("--states", raw.states, attn::state_file_names(lesson.name), o.states, allow_nonfinite,
                            o.shapes_only);
  }
  if (seen("--weights-layout")) {
    if (raw.weights_layout != "math" && raw.weights_layout != "torch")
      throw UsageError("unknown --weights-layout", "--weights-layout", "math (in, out) or torch (out, in)",
                       "'" + raw.weights_layout + "'");
    if (!seen("--weights")) throw UsageError("--weights-layout needs --weights", "--weights-layout", "--weights DIR", "no --weights");
    o.weights_torch_layout = raw.weights_layout == "torch";
  }
  if (seen("--tgt")) o.tgt = parse_words("--tgt", raw.tgt, attn::kMaxSentence);
  if (seen("--hidden")) o.hidden = parse_number("--hidden", raw.hidden, 1, attn::kMaxHidden);
  // A lesson's own options: parsed against the declaration of this lesson; another lesson's
  // option is only noted here, and refused by name in check_options_apply.
  for (const auto& [flag, text] : raw.own) {
    if (!seen(flag.c_str())) continue;
    if (const attn::LessonOption* declared = lesson.find_extra(flag)) {
      if (declared->type == attn::OptionType::IntegerList) o.own_lists[flag] = attn::parse_lesson_list(*declared, text);
      else o.own[flag] = attn::parse_lesson_option(*declared, text);
    }
  }
  return o;
}

// CLI11's own messages, reworded into the project's one-line form.
std::string parse_error_text(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("name") != std::string::npos)
    return "missing lesson name (lesson: a name from 'attn list' vs nothing)";
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("exercise") != std::string::npos)
    return "missing exercise name (exercise: a name from 'attn exercises' vs nothing)";
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const std::string flag = what.substr(0, what.find(':'));
    // "--seed: At Most 1 required but received 2": the option was repeated, not left empty.
    const auto received = what.find("received ");
    if (what.find("At Most 1") != std::string::npos && received != std::string::npos)
      return flag + " was given more than once (" + flag + ": once vs " + what.substr(received + 9) + " times)";
    return flag + " needs a value (" + flag + ": a value vs nothing)";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const auto colon = what.find(": ");
    const std::string extra = colon == std::string::npos ? what : what.substr(colon + 2);
    return "unexpected argument '" + extra + "' (see attn --help and attn lesson --help)";
  }
  return what + " (see attn --help)";
}

// The limits `attn lesson --help` states; each refusal names the option, the limit and what was
// asked, before any work is done.
std::string limits_help() {
  const auto n = [](std::size_t v) { return std::to_string(v); };
  return "Limits (checked before the work; a refusal names the option, the limit and what was asked):\n"
         "  --batch, --seq-len, --d-in, --d-out, --heads, --kv-heads: 1.." + n(attn::kMaxSize) +
         "; --tokens: at most " + n(attn::kMaxSize) + " words\n"
         "  any tensor: at most " + n(attn::kMaxValues) + " values held, " + n(attn::kMaxPrintedValues) +
         " printed (--shapes-only lifts the second)\n"
         "  --src, --tgt: at most " + n(attn::kMaxSentence) + " words; --hidden: 1.." + n(attn::kMaxHidden) + "\n"
         "  --input, --weights, --states: a file's shape (an .npy header, a text file's rows so far) meets\n"
         "    these limits before its data is read; text files at most " + n(attn::kTextMaxBytes >> 20) + " MiB\n"
         "  printing: a tensor over 1000 values shows the first and last 3 of each axis, as PyTorch does\n"
         "  --format json: a tensor over " + n(attn::report::kJsonInlineValues) +
         " values gets a summary instead of its values; --full-json writes all\n"
         "  --svg: at most " + n(attn::report::kMaxSvgFiles) + " pictures per run (pick with --svg-panels), each at most " +
         n(attn::report::kMaxSvgSide) + " x " + n(attn::report::kMaxSvgSide) + "\n";
}

int list_lessons(bool names_only) {
  if (names_only) {  // one per line, in teaching order: for scripts, tests and shell completion
    for (const auto& l : attn::lessons()) std::cout << l.name << "\n";
    return 0;
  }
  std::size_t width = 0;
  for (const auto& l : attn::lessons()) width = std::max(width, std::string(l.name).size());
  std::cout << "Lessons, in teaching order (run: attn lesson NAME):\n\n";
  // Numbers right-aligned to the widest ("  9." under " 10."), so names and summaries line up.
  const std::size_t digits = std::to_string(attn::lessons().size()).size();
  const std::string indent(2 + digits + 2 + width + 2, ' ');
  std::size_t i = 1;
  for (const auto& l : attn::lessons()) {
    std::string name = l.name;
    name.resize(width, ' ');
    std::string number = std::to_string(i++);
    number.insert(0, digits - number.size(), ' ');
    std::cout << "  " << number << ". " << name << "  " << l.title << "\n"
              << attn::report::wrap(l.summary, 80, indent, indent);
  }
  return 0;
}

int list_presets() {
  std::cout << "Presets: attn lesson LESSON --preset NAME\n\n";
  for (const auto& p : attn::presets()) {
    std::string lessons;
    for (const char* l : p.lessons) lessons += (lessons.empty() ? "" : ", ") + std::string(l);
    std::cout << "  " << p.name << std::string(10 - std::string(p.name).size(), ' ') << "for " << lessons << "\n"
              << attn::report::wrap(p.summary, 80, "            ", "            ")
              << attn::report::wrap(std::string("follows: ") + p.follows, 80, "            ", "            ");
  }
  return 0;
}

int run_lesson(const RawOptions& raw, CLI::App& cmd, const std::string& command_line) {
  const attn::LessonEntry* lesson = attn::find_lesson(raw.lesson);
  if (!lesson) {
    const std::string near = attn::closest_lesson(raw.lesson);
    std::string names;
    for (const auto& l : attn::lessons()) names += (names.empty() ? "" : ", ") + std::string(l.name);
    throw UsageError("unknown lesson '" + raw.lesson + "'" +
                     (near.empty() ? " (expected one of: " + names + ")" : " (did you mean '" + near + "'?)"));
  }
  std::set<std::string> given;
  attn::LessonOptions opts = convert(raw, cmd, *lesson, given);
  attn::check_options_apply(*lesson, given);
  if (cmd.get_option("--preset")->count()) attn::apply_preset(raw.preset, lesson->name, raw.values, opts);

  attn::cli::OutputOptions output;
  output.precision = opts.precision;
  output.shapes_only = opts.shapes_only;
  output.dump = cmd.get_option("--dump")->count() > 0;
  output.dump_dir = raw.dump;
  if (cmd.get_option("--format")->count()) output.format = raw.format;
  output.command = command_line;
  output.step = raw.step;
  if (cmd.get_option("--color")->count()) output.color = raw.color;
  output.svg = cmd.get_option("--svg")->count() > 0;
  output.svg_dir = raw.svg;
  output.svg_panels = cmd.get_option("--svg-panels")->count() > 0;
  output.svg_panel_list = raw.svg_panels;
  output.full_json = raw.full_json;
  attn::cli::check_output(output);

  // The whole lesson is computed before anything is printed: a bad option or a size refused
  // half-way leaves stdout empty.
  attn::report::Report report;
  // A text run with --shapes-only reads no value: stages then hold none, and lessons that can
  // skip computing them past printable sizes do (lesson_kit/options.hpp, check_sizes).
  report.keep_values = !(output.shapes_only && !output.dump && output.format == "text");
  {
    // Training lessons report their steps; the bar shows only on a terminal's stderr, only for a
    // run longer than half a second, and is gone (even on an error) before anything else prints.
    attn::cli::ProgressBar bar(std::cerr, attn::cli::stderr_is_terminal());
    opts.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
    lesson->run(opts, report);
    opts.progress = nullptr;
  }
  // --allow-nonfinite: the first stage says where the kept NaN and inf are.
  // The report owns its stages (not const); Report only hands them out read-only.
  if (!report.stages().empty())
    for (const auto& note : attn::cli::nonfinite_notes(opts))
      const_cast<attn::report::Stage&>(report.stages().front()).note(note);

  attn::cli::render(report, output);

  // A failed check is not hidden in the middle of the output: once everything is printed, each
  // one is named on stderr and the status says so.
  const auto failed = attn::report::failed_checks(report);
  if (failed.empty()) return 0;
  std::cout.flush();
  for (const auto& f : failed)
    std::cerr << "attn: check failed in stage " << f.stage << ": " << f.check->text << " ("
              << f.check->measure << " = " << attn::report::measured(f.check->value) << ", required "
              << (f.check->relation == attn::report::Relation::AtMost ? "<= " : ">= ") << f.check->bound << ")\n";
  return kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A reader that leaves early (attn lesson causal | head -3) makes writes fail with EPIPE
  // instead of killing the process, so attn can end quietly with status 0.
  std::signal(SIGPIPE, SIG_IGN);
  attn::keep_freed_memory();  // core/heap.hpp: why

  CLI::App app{"attn: the attention mechanism, one stage at a time.\n"
               "Each lesson prints the equation, the shapes and the tensors of every step,\n"
               "reproducible in PyTorch from the printed seed.", "attn"};
  app.set_version_flag("--version", std::string("attn ") + ATTN_VERSION);
  app.require_subcommand(0, 1);

  bool list_presets_flag = false, list_names_flag = false;
  CLI::App* list = app.add_subcommand("list", "List the lessons in teaching order");
  list->add_flag("--presets", list_presets_flag, "List the article presets instead");
  list->add_flag("--names", list_names_flag, "Only the lesson names, one per line");

  RawOptions raw;
  CLI::App* lesson = app.add_subcommand("lesson", "Run a lesson: attn lesson NAME [options]");
  lesson->add_option("name", raw.lesson, "Lesson name (see attn list)")->required();
  lesson->add_option("--seed", raw.seed, "Seed for torch.manual_seed (default: the article's)")->type_name("INT");
  lesson->add_option("--precision", raw.precision, "Decimals printed, 1..10 (default 4)")->type_name("INT");
  lesson->add_flag("--shapes-only", raw.shapes_only, "Print names and shapes, not values");
  lesson->add_option("--batch", raw.batch, "Batch size B: the input stacked B times")->type_name("INT");
  lesson->add_option("--seq-len", raw.seq_len, "Number of tokens T")->type_name("INT");
  lesson->add_option("--d-in", raw.d_in, "Embedding width d_in")->type_name("INT");
  lesson->add_option("--d-out", raw.d_out, "Projection width d_out (all heads together)")->type_name("INT");
  lesson->add_option("--heads", raw.heads, "Number of heads h (must divide --d-out)")->type_name("INT");
  lesson->add_flag("--causal", raw.causal, "Mask the future (heads lesson; the default there)");
  lesson->add_flag("--no-causal", raw.no_causal, "Let every token see every token (heads lesson)");
  lesson->add_flag("--qkv-bias", raw.qkv_bias, "Give W_query, W_key, W_value a bias (heads lesson)");
  lesson->add_option("--src", raw.src, "Source sentence to translate (RNN lessons)")->type_name("WORDS");
  lesson->add_option("--tgt", raw.tgt, "Target sentence, its translation (RNN lessons)")->type_name("WORDS");
  lesson->add_option("--hidden", raw.hidden, "Hidden width d_h of the RNNs (RNN lessons)")->type_name("INT");
  lesson->add_option("--input", raw.input, "The lesson's x from a file: .npy (float32/64) or a text matrix")->type_name("FILE");
  lesson->add_option("--weights", raw.weights, "Weights from DIR: W_query.npy, W_key.npy, W_value.npy, out_proj.npy (+ *_bias.npy); bahdanau W_a.npy, U_a.npy, v_a.npy; luong W_g.npy, W_c.npy, v_c.npy")->type_name("DIR");
  lesson->add_option("--states", raw.states, "RNN lessons: encoder states H.npy (S, d_enc) and decoder state s.npy (bahdanau) or h_t.npy (luong) from DIR, instead of the lesson's own RNNs")->type_name("DIR");
  lesson->add_option("--weights-layout", raw.weights_layout, "math: files are (in, out) as in Q = X W (default); torch: (out, in) as nn.Linear.weight")->type_name("math|torch");
  lesson->add_option("--dump", raw.dump, "Write every tensor as .npy plus manifest.json into DIR (new or empty)")->type_name("DIR");
  lesson->add_option("--format", raw.format, "text (default) or json: the manifest with values inline, on stdout")->type_name("text|json");
  lesson->add_option("--preset", raw.preset, "An article's configuration (see attn list --presets)")->type_name("NAME");
  lesson->add_flag("--step", raw.step, "Pause after each stage: Enter/n next, p back, q quit (needs a terminal)");
  lesson->add_option("--color", raw.color, "Colour the heatmaps: auto (a terminal without NO_COLOR), always, never")->type_name("auto|always|never");
  lesson->add_option("--svg", raw.svg, "Write each attention matrix as an SVG heatmap into DIR (created if missing)")->type_name("DIR");
  lesson->add_option("--svg-panels", raw.svg_panels, "Only these panels of --svg: b0 (batch entry 0), h1 (head 1), b0-h1, comma-separated")->type_name("LIST");
  lesson->add_flag("--full-json", raw.full_json, "With --format json: every value of every tensor (default: over 1000 values, a summary)");
  lesson->add_flag("--values", raw.values, "Print values even where a preset shows shapes only (llama)");
  lesson->add_option("--kv-heads", raw.kv_heads, "Key/value heads, each shared by heads/kv-heads query heads (heads lesson)")->type_name("INT");
  lesson->add_flag("--allow-nonfinite", raw.allow_nonfinite, "Keep NaN and inf found in --input, --weights or --states (refused by default)");
  lesson->add_option("--tokens", raw.tokens, "Words to attend over, e.g. \"the cat sat\"")->type_name("WORDS");
  lesson->footer(limits_help());
  // Options of a lesson's own, from its registration: read as strings, parsed strictly later.
  for (const auto& o : attn::declared_lesson_options()) {
    std::string takers;
    for (const auto& l : attn::lessons())
      if (l.find_extra(o.flag)) takers += (takers.empty() ? "" : ", ") + std::string(l.name);
    const bool list = o.type == attn::OptionType::IntegerList;
    const std::string range = attn::format_option_value(o.lo) + ".." + attn::format_option_value(o.hi);
    const std::string help = std::string(o.help) + "; " +
                             (list ? "comma-separated, each " + range
                                   : range + ", default " + attn::format_option_value(o.fallback)) +
                             " (" + takers + ")";
    lesson->add_option(o.flag, raw.own[o.flag], help)
        ->type_name(list ? "INT,..." : o.type == attn::OptionType::Integer ? "INT" : "REAL");
  }

  // Exercises (src/cli/exercises.cpp): list them, check one, show its hint.
  std::string exercise;
  app.add_subcommand("exercises", "List the exercises: what to edit, and which pass now");
  CLI::App* check = app.add_subcommand("check", "Build one exercise and run its checks: attn check NAME");
  check->add_option("exercise", exercise, "Exercise name (see attn exercises)")->required();
  std::string check_time, check_memory, check_build_time;
  const attn::cli::CheckLimits default_limits;
  check->add_option("--time-limit", check_time, "Stop the checks after this many seconds, 1..3600 (default " +
                    std::to_string(default_limits.time_limit_s) + ")")->type_name("SECONDS");
  check->add_option("--memory-limit", check_memory, "Memory the checks may use, 256..1048576 MiB (default " +
                    std::to_string(default_limits.memory_mib) + ")")->type_name("MIB");
  check->add_option("--build-time-limit", check_build_time, "Stop the build after this many seconds, 1..86400 (default " +
                    std::to_string(default_limits.build_time_limit_s) + ")")->type_name("SECONDS");
  CLI::App* hint = app.add_subcommand("hint", "Print the hint for one exercise: attn hint NAME");
  hint->add_option("exercise", exercise, "Exercise name (see attn exercises)")->required();

  // attn verify: every lesson's checks over defaults, presets, seeds and sizes.
  std::string verify_seeds, verify_lesson;
  bool verify_list = false;
  CLI::App* verify = app.add_subcommand("verify", "Run every lesson over its defaults, presets, many seeds and sizes; report every check");
  verify->add_option("--seeds", verify_seeds, "Seeds 0..N-1 for each lesson (default 50)")->type_name("N");
  verify->add_option("--lesson", verify_lesson, "Only this lesson")->type_name("NAME");
  verify->add_flag("--list", verify_list, "Print every check of every run, not only the failures");

  try {
    app.parse(argc, argv);
    int status = 0;
    if (app.got_subcommand("list")) {
      if (list_presets_flag && list_names_flag)
        throw UsageError("--presets and --names contradict each other", "--names", "one of them", "both");
      status = list_presets_flag ? list_presets() : list_lessons(list_names_flag);
    } else if (app.got_subcommand("lesson")) {
      std::string command_line = "attn";
      for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
      status = run_lesson(raw, *lesson, command_line);
    } else if (app.got_subcommand("verify")) {
      attn::cli::VerifyOptions v;
      if (verify->get_option("--seeds")->count()) v.seeds = parse_number("--seeds", verify_seeds, 0, 100000);
      if (verify->get_option("--lesson")->count()) {
        if (!attn::find_lesson(verify_lesson)) {
          const std::string near = attn::closest_lesson(verify_lesson);
          throw UsageError("unknown lesson '" + verify_lesson + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                           "--lesson", "a name from 'attn list'", verify_lesson);
        }
        v.lesson = verify_lesson;
      }
      v.list = verify_list;
      status = attn::cli::verify(v, std::cout);
    } else if (app.got_subcommand("exercises")) {
      status = attn::cli::list_exercises(attn::cli::ExercisePaths::configured(), std::cout);
    } else if (app.got_subcommand("check")) {
      attn::cli::CheckLimits limits;
      if (check->get_option("--time-limit")->count())
        limits.time_limit_s = static_cast<int>(parse_number("--time-limit", check_time, 1, 3600));
      if (check->get_option("--memory-limit")->count()) limits.memory_mib = parse_number("--memory-limit", check_memory, 256, 1 << 20);
      if (check->get_option("--build-time-limit")->count())
        limits.build_time_limit_s = static_cast<int>(parse_number("--build-time-limit", check_build_time, 1, 86400));
      status = attn::cli::check_exercise(attn::cli::ExercisePaths::configured(), exercise, std::cout, limits);
    } else if (app.got_subcommand("hint")) {
      status = attn::cli::print_hint(attn::cli::ExercisePaths::configured(), exercise, std::cout);
    } else {
      std::cout << app.help();
    }
    std::cout.flush();
    // A reader that went away is not an error worth a message.
    if (!std::cout && errno != EPIPE) {
      std::cerr << "attn: error: could not write to standard output\n";
      return 1;
    }
    return status;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "attn: error: " << parse_error_text(e) << "\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "attn: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "attn: error: out of memory (try smaller sizes)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attn: error: internal: " << e.what() << "\n";
    return 1;
  }
}
