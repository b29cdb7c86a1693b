// Pictures as a learner meets them (docs/pictures.md): --step driven through a real
// pseudo-terminal, colour decided by the terminal, NO_COLOR and --color, heatmaps laid out to the
// window's width, and --svg files checked by an XML parser. Also: docs/img holds exactly what its
// documented command makes.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "process.hpp"
#include "pty.hpp"
#include "xml_check.hpp"

using attn::testing::PtyRun;
using attn::testing::run;
using attn::testing::run_shell;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kSource = ATTN_SOURCE_DIR;
const std::vector<std::string> kHeads = {kAttn, "lesson", "heads", "--tokens", "the financial bank is located on river bank",
                                         "--d-in", "8", "--d-out", "8", "--heads", "2", "--batch", "1", "--no-causal",
                                         "--qkv-bias"};

// A plain terminal's environment; nothing inherited (CI may set COLUMNS, NO_COLOR, COLORTERM).
std::vector<std::string> env(std::vector<std::string> extra = {}) {
  std::vector<std::string> e = {"TERM=xterm-256color", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
  e.insert(e.end(), extra.begin(), extra.end());
  return e;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool has_escape(const std::string& s) { return s.find('\x1b') != std::string::npos; }

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> svgs_in(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".svg") == 0) out.insert(n);
    }
    closedir(d);
  }
  return out;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/attn-pictures-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

void remove_tree(const std::string& dir) { run({"/bin/rm", "-rf", dir}); }

// The lines of every heatmap block in `out` (from its "heatmap" line through its legend), with
// terminal line ends and colour escapes removed, measured in characters.
std::vector<std::string> heatmap_lines(const std::string& out) {
  std::vector<std::string> lines, block;
  std::istringstream in(out);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string plain;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      plain += line[i];
    }
    if (plain.rfind("heatmap", 0) == 0) inside = true;
    if (inside && plain.empty()) inside = false;
    if (inside) lines.push_back(plain);
  }
  return lines;
}

std::size_t chars(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool cooked(const termios& t) { return (t.c_lflag & ICANON) && (t.c_lflag & ECHO) && (t.c_lflag & ISIG); }

const std::string kDot = "\u00b7";

}  // namespace

TEST_CASE("--step without a terminal is refused at once, not left waiting") {
  const auto r = run({kAttn, "lesson", "causal", "--step"});  // stdin is /dev/null
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: error: --step needs a terminal (--step: standard input and output on a terminal vs "
                 "standard input is not a terminal)\n");
  const auto piped = run_shell("echo n | '" + kAttn + "' lesson causal --step", 20);
  CHECK(piped.status == 2);
  CHECK(piped.out.empty());
}

TEST_CASE("--step on a terminal: n shows the next stage, p the previous one again, q quits with 0") {
  PtyRun pty({kAttn, "lesson", "causal", "--step"}, env(), 80, 200);  // every stage fits: no paging
  REQUIRE(cooked(pty.settings()));
  const std::string footer1 = "stage 1/10 " + kDot + " n next " + kDot + " p back " + kDot + " q quit";
  const std::size_t first = pty.wait_for(footer1);
  REQUIRE(first != std::string::npos);
  CHECK(pty.seen().find("[1/10] Inputs: one embedding per token") < first);
  CHECK(pty.seen().find("[2/10]") == std::string::npos);  // nothing beyond stage 1 yet
  CHECK_FALSE(cooked(pty.settings()));                    // raw mode while waiting for a key

  pty.send("n");
  const std::size_t second = pty.wait_for("stage 2/10 " + kDot + " n next", first);
  REQUIRE(second != std::string::npos);
  CHECK(pty.seen().find("[2/10] Queries, keys and values from nn.Linear", first) < second);

  pty.send("p");
  const std::size_t back = pty.wait_for(footer1, second);
  REQUIRE(back != std::string::npos);
  CHECK(count(pty.seen(), "[1/10] Inputs: one embedding per token") == 2);  // stage 1, shown again

  pty.send("\r");  // Enter
  const std::size_t again = pty.wait_for("stage 2/10", back);
  REQUIRE(again != std::string::npos);
  pty.send("\x1b[C");  // the right arrow
  REQUIRE(pty.wait_for("stage 3/10", again) != std::string::npos);

  pty.send("q");
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(pty.seen().find("[4/10]") == std::string::npos);
  CHECK(cooked(pty.settings()));  // the terminal is as it was
}

TEST_CASE("--step to the last stage ends with status 0 and the terminal restored") {
  PtyRun pty({kAttn, "lesson", "scaling", "--step"}, env());
  std::size_t at = 0;
  for (int i = 0; i < 100; ++i) {  // far more presses than stages: only the last footer says "end"
    const std::size_t footer = pty.wait_for(" " + kDot + " p back", at, 5000);
    if (footer == std::string::npos) break;
    at = footer + 1;
    pty.send("n");
  }
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(pty.seen().find(" n end " + kDot + " p back") != std::string::npos);
  CHECK(cooked(pty.settings()));
}

TEST_CASE("--step with --stage pauses only on the selected stages, counted as the headings count them") {
  PtyRun pty({kAttn, "lesson", "causal", "--step", "--stage", "4,softmax"}, env(), 80, 200);
  const std::size_t first = pty.wait_for("stage 4/10 " + kDot + " n next");
  REQUIRE(first != std::string::npos);
  CHECK(pty.seen().find("stages 4, 6-7 of 10 (--stage 4,softmax)") < first);
  CHECK(pty.seen().find("[4/10] The causal mask") < first);
  CHECK(pty.seen().find("[1/10]") == std::string::npos);
  pty.send("n");
  const std::size_t second = pty.wait_for("stage 6/10 " + kDot + " n next", first);
  REQUIRE(second != std::string::npos);
  CHECK(pty.seen().find("[5/10]") == std::string::npos);  // not selected: never shown
  pty.send("n");
  REQUIRE(pty.wait_for("stage 7/10 " + kDot + " n end", second) != std::string::npos);
  pty.send("n");
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(pty.seen().find("[8/10]") == std::string::npos);
  CHECK(cooked(pty.settings()));
}

// The screen a page drew: everything between the end of the footer before it and its own footer.
std::string page_before(const std::string& seen, std::size_t footer) {
  const std::size_t start = seen.rfind(" q quit", footer == 0 ? 0 : footer - 1);
  return seen.substr(start == std::string::npos ? 0 : start, footer - (start == std::string::npos ? 0 : start));
}

TEST_CASE("--step at 80x24 pages a tall stage under its heading, then goes on to the next stage") {
  // heads' stage 3 (fused projections) is 45 body lines: three pages at 24 rows.
  PtyRun pty({kAttn, "lesson", "heads", "--step", "--stage", "3-4", "--color", "never"}, env(), 80, 24);
  std::size_t at = pty.wait_for("stage 3/14 " + kDot + " lines 1-");
  REQUIRE(at != std::string::npos);
  std::size_t pages = 1, last_line = 0, lines = 0;
  for (;;) {
    const std::string page = page_before(pty.seen(), at);
    CAPTURE(page);
    CHECK(page.find("[3/14] Fused projections") != std::string::npos);  // the title on every page
    CHECK(page.find("    out: ") != std::string::npos);                  // and the shapes
    if (pages > 1) CHECK(count(page, "\n") == 23);  // heading, body (blank-filled), footer on row 24
    const std::size_t first = std::stoul(pty.seen().substr(at + std::string("stage 3/14 " + kDot + " lines ").size()));
    CHECK(first == last_line + 1);  // pages follow each other, none skipped or repeated
    const std::size_t dash = pty.seen().find('-', at + 20), of = pty.seen().find(" of ", at);
    last_line = std::stoul(pty.seen().substr(dash + 1));
    lines = std::stoul(pty.seen().substr(of + 4));
    if (last_line == lines) break;
    REQUIRE(pty.seen().substr(at, 120).find("n more") != std::string::npos);
    pty.send(" ");
    at = pty.wait_for("stage 3/14 " + kDot + " lines ", at + 1);
    REQUIRE(at != std::string::npos);
    ++pages;
    REQUIRE(pages < 20);
  }
  CHECK(pages >= 2);
  CHECK(lines > 23);
  CHECK(pty.seen().substr(at, 120).find("n next") != std::string::npos);  // the stage's last page
  // The body's last line was shown: the stage printed whole (no terminal) ends with it.
  const auto whole = run({kAttn, "lesson", "heads", "--stage", "3", "--color", "never"});
  std::string tail = whole.out.substr(0, whole.out.find_last_not_of('\n') + 1);
  tail = tail.substr(tail.rfind('\n') + 1);
  CHECK(page_before(pty.seen(), at).find(tail) != std::string::npos);

  pty.send("p");  // back one page: the title again, lines before the last page
  const std::size_t back = pty.wait_for("stage 3/14 " + kDot + " lines ", at + 1);
  REQUIRE(back != std::string::npos);
  CHECK(page_before(pty.seen(), back).find("[3/14] Fused projections") != std::string::npos);
  CHECK(pty.seen().substr(back, 120).find("n more") != std::string::npos);
  pty.send("nn");  // the last page again, then the next stage
  const std::size_t next = pty.wait_for("[4/14]", back);
  REQUIRE(next != std::string::npos);
  REQUIRE(pty.wait_for("stage 4/14", next) != std::string::npos);
  pty.send("q");
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cooked(pty.settings()));
}

TEST_CASE("--step: Ctrl-Z stops attn with the terminal restored, and after SIGCONT the page is drawn again") {
  PtyRun pty({kAttn, "lesson", "heads", "--step", "--stage", "3-4", "--color", "never"}, env(), PtyRun::JobControl{},
             80, 24);
  const std::size_t first = pty.wait_for("stage 3/14 " + kDot + " lines 1-");
  REQUIRE(first != std::string::npos);
  CHECK_FALSE(cooked(pty.settings()));
  pty.send("\x1a");  // Ctrl-Z
  REQUIRE(pty.next_event() == 'S');  // the program stopped (waitpid WUNTRACED in the shell-like parent)
  CHECK(cooked(pty.settings()));     // the shell gets a sane terminal while attn is stopped
  const std::size_t before = pty.seen().size();
  kill(pty.job(), SIGCONT);  // fg
  CHECK(pty.next_event() == 'C');
  const std::size_t again = pty.wait_for("stage 3/14 " + kDot + " lines 1-", before);
  REQUIRE(again != std::string::npos);  // the same page, drawn again with its title
  CHECK(page_before(pty.seen(), again).find("[3/14] Fused projections") != std::string::npos);
  CHECK_FALSE(cooked(pty.settings()));  // raw mode is back: single keys work
  pty.send("n");
  REQUIRE(pty.wait_for("stage 3/14 " + kDot + " lines ", again + 1) != std::string::npos);
  pty.send("q");
  CHECK(pty.next_event() == 'E');
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cooked(pty.settings()));
}

TEST_CASE("--step: Ctrl-Z where no shell could continue attn is ignored, and keys still work") {
  // Run straight on the pty, attn leads its session: its group is orphaned, the stop is discarded.
  PtyRun pty({kAttn, "lesson", "heads", "--step", "--stage", "3", "--color", "never"}, env(), 80, 24);
  const std::size_t first = pty.wait_for("stage 3/14 " + kDot + " lines 1-19");
  REQUIRE(first != std::string::npos);
  pty.send("\x1a");
  const std::size_t again = pty.wait_for("stage 3/14 " + kDot + " lines 1-19", first + 1);  // drawn again
  REQUIRE(again != std::string::npos);
  CHECK_FALSE(cooked(pty.settings()));  // still raw: a single key is enough
  pty.send("n");
  REQUIRE(pty.wait_for("stage 3/14 " + kDot + " lines 20-", again) != std::string::npos);
  pty.send("q");
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cooked(pty.settings()));
}

TEST_CASE("--step: a resized window is paged again at its new size") {
  PtyRun pty({kAttn, "lesson", "heads", "--step", "--stage", "3", "--color", "never"}, env(), 80, 24);
  const std::size_t first = pty.wait_for("stage 3/14 " + kDot + " lines 1-19 of 45");  // 24 - 4 - 1 rows
  REQUIRE(first != std::string::npos);
  pty.resize(80, 40);  // SIGWINCH: the same page, drawn again with 40 - 4 - 1 rows of body
  const std::size_t taller = pty.wait_for("stage 3/14 " + kDot + " lines 1-35 of 45", first);
  REQUIRE(taller != std::string::npos);
  CHECK(page_before(pty.seen(), taller).find("[3/14] Fused projections") != std::string::npos);
  pty.resize(80, 60);  // now the whole stage fits: the plain footer, no lines
  REQUIRE(pty.wait_for("stage 3/14 " + kDot + " n end", taller) != std::string::npos);
  pty.send("q");
  const int status = pty.finish();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cooked(pty.settings()));
}

TEST_CASE("--step killed while it waits still gives the terminal back") {
  PtyRun pty({kAttn, "lesson", "causal", "--step"}, env());
  REQUIRE(pty.wait_for("stage 1/10") != std::string::npos);
  CHECK_FALSE(cooked(pty.settings()));
  pty.kill_with(SIGTERM);
  const int status = pty.finish();
  CHECK(WIFSIGNALED(status));
  CHECK(cooked(pty.settings()));
}

TEST_CASE("colour on a terminal: auto paints, NO_COLOR and --color never do not") {
  {
    PtyRun pty({kAttn, "lesson", "causal"}, env());
    pty.finish();
    CHECK(pty.seen().find("\x1b[48;5;") != std::string::npos);  // 256 colours by default
  }
  {
    PtyRun pty({kAttn, "lesson", "causal"}, env({"COLORTERM=truecolor"}));
    pty.finish();
    CHECK(pty.seen().find("\x1b[48;2;") != std::string::npos);  // 24-bit when the terminal says so
  }
  {
    PtyRun pty({kAttn, "lesson", "causal"}, env({"NO_COLOR=1", "COLORTERM=truecolor"}));
    pty.finish();
    CHECK(pty.seen().find("heatmap of attn_weights") != std::string::npos);
    CHECK_FALSE(has_escape(pty.seen()));
  }
  {
    PtyRun pty({kAttn, "lesson", "causal", "--color", "never"}, env());
    pty.finish();
    CHECK(pty.seen().find("heatmap of attn_weights") != std::string::npos);
    CHECK_FALSE(has_escape(pty.seen()));
  }
}

TEST_CASE("a pipe gets no escape codes, --color always asks for them") {
  for (const char* lesson : {"self-attention", "causal", "heads", "bahdanau", "luong"}) {
    CAPTURE(lesson);
    const auto r = run({kAttn, "lesson", lesson});
    CHECK(r.status == 0);
    CHECK(r.out.find("heatmap") != std::string::npos);
    CHECK_FALSE(has_escape(r.out));
  }
  const auto colour = run({kAttn, "lesson", "causal", "--color", "always"});
  CHECK(colour.out.find("\x1b[48;5;") != std::string::npos);
  const auto bad = run({kAttn, "lesson", "causal", "--color", "sometimes"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "attn: error: unknown --color (--color: auto, always or never vs 'sometimes')\n");
}

TEST_CASE("heatmaps follow the terminal's width: 40, 80 and 120 columns") {
  for (unsigned short width : {40, 80, 120}) {
    CAPTURE(width);
    PtyRun pty(kHeads, env(), width);
    CHECK(WIFEXITED(pty.finish()));
    const auto lines = heatmap_lines(pty.seen());
    REQUIRE(lines.size() > 10);
    for (const auto& line : lines) {
      CAPTURE(line);
      CHECK(chars(line) <= width);
    }
    // Two heads side by side when they fit, one above the other when not.
    const bool side_by_side = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("[0, 0]") != std::string::npos && l.find("[0, 1]") != std::string::npos;
    });
    CHECK(side_by_side == (width >= 80));
  }
  // COLUMNS, when set, wins over the window size.
  PtyRun pty(kHeads, env({"COLUMNS=40"}), 120);
  pty.finish();
  for (const auto& line : heatmap_lines(pty.seen())) CHECK(chars(line) <= 40);
}

TEST_CASE("--shapes-only draws no heatmap") {
  const auto r = run({kAttn, "lesson", "causal", "--shapes-only"});
  CHECK(r.status == 0);
  CHECK(r.out.find("heatmap") == std::string::npos);
}

TEST_CASE("--svg writes one well-formed SVG per attention matrix and head") {
  const std::string dir = temp_dir() + "/pictures/new";  // missing directories are created
  const auto r = run(with(kHeads, {"--svg", dir}));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const std::set<std::string> heads = {"heads-stage08-attn_weights-b0-h0.svg", "heads-stage08-attn_weights-b0-h1.svg"};
  CHECK(svgs_in(dir) == heads);
  CHECK(r.out.find("\npictures: 2 SVG files in " + dir + "\n    heads-stage08-attn_weights-b0-h0.svg\n") != std::string::npos);
  for (const auto& f : heads) {
    CAPTURE(f);
    const std::string svg = read_file(dir + "/" + f);
    const auto x = attn::testing::check_xml(svg);
    CHECK(x.error == "");
    CHECK(x.root == "svg");
    CHECK(x.count.at("rect") == 64 + 3);  // 8 x 8 cells, background, frame, colour bar
    CHECK(svg.find(">financial</text>") != std::string::npos);
    CHECK(svg.find("attn lesson heads, stage 8/") != std::string::npos);
  }
  // Two heads, two pictures.
  CHECK(read_file(dir + "/heads-stage08-attn_weights-b0-h0.svg") != read_file(dir + "/heads-stage08-attn_weights-b0-h1.svg"));

  // Every lesson: the files parse, and the names say stage, tensor, batch and head.
  const std::vector<std::vector<std::string>> lessons = {{"self-attention", "--batch", "2"},
                                                         {"causal"},
                                                         {"bahdanau"},
                                                         {"luong"},
                                                         {"scaling"}};  // one picture: stage 4's two rows
  for (const auto& args : lessons) {
    CAPTURE(args[0]);
    const std::string d = temp_dir();
    std::vector<std::string> argv = with({kAttn, "lesson"}, args);
    const auto r2 = run(with(argv, {"--svg", d}));
    CHECK(r2.status == 0);
    const auto files = svgs_in(d);
    CHECK_FALSE(files.empty());
    for (const auto& f : files) {
      CAPTURE(f);
      CHECK(f.rfind(args[0] + "-stage", 0) == 0);
      CHECK(attn::testing::check_xml(read_file(d + "/" + f)).error == "");
    }
    if (args.size() > 1) CHECK(files.count("self-attention-stage03-attn_weights-b1.svg") == 1);  // per batch entry
    remove_tree(d);
  }
  remove_tree(dir.substr(0, dir.size() - std::string("/pictures/new").size()));
}

TEST_CASE("--svg refuses a directory it cannot use before writing anything") {
  const std::string dir = temp_dir();
  const std::string file = dir + "/not-a-dir";
  std::ofstream(file) << "x";
  for (const std::string& target : {file, file + "/below"}) {
    CAPTURE(target);
    const auto r = run({kAttn, "lesson", "causal", "--svg", target});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: error: --svg cannot write there (--svg: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto both = run({kAttn, "lesson", "causal", "--shapes-only", "--svg", dir + "/x"});
  CHECK(both.status == 2);
  CHECK(both.err.find("--shapes-only") != std::string::npos);
  struct stat st;
  CHECK(stat((dir + "/x").c_str(), &st) != 0);  // not even the directory was made
  const auto large = run({kAttn, "lesson", "causal", "--seq-len", "300", "--svg", dir + "/y"});
  CHECK(large.status == 2);
  CHECK(large.out.empty());
  CHECK(large.err.find("too large to draw") != std::string::npos);
  CHECK(stat((dir + "/y").c_str(), &st) != 0);
  remove_tree(dir);
}

// Not in the sanitizer build: a check that docs/img matches its commands' output, which the Release
// suite makes; the --svg code it runs is test_svg's and the --svg tests' above (docs/testing.md,
// "CI time").
#ifndef ATTN_SANITIZED
TEST_CASE("docs/img holds exactly what its documented command makes") {
  // docs/img/cases.txt lists the commands; scripts/docs-pictures.sh runs them into docs/img.
  const std::string dir = temp_dir();
  std::istringstream cases(read_file(kSource + "/docs/img/cases.txt"));
  int commands = 0;
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++commands;
    const auto r = run_shell("'" + kAttn + "' " + line + " --svg '" + dir + "' > /dev/null");
    CAPTURE(line);
    CHECK(r.status == 0);
  }
  CHECK(commands >= 3);
  const auto made = svgs_in(dir), kept = svgs_in(kSource + "/docs/img");
  CHECK(made == kept);
  for (const auto& f : made) {
    CAPTURE(f);
    CHECK(read_file(dir + "/" + f) == read_file(kSource + "/docs/img/" + f));  // run scripts/docs-pictures.sh
  }
  remove_tree(dir);
}
#endif

TEST_CASE("--heatmap-scale row: the legend under each heatmap says which scale is in use") {
  const auto global = run({kAttn, "lesson", "causal"});
  REQUIRE(global.status == 0);
  CHECK(global.out.find("scale: blank is exactly 0.0000") != std::string::npos);
  CHECK(global.out.find("own min") == std::string::npos);
  const auto row = run({kAttn, "lesson", "causal", "--heatmap-scale", "row"});
  REQUIRE(row.status == 0);
  CHECK(row.out.find("scale: each row from its smallest weight (.) to its largest (@)") != std::string::npos);
  CHECK(row.out.find("scale: blank is exactly") == std::string::npos);
  // Only the pictures change: the printed tensors are the same.
  CHECK(row.out.substr(0, row.out.find("heatmap")) == global.out.substr(0, global.out.find("heatmap")));
  const auto bad = run({kAttn, "lesson", "causal", "--heatmap-scale", "wide"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "attn: error: unknown --heatmap-scale (--heatmap-scale: auto, global or row vs 'wide')\n");
}

TEST_CASE("--head mean and --head N in the terminal and in --svg, refused past the last head or without heads") {
  const auto mean = run(with(kHeads, {"--head", "mean"}));
  REQUIRE(mean.status == 0);
  CHECK(mean.out.find("mean of 2 heads, one per [b]") != std::string::npos);
  CHECK(mean.out.find("attn_weights[0], mean of 2 heads") != std::string::npos);
  const auto one = run(with(kHeads, {"--head", "1"}));
  REQUIRE(one.status == 0);
  CHECK(one.out.find("head 1 of 2, one per [b, h]") != std::string::npos);
  bool head0 = false;
  for (const auto& line : heatmap_lines(one.out)) head0 = head0 || line.find("[0, 0]") != std::string::npos;
  CHECK_FALSE(head0);

  const std::string dir = "/tmp/attn-head-svg-" + std::to_string(getpid());
  const auto svg = run(with(kHeads, {"--svg", dir, "--head", "mean", "--heatmap-scale", "row"}));
  REQUIRE(svg.status == 0);
  const auto files = svgs_in(dir);
  REQUIRE(files.size() == 1);
  const std::string name = *files.begin();
  CHECK(name.find("-attn_weights-mean-b0.svg") != std::string::npos);
  const std::string text = read_file(dir + "/" + name);
  CHECK(attn::testing::check_xml(text).error == "");
  CHECK(text.find("attn_weights[0]: batch 0, mean of 2 heads") != std::string::npos);
  CHECK(text.find("<title>scale: each row from its smallest weight to its largest (bright); exactly 0 is the darkest</title>") != std::string::npos);
  std::remove((dir + "/" + name).c_str());
  rmdir(dir.c_str());

  const auto past = run(with(kHeads, {"--head", "2"}));
  CHECK(past.status == 2);
  CHECK(past.out.empty());
  CHECK(past.err.rfind("attn: error: --head 2 is past the last head of attn_weights (1, 2, ", 0) == 0);
  CHECK(past.err.find("(--head: mean or 0..1 vs 2)\n") != std::string::npos);
  const auto flat = run({kAttn, "lesson", "causal", "--head", "0"});
  CHECK(flat.status == 2);
  CHECK(flat.err ==
        "attn: error: --head picks heads, but no attention weights of this run have a head axis (--head: a lesson "
        "whose weights are (B, h, T, S), such as heads vs no head axis)\n");
  const auto word = run(with(kHeads, {"--head", "first"}));
  CHECK(word.status == 2);
  CHECK(word.err == "attn: error: --head names one head or their mean (--head: mean or a head number (0, 1, ...) vs 'first')\n");
  CHECK(count(word.err, "\n") == 1);
}

TEST_CASE("--svg says on each picture whether its weights were trained, and names its axes") {
  // align draws the followed sentence before training and after each snapshot step: the flag is
  // per picture, not per lesson.
  const std::string dir = temp_dir();
  const auto r = run({kAttn, "lesson", "align", "--steps", "30", "--stage", "8", "--svg", dir});
  REQUIRE(r.status == 0);
  const std::string before = read_file(dir + "/align-stage08-alignment_after_step_0.svg");
  const std::string after = read_file(dir + "/align-stage08-alignment_after_step_30.svg");
  CHECK(attn::testing::check_xml(before).error == "");
  CHECK(attn::testing::check_xml(after).error == "");
  CHECK(before.find(">untrained weights: drawn at random") != std::string::npos);
  CHECK(after.find(">weights trained for 30 steps</text>") != std::string::npos);
  CHECK(after.find("untrained") == std::string::npos);
  for (const std::string& svg : {before, after}) {
    CHECK(svg.find("class=\"row-axis\"") != std::string::npos);
    CHECK(svg.find(">target words (decoder steps)</text>") != std::string::npos);
    CHECK(svg.find(">source words (encoder states)</text>") != std::string::npos);
    CHECK(svg.find(">alpha (attention weight)</text>") != std::string::npos);
  }
  remove_tree(dir);

  // Weights drawn from the seed are untrained; the same lesson with no learned weights says nothing.
  const std::string d2 = temp_dir();
  REQUIRE(run({kAttn, "lesson", "causal", "--stage", "6", "--svg", d2}).status == 0);
  const std::string causal = read_file(d2 + "/causal-stage06-attn_weights.svg");
  CHECK(causal.find(">untrained weights: drawn at random") != std::string::npos);
  CHECK(causal.find(">queries</text>") != std::string::npos);
  CHECK(causal.find(">keys</text>") != std::string::npos);
  CHECK(causal.find(">attention weight</text>") != std::string::npos);
  REQUIRE(run({kAttn, "lesson", "scaling", "--svg", d2}).status == 0);
  for (const auto& f : svgs_in(d2))
    if (f.rfind("scaling-", 0) == 0) {
      CAPTURE(f);
      CHECK(read_file(d2 + "/" + f).find("trained") == std::string::npos);  // random q and k: no weights
    }
  remove_tree(d2);
}
