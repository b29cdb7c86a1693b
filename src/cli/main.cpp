// attn: the command line. CLI11 wiring only: register the option tables (the lessons',
// lesson_kit/shared_options.hpp; the outputs', cli/output_options.hpp), hand what was typed to
// their parsers, run the lesson, render it (cli/render.hpp), and turn every failure into one line
// on stderr with a non-zero status.
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/completion.hpp"
#include "cli/error_line.hpp"
#include "cli/exercises.hpp"
#include "cli/external_io.hpp"
#include "cli/lesson_help.hpp"
#include "cli/output_options.hpp"
#include "cli/model_command.hpp"
#include "cli/model_run.hpp"
#include "cli/progress.hpp"
#include "cli/render.hpp"
#include "cli/terminal.hpp"
#include "cli/tokenize_command.hpp"
#include "cli/verify.hpp"
#include "core/heap.hpp"
#include "io/npy.hpp"
#include "io/text_matrix.hpp"
#include "lesson_kit/article_names.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/shared_options.hpp"
#include "report/heatmap.hpp"
#include "report/nonfinite.hpp"
#include "report/html_sink.hpp"
#include "report/interrupt.hpp"
#include "report/manifest.hpp"
#include "report/svg_sink.hpp"
#include "report/text_sink.hpp"
#include "report/zip_store.hpp"

namespace {

using attn::UsageError;

constexpr int kExitUsage = 2;

// Every option of `attn lesson` (or `attn model DIR`) as typed, by flag, registered from the
// tables: the lessons' (lesson_kit/shared_options.hpp), the outputs' (cli/output_options.hpp), the
// lessons' own and the articles' names. A std::map keeps each element where CLI11 was told to
// write it; typed() hands the ones given to the tables' parsers, which parse each once.
struct RawOptions {
  std::string lesson;
  std::map<std::string, std::string> text;  // options with a value: "--seed" -> "3"
  std::map<std::string, bool> flag;         // options without one: "--shapes-only" -> true

  // Registers `flag` on `cmd`, as an option with a value when `value` names one.
  CLI::Option* add(CLI::App& cmd, const std::string& flag, const char* value, const std::string& help) {
    return value ? cmd.add_option(flag, text[flag], help)->type_name(value) : cmd.add_flag(flag, this->flag[flag], help);
  }
  // The options given on the command line: flag -> text ("" for a flag without a value).
  attn::TypedOptions typed(const CLI::App& cmd) const {
    attn::TypedOptions given;
    for (const auto& [f, t] : text)
      if (cmd.get_option(f)->count()) given[f] = t;
    for (const auto& entry : flag)
      if (cmd.get_option(entry.first)->count()) given[entry.first] = "";
    return given;
  }
};

// CLI11's own messages, reworded into the project's one-line form.
std::string parse_error_text(const CLI::ParseError& e, const std::vector<std::string>& left_over) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("name") != std::string::npos)
    return "missing lesson name (lesson: a name from 'attn list' vs nothing)";
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("exercise") != std::string::npos)
    return "missing exercise name (exercise: a name from 'attn exercises' vs nothing)";
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.find("shell") != std::string::npos)
    return "missing shell name (completion: bash or zsh vs nothing)";
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
    // CLI11 writes the extras last to first (it joins them with detail::rjoin): name them in the
    // order they were typed, from what the parser left over.
    std::string extra = colon == std::string::npos ? what : what.substr(colon + 2);
    if (!left_over.empty()) {
      extra.clear();
      for (const auto& a : left_over) extra += (extra.empty() ? "" : " ") + a;
    }
    return "unexpected argument '" + extra + "' (see attn --help and attn lesson --help)";
  }
  return what + " (see attn --help)";
}

// The lesson named `name`, or UsageError: the nearest name within 3 edits, else all of them.
const attn::LessonEntry& lesson_named(const std::string& name) {
  if (const attn::LessonEntry* lesson = attn::find_lesson(name)) return *lesson;
  const std::string near = attn::closest_lesson(name);
  std::string names;
  for (const auto& l : attn::lessons()) names += (names.empty() ? "" : ", ") + std::string(l.name);
  throw UsageError("unknown lesson '" + name + "'" +
                   (near.empty() ? " (expected one of: " + names + ")" : " (did you mean '" + near + "'?)"));
}

// An argument no one declared. For an option: its name and the nearest option of that command
// (for `attn lesson NAME`, of that lesson), or why attn lacks it (--dropout); anything else is
// CLI11's complaint reworded.
std::string extras_text(const CLI::App& app, const CLI::ExtrasError& e, const RawOptions& raw) {
  const CLI::App* cmd = &app;
  for (const CLI::App* sub : app.get_subcommands()) cmd = sub;  // the subcommand being parsed
  std::vector<std::string> known, elsewhere;
  std::string help = "see attn " + (cmd == &app ? std::string() : cmd->get_name() + " ") + "--help";
  if (cmd->get_name() == "lesson" && !raw.lesson.empty()) {
    try {  // an unknown lesson is the first thing to fix
      const attn::LessonEntry& lesson = lesson_named(raw.lesson);
      for (const auto& f : attn::cli::lesson_flags(lesson)) known.push_back(f.flag);
      known.push_back("--help");
      for (const CLI::Option* opt : cmd->get_options())
        for (const auto& name : opt->get_lnames()) elsewhere.push_back("--" + name);
      help = "see attn lesson " + raw.lesson + " --help";
    } catch (const UsageError& unknown) {
      return unknown.what();
    }
  } else {
    for (const CLI::Option* opt : cmd->get_options())
      for (const auto& name : opt->get_lnames()) known.push_back("--" + name);
  }
  for (const auto& extra : cmd->remaining())
    if (extra.size() > 1 && extra[0] == '-' && !std::isdigit(static_cast<unsigned char>(extra[1])))
      return attn::unknown_option_message(extra, known, elsewhere, help);
  return parse_error_text(e, app.remaining(true));
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
         "  all of a run's tensors together: at most " + n(attn::kMaxHeldBytes >> 20) +
         " MiB held at once (--shapes-only computes nothing past it where it can)\n"
         "  --src, --tgt: at most " + n(attn::kMaxSentence) + " words; --hidden: 1.." + n(attn::kMaxHidden) + "\n"
         "  scaling: --seq-len 1..4096 (each key is scored by 256 queries at five widths)\n"
         "  --input, --weights, --states: a file's shape (an .npy header, a text file's rows so far) meets\n"
         "    these limits before its data is read; text files at most " + n(attn::kTextMaxBytes >> 20) + " MiB\n"
         "  printing: a tensor over 1000 values shows the first and last 3 of each axis, as PyTorch does;\n"
         "    heatmaps: at most " + n(attn::report::kMaxHeatmapPanels) + " grids per tensor; tables: " +
         n(attn::report::kMaxTableRows) + " rows whole, else the first 32 and last 8;\n"
         "    each says what it left out\n"
         "  --format json: a tensor over " + n(attn::report::kJsonInlineValues) +
         " values gets a summary instead of its values; --full-json writes all\n"
         "  --svg: at most " + n(attn::report::kMaxSvgFiles) + " pictures per run (pick with --svg-panels), each at most " +
         n(attn::report::kMaxSvgSide) + " x " + n(attn::report::kMaxSvgSide) + "\n"
         "  --html: a page of at most " + n(attn::report::kHtmlPageBudget >> 20) + " MiB: heatmaps hold " +
         n(attn::report::kHtmlHeatmapValues) + " values (past that, the first tokens),\n"
         "    at most " + n(attn::report::kHtmlMaxSide) + " tokens a side; printed values at most " +
         n(attn::report::kHtmlTextBytes >> 10) + " KiB\n"
         "  --npz: at most " + n(attn::report::kZip32MaxBytes) + " bytes (zip32's 4 GiB) and " +
         n(attn::report::kZip32MaxMembers) + " members, counted from the shapes before writing\n";
}

// Every command and its options, as CLI11 holds them, for the completion script.
std::vector<attn::cli::CompletionCommand> completion_commands(const CLI::App& app) {
  std::vector<attn::cli::CompletionCommand> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    attn::cli::CompletionCommand c{sub->get_name(), {}};
    for (const CLI::Option* opt : sub->get_options())
      for (const auto& name : opt->get_lnames())
        c.options.push_back({"--" + name, opt->get_expected_min() == 0 ? "" : opt->get_type_name()});
    commands.push_back(c);
  }
  return commands;
}

// The exercise names, for completion; none when the exercise table cannot be read.
std::vector<std::string> exercise_names() {
  std::vector<std::string> names;
  try {
    for (const auto& e : attn::cli::load_exercises(attn::cli::ExercisePaths::configured())) names.push_back(e.name);
  } catch (const std::runtime_error&) {
  }
  return names;
}

// The lesson screen's last lines: the exercises that practise this lesson, wrapped at 80
// columns. Empty when no row of the table names the lesson, or when the table cannot be read
// (an attn installed without its source tree).
std::string practise_lines(const std::string& lesson) {
  std::vector<attn::cli::Exercise> all;
  try {
    all = attn::cli::load_exercises(attn::cli::ExercisePaths::configured());
  } catch (const std::runtime_error&) {
    return "";
  }
  // Wrapped between these pieces, never inside a command.
  std::vector<std::string> words = {"Practise it:"};
  for (const auto& e : all)
    if (e.lesson == lesson) {
      if (words.size() > 1) words.back() += ",";
      words.push_back("attn check " + e.name);
    }
  if (words.size() == 1) return "";
  words.push_back("(attn exercises lists all " + std::to_string(all.size()) + ").");
  std::string text, line;
  for (const auto& w : words) {
    if (!line.empty() && line.size() + 1 + w.size() > 80) {
      text += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  return text + line + "\n";
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

// The exercises of the clone this attn was built for, refused when it runs from another place (a
// copied or moved repository): its commands would touch the other clone's files.
attn::cli::ExercisePaths own_exercise_paths() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? attn::cli::ExercisePaths::configured()
            : attn::cli::ExercisePaths::for_binary_in(exe.parent_path().string());
}

int run_lesson(const RawOptions& raw, CLI::App& cmd, const std::string& command_line) {
  const attn::LessonEntry& lesson = lesson_named(raw.lesson);  // the one look-up: the entry is passed on
  const attn::TypedOptions typed = raw.typed(cmd);
  // The lesson's options, each parsed once by its row into its field; the files --input, --weights
  // and --states name are read here, before the lesson runs.
  attn::LessonOptions opts;
  opts.shapes_only = typed.count("--shapes-only") != 0;  // the files' values are not read past their shapes
  std::set<std::string> given;
  attn::parse_lesson_options(lesson, typed, attn::cli::option_files(lesson), opts, given);
  attn::check_options_apply(lesson, given);
  if (typed.count("--preset")) attn::apply_preset(typed.at("--preset"), lesson.name, typed.count("--values") != 0, opts);

  attn::cli::OutputOptions output = attn::cli::parse_output_options(typed, command_line);
  output.shapes_only = opts.shapes_only;  // a preset may show shapes only (llama)
  attn::cli::check_output(output);

  // The whole lesson is computed before anything is printed: a bad option or a size refused
  // half-way leaves stdout empty.
  attn::report::Report report;
  // --shapes-only means no values in any sink: the text, --format json and --dump's manifest
  // carry names and shapes only (--svg is refused beside it), so stages hold none, and lessons
  // that can skip computing them past printable sizes do (lesson_kit/options.hpp, check_sizes).
  report.keep_values = !output.shapes_only;
  {
    // Training lessons report their steps; the bar shows only on a terminal's stderr, only for a
    // run longer than half a second, and is gone (even on an error) before anything else prints.
    attn::cli::ProgressBar bar(std::cerr, attn::cli::stderr_is_terminal());
    opts.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
    lesson.run(opts, report);
    opts.progress = nullptr;
  }
  // NaN and inf: where they came from (the input, an overflow, a fully masked row), said in the
  // stage they first appear in and in the heatmaps' legends, before --stage picks stages.
  const std::vector<std::string> input_nonfinite = attn::cli::nonfinite_notes(opts);
  attn::report::explain_nonfinite(report, !input_nonfinite.empty());
  // --stage: only the selected stages go on (refused here, before any output, when the lesson has
  // fewer stages or no title holds the words).
  attn::cli::select_stages(report, output);
  // --allow-nonfinite: the first stage shown says where the kept NaN and inf are.
  if (!report.stages().empty())
    for (const auto& note : input_nonfinite) report.stages_to_annotate().front().note(note);

  attn::cli::render(report, output);
  // The whole text screen ends by naming its exercises (not --stage's part of it, not --step's
  // pages, not JSON).
  if (output.format == attn::cli::OutputFormat::text && !output.step && !output.stage) {
    const std::string practise = practise_lines(lesson.name);
    if (!practise.empty()) std::cout << "\n" << practise;
  }

  return attn::cli::failed_checks_status(report);
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A reader that leaves early (attn lesson causal | head -3) makes writes fail with EPIPE
  // instead of killing the process, so attn can end quietly with status 0.
  std::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C, SIGTERM, SIGHUP or SIGQUIT while outputs are written: their temporary entries go.
  attn::report::remove_staging_on_signals();
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
  // The shared options, from their two tables (the lessons', then the outputs'), in their groups.
  for (const auto& o : attn::cli::lesson_command_options()) {
    // Which lessons read it, when that is a few (the rest: attn lesson NAME --help).
    std::string help = o.help, takers;
    std::size_t count = 0;
    for (const auto& l : attn::lessons())
      if (attn::applies(o, l.options)) takers += (count++ ? ", " : "") + std::string(l.name);
    if (o.bits != 0 && count <= 4) help += " (" + takers + ")";
    raw.add(*lesson, o.flag, o.value, help)->group(attn::group_title(o.group));
  }
  lesson->footer(limits_help());
  // Options of a lesson's own, from its registration: read as strings, parsed strictly later. One
  // named like an output option is a programming error (add_lesson refuses the lessons' shared
  // names), found on the first run.
  try {
    attn::cli::check_own_options(attn::lessons());
  } catch (const std::logic_error& e) {
    std::fprintf(stderr, "attn: internal: cannot register a lesson: %s\n", e.what());
    std::abort();
  }
  for (const auto& o : attn::declared_lesson_options()) {
    std::string takers;
    bool same = true;  // every lesson that declares it gives the same meaning, range and default
    for (const auto& l : attn::lessons())
      if (const attn::LessonOption* mine = l.find_extra(o.flag)) {
        takers += (takers.empty() ? "" : ", ") + std::string(l.name);
        same = same && std::string(mine->help) == o.help && mine->lo == o.lo && mine->hi == o.hi &&
               mine->fallback == o.fallback;
      }
    const bool list = o.type == attn::OptionType::IntegerList;
    const std::string range = attn::format_option_value(o.lo) + ".." + attn::format_option_value(o.hi);
    // One lesson's meaning would mislead in another (rope's --d-k is even, gqa's 0 is d_in / heads).
    const std::string help = !same ? "Not the same in " + takers +
                                         ": attn lesson NAME --help gives its meaning, range and default"
                                   : std::string(o.help) + "; " +
                                         (list ? "comma-separated, each " + range
                                               : range + ", default " + attn::format_option_value(o.fallback)) +
                                         " (" + takers + ")";
    lesson->add_option(o.flag, raw.text[o.flag], help)
        ->type_name(list ? "INT,..." : o.type == attn::OptionType::Integer ? "INT" : "REAL")
        ->group("Options of one lesson (attn lesson NAME --help shows a lesson's own)");
  }

  // The articles' names for the sizes (docs/names.md), unless a lesson declares one as its own
  // (rope's --d-k); what each means is decided per lesson in apply_article_names.
  for (const auto& a : attn::article_names())
    if (!lesson->get_option_no_throw(a.flag))
      lesson->add_option(a.flag, raw.text[a.flag], a.help)->type_name("INT")->group("The articles' names (docs/names.md)");

  // Exercises (src/cli/exercises.hpp): list them, check one, show its hint.
  std::string exercise;
  app.add_subcommand("exercises", "List the exercises: what to edit, and which pass now");
  CLI::App* check = app.add_subcommand("check", "Build one exercise and run its checks: attn check NAME");
  check->add_option("exercise", exercise, "Exercise name (see attn exercises)")->required();
  std::string check_time, check_memory, check_build_time, check_build_memory;
  const attn::cli::CheckLimits default_limits;
  check->add_option("--time-limit", check_time, "Stop the checks after this many seconds, 1..3600 (default " +
                    std::to_string(default_limits.time_limit_s) + ")")->type_name("SECONDS");
  check->add_option("--memory-limit", check_memory, "Memory the checks may use, 256..1048576 MiB (default " +
                    std::to_string(default_limits.memory_mib) + ")")->type_name("MIB");
  check->add_option("--build-time-limit", check_build_time, "Stop the build after this many seconds, 1..86400 (default " +
                    std::to_string(default_limits.build_time_limit_s) + ")")->type_name("SECONDS");
  check->add_option("--build-memory-limit", check_build_memory, "Memory each process of the build (the compiler) may use, "
                    "256..1048576 MiB (default " + std::to_string(default_limits.build_memory_mib) + ")")->type_name("MIB");
  CLI::App* hint = app.add_subcommand("hint", "Print the hint for one exercise: attn hint NAME");
  hint->add_option("exercise", exercise, "Exercise name (see attn exercises)")->required();
  CLI::App* reset = app.add_subcommand("reset", "Put the shipped file of one exercise back (yours is kept): attn reset NAME");
  reset->add_option("exercise", exercise, "Exercise name (see attn exercises)")->required();
  CLI::App* watch = app.add_subcommand("watch", "Check the current exercise each time you save it, then move on: attn watch [NAME]");
  watch->add_option("exercise", exercise, "Start at this exercise (default: the first that does not pass)");

  // attn verify: every lesson's checks over defaults, presets, seeds and sizes.
  std::string verify_seeds, verify_lesson;
  bool verify_list = false;
  CLI::App* verify = app.add_subcommand("verify", "Run every lesson over its defaults, presets, many seeds and sizes; report every check");
  verify->add_option("--seeds", verify_seeds, "Seeds 0..N-1 for each lesson (default 50)")->type_name("N");
  verify->add_option("--lesson", verify_lesson, "Only this lesson")->type_name("NAME");
  verify->add_flag("--list", verify_list, "Print every check of every run, not only the failures");

  // attn model DIR: a Hugging Face checkpoint folder, read strictly and described
  // (cli/model_command.*), or run on a prompt stage by stage (cli/model_run.*).
  attn::cli::ModelCommandOptions model_options;
  bool model_summary = false, model_no_bos = false;
  std::string model_text, model_text_file, model_ids, model_layer, model_top_k;
  std::string model_probe, model_probe_length, model_seed, model_query, model_key;
  bool model_logit_lens = false;
  RawOptions model_raw;
  CLI::App* model = app.add_subcommand("model", "A Hugging Face checkpoint folder: describe it (attn model DIR) or run it "
                                                "stage by stage (attn model DIR --text \"...\")");
  model->add_option("dir", model_options.dir, "The checkpoint folder: config.json and model.safetensors (or shards and their index)")
      ->required()->type_name("DIR");
  model->add_flag("--summary", model_summary, "Print the summary: files, module tree, tensors, sizes, config (the default)");
  model->add_flag("--allow-nonfinite", model_options.allow_nonfinite, "Report NaN and inf weights instead of refusing them");
  model->add_flag("--headers-only", model_options.headers_only,
                  "Check names, shapes, dtypes and offsets without reading the values (fast on a big model)");
  const char* run_group = "Running the model (docs/model.md)";
  model->add_option("--text", model_text, "Run the model on this text, tokenized by DIR's tokenizer.json (UTF-8, at most 1 MiB)")
      ->type_name("TEXT")->group(run_group);
  model->add_option("--text-file", model_text_file, "The text from a file ('-': standard input)")->type_name("FILE")->group(run_group);
  model->add_option("--ids", model_ids, "Run the model on these token ids (no tokenizer needed)")->type_name("ID,...")->group(run_group);
  model->add_flag("--no-bos", model_no_bos, "Leave out the tokens the tokenizer's template puts before the text")->group(run_group);
  model->add_option("--layer", model_layer, "Layers shown in full, counted from 0 as outputs.attentions: N, A-B, N,M, all or "
                                            "none (default: the last); every layer runs and gets a line")
      ->type_name("LAYERS")->group(run_group);
  model->add_option("--top-k", model_top_k, "Most likely next tokens listed, 1..100 (default 5)")->type_name("K")->group(run_group);
  const char* heads_group = "What the heads do (docs/model.md)";
  model->add_option("--probe", model_probe, "Run a probe instead of a text: induction (BOS, N random ids, the same N again)")
      ->type_name("induction")->group(heads_group);
  model->add_option("--probe-length", model_probe_length, "The probe's N random ids (default 50)")->type_name("N")->group(heads_group);
  model->add_option("--seed", model_seed, "Seed of the probe's ids, as torch.Generator().manual_seed (default 0)")
      ->type_name("INT")->group(heads_group);
  model->add_option("--query", model_query, "Where this token looks in every layer and head: a position, or a word (its last "
                                            "occurrence)")->type_name("WORD|POS")->group(heads_group);
  model->add_option("--key", model_key, "With --query: rank every head by the weight the query puts on this token")
      ->type_name("WORD|POS")->group(heads_group);
  model->add_flag("--logit-lens", model_logit_lens, "What each layer would predict: the final norm and the unembedding "
                                                    "applied to every layer's output")->group(heads_group);
  for (const auto& o : attn::cli::output_options()) model_raw.add(*model, o.flag, o.value, o.help)->group(attn::group_title(o.group));
  model->footer(attn::cli::model_limits_help());

  // attn tokenize DIR --text "..." (cli/tokenize_command.*, docs/tokenizers.md).
  attn::cli::TokenizeOptions tokenize_opts;
  std::string tokenize_text, tokenize_ids, tokenize_format = "text";
  bool tokenize_bos = false, tokenize_no_bos = false;
  CLI::App* tokenize = app.add_subcommand("tokenize", "Split text into a Hugging Face tokenizer's tokens: attn tokenize DIR --text \"...\"");
  tokenize->add_option("dir", tokenize_opts.path, "A checkpoint folder (its tokenizer.json) or a tokenizer.json")->required();
  tokenize->add_option("--text", tokenize_text, "The text to tokenize: valid UTF-8, at most 1 MiB")->type_name("TEXT");
  std::string tokenize_text_file;
  tokenize->add_option("--text-file", tokenize_text_file, "The text from a file ('-': standard input), for texts longer than one argument may be")->type_name("FILE");
  tokenize->add_option("--ids", tokenize_ids, "Decode these ids instead of tokenizing text")->type_name("ID,...");
  tokenize->add_flag("--bos", tokenize_bos, "Start with the BOS token even if the file's post-processor adds none "
                     "(the BOS named by tokenizer_config.json's bos_token; an error if none is known)");
  tokenize->add_flag("--no-bos", tokenize_no_bos, "Leave out the tokens the post-processor's template puts before the text");
  tokenize->add_flag("--no-special", tokenize_opts.no_special, "Add nothing after tokenizing (Hugging Face's add_special_tokens=False)");
  tokenize->add_option("--format", tokenize_format, "text (default) or json: {\"ids\", \"tokens\", \"pieces\", \"added\", \"text\"}")->type_name("FORMAT");
  tokenize->footer("Limits: --text (or --text-file) at most 1 MiB of valid UTF-8 (invalid bytes are refused with their offset); at most the\n"
                   "model's context in tokens (config.json's n_positions or max_position_embeddings, when present);\n"
                   "tokenizer.json at most 64 MiB. docs/tokenizers.md says more.\n");

  // attn completion bash: the words come from the commands as registered above.
  std::string shell;
  CLI::App* completion = app.add_subcommand("completion", "Print a shell completion script: source <(attn completion bash)");
  completion->add_option("shell", shell, "The shell: bash or zsh")->required();

  try {
    // A first word that is no command: named, with the nearest command, before CLI11 parses (it
    // would call it an unexpected argument, or print the general help for `attn lessons --help`).
    if (argc > 1 && argv[1][0] != '-') {
      std::vector<std::string> commands;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
      if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
        const std::string near = attn::closest_name(argv[1], commands);
        std::string all;
        for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;
        throw UsageError("unknown command '" + attn::escaped_for_message(argv[1], 80, true) + "'" +
                         (near.empty() ? " (expected one of: " + all + ")" : " (did you mean '" + near + "'?)"));
      }
    }
    app.parse(argc, argv);
    int status = 0;
    if (app.got_subcommand("list")) {
      if (list_presets_flag && list_names_flag)
        throw UsageError("--presets and --names contradict each other", "--names", "one of them", "both");
      status = list_presets_flag ? list_presets() : list_lessons(list_names_flag);
    } else if (app.got_subcommand("lesson")) {
      // Recorded in manifests as a line a shell reads back into the same words.
      std::vector<std::string> words = {"attn"};
      for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
      status = run_lesson(raw, *lesson, attn::report::shell_command(words));
    } else if (app.got_subcommand("verify")) {
      attn::cli::VerifyOptions v;
      if (verify->get_option("--seeds")->count()) v.seeds = attn::parse_whole("--seeds", verify_seeds, 0, 100000);
      if (verify->get_option("--lesson")->count()) {
        if (verify_lesson.empty())
          throw UsageError("--lesson needs a lesson name", "--lesson", "a name from 'attn list'", "''");
        if (!attn::find_lesson(verify_lesson)) {
          const std::string near = attn::closest_lesson(verify_lesson);
          throw UsageError("unknown lesson '" + verify_lesson + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                           "--lesson", "a name from 'attn list'", verify_lesson);
        }
        v.lesson = verify_lesson;
      }
      v.list = verify_list;
      status = attn::cli::verify(v, std::cout);
    } else if (app.got_subcommand(model)) {
      const bool runs = model->get_option("--text")->count() || model->get_option("--text-file")->count() ||
                        model->get_option("--ids")->count() || model->get_option("--probe")->count();
      if (!runs) {
        // Options that only a run reads: refused by name rather than ignored.
        for (const char* f : {"--layer", "--top-k", "--no-bos", "--probe-length", "--seed", "--query", "--key", "--logit-lens"})
          if (model->get_option(f)->count())
            throw UsageError(std::string(f) + " applies to a run", f, "--text, --text-file, --ids or --probe beside it", "none of them");
        for (const auto& o : attn::cli::output_options())
          if (model->get_option(o.flag)->count())
            throw UsageError(std::string(o.flag) + " applies to a run", o.flag, "--text, --text-file, --ids or --probe beside it", "none of them");
        if (model_options.headers_only && model_options.allow_nonfinite)
          throw UsageError("--allow-nonfinite has no values to apply to with --headers-only", "--allow-nonfinite",
                           "one of them", "both");
        status = attn::cli::run_model_command(model_options, std::cout);
      } else {
        for (const char* f : {"--summary", "--headers-only", "--allow-nonfinite"})
          if (model->get_option(f)->count())
            throw UsageError(std::string(f) + " describes the checkpoint without running it", f, "no --text, --text-file, --ids or --probe",
                             "a prompt");
        attn::cli::ModelRunOptions run;
        run.dir = model_options.dir;
        if (model->get_option("--text")->count()) run.text = model_text;
        if (model->get_option("--text-file")->count()) run.text_file = model_text_file;
        if (model->get_option("--ids")->count()) run.ids = model_ids;
        if (model->get_option("--layer")->count()) run.layer = model_layer;
        if (model->get_option("--top-k")->count()) run.top_k = attn::parse_whole("--top-k", model_top_k, 1, 100);
        run.no_bos = model_no_bos;
        if (model->get_option("--probe")->count()) run.probe = model_probe;
        if (model->get_option("--probe-length")->count())
          run.probe_length = attn::parse_whole("--probe-length", model_probe_length, 2, attn::cli::kModelMaxTokens / 2);
        if (model->get_option("--seed")->count()) run.seed = attn::parse_whole("--seed", model_seed, 0, (std::uint64_t{1} << 63) - 1);
        run.probe_length_given = model->get_option("--probe-length")->count() > 0;
        run.seed_given = model->get_option("--seed")->count() > 0;
        if (model->get_option("--query")->count()) run.query = model_query;
        if (model->get_option("--key")->count()) run.key = model_key;
        run.logit_lens = model_logit_lens;
        std::vector<std::string> words = {"attn"};
        for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
        const attn::cli::OutputOptions output =
            attn::cli::parse_output_options(model_raw.typed(*model), attn::report::shell_command(words));
        status = attn::cli::run_model(run, output);
      }
    } else if (app.got_subcommand("completion")) {
      if (shell != "bash" && shell != "zsh")
        throw UsageError("attn completion has no script for '" + shell + "'", "completion", "bash or zsh",
                         "'" + shell + "'");
      const std::string script = attn::cli::bash_completion(completion_commands(app), exercise_names());
      std::cout << (shell == "zsh" ? attn::cli::zsh_completion(script) : script);
    } else if (app.got_subcommand(tokenize)) {
      if (tokenize_bos && tokenize_no_bos)
        throw UsageError("--bos and --no-bos contradict each other", "--bos", "one of them", "both");
      if (tokenize_format != "text" && tokenize_format != "json")
        throw UsageError("unknown --format", "--format", "text or json", "'" + tokenize_format + "'");
      if (tokenize->get_option("--text")->count()) tokenize_opts.text = tokenize_text;
      if (tokenize->get_option("--ids")->count()) tokenize_opts.ids = tokenize_ids;
      if (tokenize->get_option("--text-file")->count()) tokenize_opts.text_file = tokenize_text_file;
      tokenize_opts.bos = tokenize_bos ? attn::cli::TokenizeOptions::Bos::Add
                          : tokenize_no_bos ? attn::cli::TokenizeOptions::Bos::Drop
                                            : attn::cli::TokenizeOptions::Bos::AsTemplate;
      tokenize_opts.json = tokenize_format == "json";
      std::ostringstream printed;  // all or nothing: a refusal half-way leaves stdout empty
      status = attn::cli::run_tokenize(tokenize_opts, printed);
      std::cout << printed.str();
    } else if (app.got_subcommand("exercises")) {
      status = attn::cli::list_exercises(own_exercise_paths(), std::cout);
    } else if (app.got_subcommand("check")) {
      attn::cli::CheckLimits limits;
      if (check->get_option("--time-limit")->count())
        limits.time_limit_s = static_cast<int>(attn::parse_whole("--time-limit", check_time, 1, 3600));
      if (check->get_option("--memory-limit")->count()) limits.memory_mib = attn::parse_whole("--memory-limit", check_memory, 256, 1 << 20);
      if (check->get_option("--build-time-limit")->count())
        limits.build_time_limit_s = static_cast<int>(attn::parse_whole("--build-time-limit", check_build_time, 1, 86400));
      if (check->get_option("--build-memory-limit")->count())
        limits.build_memory_mib = attn::parse_whole("--build-memory-limit", check_build_memory, 256, 1 << 20);
      status = attn::cli::check_exercise(own_exercise_paths(), exercise, std::cout, limits);
    } else if (app.got_subcommand("hint")) {
      status = attn::cli::print_hint(own_exercise_paths(), exercise, std::cout);
    } else if (app.got_subcommand(reset)) {
      status = attn::cli::reset_exercise(own_exercise_paths(), exercise, std::cout);
    } else if (app.got_subcommand(watch)) {
      status = attn::cli::watch_exercises(own_exercise_paths(), exercise, std::cout);
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
    // attn lesson NAME --help: that lesson's options only, grouped (cli/lesson_help.*).
    if (lesson->parsed() && !raw.lesson.empty()) {
      try {
        std::cout << attn::cli::lesson_help(lesson_named(raw.lesson));
        return 0;
      } catch (const UsageError& bad) {
        std::cerr << "attn: error: " << attn::cli::error_line(bad.what()) << "\n";
        return kExitUsage;
      }
    }
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    std::cerr << "attn: error: " << attn::cli::error_line(extras_text(app, e, raw)) << "\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    std::cerr << "attn: error: " << attn::cli::error_line(parse_error_text(e, app.remaining(true))) << "\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "attn: error: " << attn::cli::error_line(e.what()) << "\n";
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "attn: error: out of memory (try smaller sizes)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attn: error: internal: " << attn::cli::error_line(e.what()) << "\n";
    return 1;
  }
}
