// The bad-input catalogue, as a table: options, sizes, files, directories, outputs, step mode
// without a terminal, and for every registered lesson (attn list --names, so a lesson added
// later is covered without an edit here) the refusals every lesson shares and a closed pipe.
//
// Every refusal keeps one promise: exit status 2, nothing on stdout, exactly one line on stderr
// starting "attn: error: " and naming the option or file, nothing written where the run was
// told to write, and an answer within a bound generous enough for a loaded machine (a refusal
// is a refusal whether it took 0.1 s or 2 s; the bound catches a file read whole or a
// computation done before a size check). docs/testing.md lists the categories.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kAttn = ATTN_BINARY;
constexpr double kBoundS = 20;  // a refusal, not a run: far above any honest refusal here

struct Case {
  std::vector<std::string> args;   // after "attn"
  std::vector<std::string> names;  // each must appear in the one stderr line (the option, the file, the limit)
};

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Every path under `dir`, to see that a refused run wrote nothing there.
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) all.insert(e.path().string());
  return all;
}

struct Scratch {
  fs::path path;
  Scratch() {
    char tmpl[] = "/tmp/attn-bad-input-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A float32 .npy header declaring `shape` ("(16384, 16384)"); the data is added by the caller.
std::string npy_header(const std::string& shape) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

// A file of `bytes` bytes that costs no disk: a header (or nothing), then a hole of zeros.
void sparse_file(const std::string& path, const std::string& start, std::uintmax_t bytes) {
  write_file(path, start);
  fs::resize_file(path, bytes);
}

void refused(const Case& c, const fs::path& watched, int status = 2) {
  std::string line = "attn";
  for (const auto& a : c.args) line += " " + a;
  CAPTURE(line);
  const auto before = listing(watched);
  std::vector<std::string> argv = {kAttn};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = attn::testing::run(argv, 120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CAPTURE(r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attn: error: ", 0) == 0);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);  // no escape sequence reaches the terminal
  CHECK(r.err.size() <= 1100);                      // one readable line, however long the value
  for (const auto& name : c.names) CHECK_MESSAGE(r.err.find(name) != std::string::npos, "names " << name);
  CHECK(seconds < kBoundS);
  CHECK(listing(watched) == before);  // nothing half-written, no temporary left
}

std::vector<std::string> lesson_names() {
  const auto r = attn::testing::run({kAttn, "list", "--names"});
  REQUIRE(r.status == 0);
  std::vector<std::string> names;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  REQUIRE(names.size() >= 7);
  return names;
}

}  // namespace

TEST_CASE("bad input: options") {
  Scratch tmp;
  const std::vector<Case> cases = {
      {{"lesson", "causal", "--bogus"}, {"--bogus"}},
      // An unknown command is named with the nearest one, also when --help follows it.
      {{"lessons"}, {"unknown command 'lessons' (did you mean 'lesson'?)"}},
      {{"lessons", "--help"}, {"unknown command 'lessons' (did you mean 'lesson'?)"}},
      {{"xyzzy", "--help"}, {"unknown command 'xyzzy' (expected one of: list, lesson,"}},
      {{"\x1b[2J"}, {"unknown command '\\x1b[2J'"}},
      {{"lesson", "causal", "--seed"}, {"--seed needs a value"}},
      {{"lesson", "causal", "--seed", "1", "--seed", "2"}, {"--seed was given more than once"}},
      {{"lesson", "causal", "--seed", "x1"}, {"--seed", "'x1'"}},
      {{"lesson", "causal", "--seed", "-5"}, {"--seed must not be negative"}},
      // Echoed values stay one line and reach the terminal as text: control bytes as \xNN, valid
      // UTF-8 kept, the C1 range (U+0080..U+009F, a second way to start an escape sequence) escaped.
      {{"lesson", "causal", "--seed", "1\n2"}, {"'1\\x0A2'"}},
      {{"lesson", "causal", "--preset", "a\nb"}, {"unknown preset 'a\\x0Ab'"}},
      {{"lesson", "causal", "--format", "\x1b]0;title\x07"}, {"'\\x1B]0;title\\x07'"}},
      {{"lesson", "\x1b[2J"}, {"unknown lesson '\\x1B[2J'"}},
      {{"lesson", "causal", "--preset", "caf\xc3\xa9\xc2\x9b[2J"}, {"unknown preset 'caf\xc3\xa9\\xC2\\x9B[2J'"}},
      {{"lesson", "causal", "--seed", std::string(100000, '7')}, {"--seed", "bytes left out", "7777'"}},
      // "-0" is not negative, but a sign has no place in a count.
      {{"lesson", "causal", "--seed", "-0"}, {"--seed expects a whole number without a sign", "'-0'"}},
      {{"lesson", "rope", "--shift", "-0"}, {"--shift expects a whole number without a sign", "'-0'"}},
      {{"lesson", "padding", "--valid-lens", "-0,2"}, {"--valid-lens expects whole numbers without a sign"}},
      // Typed but empty: a value missing, not "every head".
      {{"lesson", "heads", "--head", ""}, {"--head names one head or their mean", "vs ''"}},
      {{"verify", "--lesson", ""}, {"--lesson needs a lesson name", "vs ''"}},
      // A head width of 0 is out of range, not a recipe for --d-out = 0 x heads.
      {{"lesson", "heads", "--d-key", "0"}, {"--d-key is out of range (--d-key: 1..65536 vs 0)"}},
      {{"lesson", "causal", "--precision", "0"}, {"--precision", "1..10"}},
      {{"lesson", "causal", "--sci-mode", "yes"}, {"unknown --sci-mode", "auto, on or off vs 'yes'"}},
      {{"lesson", "causal", "--batch", "1e3"}, {"--batch"}},
      {{"lesson", "causal", "--format", "yaml"}, {"--format", "'yaml'"}},
      {{"lesson", "causal", "--full-json"}, {"--full-json", "--format json"}},
      {{"lesson", "causal", "--full", "--format", "json"}, {"--full applies to the text output", "(--full: text (JSON always holds every stage"}},
      {{"lesson", "causal", "--color", "rainbow"}, {"--color"}},
      {{"lesson", "causal", "--weights-layout", "cols"}, {"--weights-layout"}},
      {{"lesson", "causal", "--preset", "nobody"}, {"--preset"}},
      {{"lesson", "causal", "--heads", "2"}, {"does not take --heads"}},
      {{"lesson", "causal", "--tokens", "   "}, {"--tokens"}},
      {{"lesson", "causal", "--allow-nonfinite"}, {"--allow-nonfinite"}},
      {{"lesson", "causal", "--svg-panels", "b0"}, {"--svg-panels", "--svg"}},
      {{"lesson", "causal", "--svg", tmp / "p", "--svg-panels", "b0;h1"}, {"--svg-panels", "'b0;h1'"}},
      {{"lesson", "causal", "--stage", "3-"}, {"--stage", "'3-'"}},
      {{"lesson", "causal", "--dump", tmp / "d", "--stage", "11"}, {"--stage 11", "has 10 stages"}},
      {{"lesson", "causal", "--svg", tmp / "p", "--stage", "dropout"}, {"--stage 'dropout'", "no stage title"}},
      {{"lesson", "casual"}, {"unknown lesson 'casual'", "causal"}},
      {{"lesson", "casual", "--help"}, {"unknown lesson 'casual'", "causal"}},
      {{"lesson", "causal", "--seeed", "1"}, {"--seeed", "did you mean '--seed'"}},
      {{"lesson", "causal", "--kv-head", "2"}, {"--kv-head", "--kv-heads", "does not take", "attn lesson causal --help"}},
      // --head picks pictures of (B, h, T, S) weights; causal has none.
      {{"lesson", "causal", "--head", "2"}, {"--head", "no head axis"}},
      {{"lesson", "heads", "--head", "2"}, {"--head 2 is past the last head", "mean or 0..1"}},
      {{"lesson", "heads", "--head", "-1"}, {"--head", "'-1'"}},
      {{"lesson", "causal", "--heatmap-scale", "log"}, {"--heatmap-scale", "auto, global or row", "'log'"}},
      // The articles' names: refused with the reason where the lesson has no such size.
      {{"lesson", "causal", "--num-heads", "2"}, {"--num-heads", "a lesson with heads"}},
      {{"lesson", "heads", "--d-k", "2"}, {"--d-k", "--d-out and --heads"}},
      {{"lesson", "bahdanau", "--d-model", "4"}, {"--d-model", "--d-in or --hidden"}},
      {{"lesson", "causal", "--d-model", "4", "--d-in", "4"}, {"--d-model", "both set --d-in"}},
      {{"lesson", "heads", "--d-model", "0"}, {"--d-model", "1..65536"}},
      {{"lesson", "heads", "--n-heads"}, {"--n-heads needs a value"}},
      {{"lesson", "causal", "--dropout", "0.1"}, {"--dropout", "run the command without it"}},
      {{"lesson", "causal", "--context-length=9"}, {"--context-length", "--seq-len"}},
      {{"completion", "fish"}, {"completion", "bash or zsh", "'fish'"}},
      {{"completion"}, {"missing shell name", "bash"}},
      {{"lesson"}, {"missing lesson name"}},
      {{"list", "--names", "--presets"}, {"--names"}},
      {{"verify", "--seeds", "many"}, {"--seeds"}},
      {{"verify", "--lesson", "nope"}, {"--lesson"}},
      {{"check", "nope"}, {"unknown exercise 'nope'"}},
      {{"check", "causal-mask", "--time-limit", "0"}, {"--time-limit", "1..3600"}},
      {{"check", "causal-mask", "--memory-limit", "lots"}, {"--memory-limit"}},
      {{"check", "causal-mask", "--build-time-limit", "-1"}, {"--build-time-limit"}},
      {{"check", "causal-mask", "--build-memory-limit", "100"}, {"--build-memory-limit", "256..1048576"}},
      {{"hint"}, {"missing exercise name"}},
      {{"frobnicate"}, {"frobnicate"}},
  };
  for (const auto& c : cases) refused(c, tmp.path);
}

TEST_CASE("bad input: sizes are refused before the work, naming the flag and the limit") {
  Scratch tmp;
  const std::vector<Case> cases = {
      {{"lesson", "causal", "--seq-len", "0"}, {"--seq-len", "1..65536"}},
      {{"lesson", "causal", "--seq-len", "65537"}, {"--seq-len", "1..65536"}},
      {{"lesson", "scaling", "--seq-len", "65536"}, {"--seq-len", "out of range for scaling", "1..4096", "65536"}},
      {{"lesson", "scaling", "--seq-len", "4097", "--shapes-only"}, {"--seq-len", "1..4096", "4097"}},
      {{"lesson", "causal", "--d-in", "99999999999999999999999"}, {"--d-in"}},
      {{"lesson", "heads", "--seq-len", "5000", "--batch", "64"}, {"too large to hold", "--seq-len", "33554432"}},
      // With --shapes-only nothing is computed at this size (test_shapes_only, test_cli_json); JSON
      // without it holds the values, and is refused.
      {{"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--format", "json"}, {"too large to hold"}},
      {{"lesson", "self-attention", "--d-in", "5000", "--d-out", "5000"}, {"too large to print", "--shapes-only"}},
      // Each tensor printable, all of them together past the lesson's budget (row labels included).
      {{"lesson", "padding", "--batch", "65536", "--seq-len", "16"},
       {"padding at these sizes would hold 1.01 GiB at once", "--shapes-only", "--batch, --seq-len",
        "at most 800.00 MiB of tensors and labels together vs 1.01 GiB"}},
      // Likewise at full widths: --shapes-only is the way out where the lesson then computes nothing.
      {{"lesson", "heads", "--batch", "1", "--heads", "1", "--seq-len", "4096", "--d-in", "4096", "--d-out", "4096"},
       {"heads at these sizes would hold 2.75 GiB at once", "add --shapes-only", "--d-out, --heads",
        "at most 800.00 MiB"}},
      {{"lesson", "self-attention", "--seq-len", "4096", "--d-in", "4096", "--d-out", "4096"},
       {"self-attention at these sizes would hold 1.75 GiB at once", "--d-in, --d-out", "at most 800.00 MiB"}},
      {{"lesson", "block", "--seq-len", "4096", "--d-in", "4096", "--heads", "1", "--shapes-only"},
       {"block at these sizes would hold", "--seq-len, --d-in, --heads", "at most 800.00 MiB"}},
      {{"lesson", "heads", "--heads", "3"}, {"--heads"}},
      {{"lesson", "bahdanau", "--hidden", "257"}, {"--hidden", "1..256"}},
      {{"lesson", "luong", "--src", "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg"},
       {"--src", "at most 32 words"}},
      {{"lesson", "scaling", "--samples", "0"}, {"--samples"}},
  };
  for (const auto& c : cases) refused(c, tmp.path);
}

TEST_CASE("bad input: files are refused from what they declare, before their data is read") {
  Scratch tmp;
  // 1 GiB of zeros behind a header within the reader's value limit: refused from the header.
  sparse_file(tmp / "huge.npy", npy_header("(16384, 16384)"), 128 + std::uintmax_t{16384} * 16384 * 4);
  // A header that declares more data than the file has, and the other way round.
  sparse_file(tmp / "short.npy", npy_header("(1000, 1000)"), 128 + 16);
  sparse_file(tmp / "long.npy", npy_header("(2, 3)"), std::uintmax_t{1} << 30);
  // T = 10000 tokens of width 1: x is small, but every lesson would score 10000 x 10000.
  sparse_file(tmp / "long_t.npy", npy_header("(10000, 1)"), 128 + 10000 * 4);
  // 1.5 GB and 200 MB of NUL bytes as a CSV: over the text limit, and not a number at byte 1.
  sparse_file(tmp / "nul_big.csv", "", 1500000000);
  sparse_file(tmp / "nul.csv", "", 200000000);
  // 100000 rows: refused at the row that crosses the lesson's limit, not after the last.
  {
    std::ofstream rows(tmp / "rows.csv");
    for (int i = 0; i < 100000; ++i) rows << "0.5, 0.25\n";
  }
  write_file(tmp / "nan.npy", npy_header("(1, 2)") + std::string("\x00\x00\xc0\x7f\x00\x00\x80\x3f", 8));
  write_file(tmp / "gaps.csv", "1,,3\n4,,6\n");
  write_file(tmp / "nul_in_field.csv", std::string("1,2\n3,4\0\n", 9));
  write_file(tmp / "esc.csv", "1,\x1b[31mred\x07\n");
  write_file(tmp / "over.csv", "1, 1e39\n");
  write_file(tmp / "x.json", "[[1, 2]]");
  const std::vector<Case> cases = {
      {{"lesson", "causal", "--input", tmp / "huge.npy"}, {"huge.npy", "x (1, 16384, 16384) would be too large to hold", "33554432"}},
      {{"lesson", "causal", "--input", tmp / "short.npy"}, {"short.npy", "needs 4000000"}},
      {{"lesson", "causal", "--input", tmp / "long.npy"}, {"long.npy", "needs 24"}},
      {{"lesson", "causal", "--input", tmp / "long_t.npy"}, {"attn_scores (1, 10000, 10000)", "long_t.npy"}},
      {{"lesson", "bahdanau", "--input", tmp / "long_t.npy"}, {"long_t.npy", "at most 32 words vs 10000"}},
      {{"lesson", "causal", "--input", tmp / "nul_big.csv"}, {"nul_big.csv", "too large (limit 256 MiB)"}},
      {{"lesson", "causal", "--input", tmp / "nul.csv"}, {"nul.csv: line 1, column 1", "\\x00", "is not a number"}},
      {{"lesson", "causal", "--input", tmp / "rows.csv"}, {"rows.csv", "attn_scores", "reading stopped at row"}},
      {{"lesson", "luong", "--input", tmp / "rows.csv"}, {"rows.csv", "at most 32 words vs 33; reading stopped at row 33"}},
      {{"lesson", "causal", "--input", tmp / "nan.npy"}, {"nan.npy", "nan at [0, 0]", "--allow-nonfinite"}},
      {{"lesson", "causal", "--input", tmp / "gaps.csv"}, {"gaps.csv: line 1, column 2: empty field"}},
      {{"lesson", "causal", "--input", tmp / "nul_in_field.csv"}, {"'4\\x00' is not a number"}},
      {{"lesson", "causal", "--input", tmp / "esc.csv"}, {"'\\x1b[31mred\\x07' is not a number"}},
      {{"lesson", "causal", "--input", tmp / "over.csv"}, {"'1e39' overflows float32"}},
      {{"lesson", "causal", "--input", tmp / "x.json"}, {"--input", ".npy, .csv, .tsv or .txt"}},
      {{"lesson", "causal", "--input", tmp / "missing.npy"}, {"missing.npy", "no such file"}},
      {{"lesson", "scaling", "--input", tmp / "huge.npy"}, {"does not take --input"}},
  };
  for (const auto& c : cases) refused(c, tmp.path);
}

TEST_CASE("bad input: directories and weight files") {
  Scratch tmp;
  fs::create_directories(tmp.path / "dir.npy");
  fs::create_directories(tmp.path / "w_dir" / "W_query.npy");
  fs::create_directories(tmp.path / "w_big");
  // A weight declaring 10000 x 10000 (400 MB), within the reader's own limit: refused from its
  // header by the limit of one tensor; and 20000 x 20000 (1.6 GB), past the reader's limit.
  sparse_file(tmp / "w_big/W_query.npy", npy_header("(10000, 10000)"), 128 + std::uintmax_t{10000} * 10000 * 4);
  fs::create_directories(tmp.path / "w_huge");
  sparse_file(tmp / "w_huge/W_query.npy", npy_header("(20000, 20000)"), 128 + std::uintmax_t{20000} * 20000 * 4);
  fs::create_directories(tmp.path / "w_zero");
  for (const char* n : {"W_query", "W_key", "W_value"}) write_file(tmp / ("w_zero/" + std::string(n) + ".npy"), npy_header("(3, 0)"));
  fs::create_directories(tmp.path / "w_bias");
  const std::string ones(6 * 4, '\0');
  for (const char* n : {"W_query", "W_key", "W_value"}) write_file(tmp / ("w_bias/" + std::string(n) + ".npy"), npy_header("(3, 2)") + ones);
  write_file(tmp / "w_bias/W_query_bias.npy", npy_header("(2,)") + std::string(8, '\0'));
  fs::create_directories(tmp.path / "empty");
  write_file(tmp / "plain.txt", "1 2\n");
  const std::vector<Case> cases = {
      {{"lesson", "causal", "--input", tmp / "dir.npy"}, {"dir.npy", "a directory, not a file"}},
      {{"lesson", "causal", "--weights", tmp / "w_dir"}, {"W_query.npy: a directory, not a file"}},
      {{"lesson", "causal", "--weights", tmp / "plain.txt"}, {"--weights", "not a directory"}},
      {{"lesson", "causal", "--weights", tmp / "nowhere"}, {"--weights", "no such directory"}},
      {{"lesson", "causal", "--weights", tmp / "empty"}, {"--weights", "none of the expected files"}},
      {{"lesson", "causal", "--weights", tmp / "w_big"}, {"W_query.npy (10000, 10000) would be too large to hold", "--weights", "33554432"}},
      {{"lesson", "causal", "--weights", tmp / "w_huge"}, {"W_query.npy: shape (20000, 20000) is too large", "--weights"}},
      {{"lesson", "self-attention", "--weights", tmp / "w_zero"}, {"W_query.npy holds no values"}},
      {{"lesson", "causal", "--weights", tmp / "w_bias"}, {"does not use W_query_bias.npy", "heads"}},
      {{"lesson", "bahdanau", "--states", tmp / "plain.txt"}, {"--states", "not a directory"}},
  };
  for (const auto& c : cases) refused(c, tmp.path);
}

TEST_CASE("bad input: output locations are checked before the work, and a refused run leaves nothing") {
  Scratch tmp;
  write_file(tmp / "file", "x");
  fs::create_directories(tmp.path / "full");
  write_file(tmp / "full/keep", "x");
  fs::create_symlink("loop", tmp.path / "loop");        // a link to itself
  fs::create_symlink("gone", tmp.path / "dangling");    // a link to nothing
  const std::vector<Case> cases = {
      {{"lesson", "causal", "--dump", ""}, {"--dump needs a directory"}},
      {{"lesson", "causal", "--dump", tmp / "loop"}, {"--dump", "cannot be reached"}},  // before the lesson runs
      {{"lesson", "causal", "--dump", tmp / "dangling"}, {"--dump", "symbolic link to nothing"}},
      // Not "the same directory as --svg": an unresolvable path is compared as written.
      {{"lesson", "causal", "--svg", tmp / "pics", "--dump", tmp / "loop/inner"}, {"--dump", "Too many levels of symbolic links"}},
      {{"lesson", "causal", "--svg", ""}, {"--svg", "an empty path"}},
      {{"lesson", "causal", "--dump", tmp / "file"}, {"--dump", "not a directory"}},
      {{"lesson", "causal", "--dump", tmp / "full"}, {"--dump", "not a dump attn wrote"}},  // a learner's files
      {{"lesson", "causal", "--dump", tmp / "file/under/dump"}, {"--dump", "file is not a directory"}},  // missing parents are made, not under a file
      {{"lesson", "causal", "--svg", tmp / "file/under"}, {"--svg", "not a directory"}},
      {{"lesson", "causal", "--svg", tmp / "out", "--dump", tmp / "out"}, {"--dump and --svg", "same directory"}},
      {{"lesson", "causal", "--svg", tmp / "out", "--dump", tmp / "out/inner"}, {"--dump and --svg"}},
      // --npz takes a file: a directory (the existing `full`, or any name ending in '/') is refused.
      {{"lesson", "causal", "--npz", ""}, {"--npz needs a file name"}},
      {{"lesson", "causal", "--npz", tmp / "full"}, {"cannot write --npz " + (tmp / "full") + ": is a directory"}},
      {{"lesson", "causal", "--npz", tmp / "new/"}, {"--npz", "ends in '/'"}},
      {{"lesson", "causal", "--npz", tmp / "file/under/a.npz"}, {"--npz", "file is not a directory"}},
      {{"lesson", "causal", "--dump", tmp / "d", "--npz", tmp / "d/a.npz"}, {"--npz and --dump", "same place"}},
      {{"lesson", "causal", "--svg", tmp / "p", "--npz", tmp / "p"}, {"--npz and --svg", "same place"}},
      {{"lesson", "heads", "--heads", "3", "--npz", tmp / "new/a.npz"}, {"--heads"}},  // the lesson refused: no parent made
      // --html takes a file, apart from every other output, and values to draw.
      {{"lesson", "causal", "--html", ""}, {"--html needs a file name"}},
      {{"lesson", "causal", "--html", tmp / "full"}, {"cannot write --html " + (tmp / "full") + ": is a directory"}},
      {{"lesson", "causal", "--html", tmp / "new/"}, {"--html", "ends in '/'"}},
      {{"lesson", "causal", "--html", tmp / "file/under/a.html"}, {"--html", "file is not a directory"}},
      {{"lesson", "causal", "--npz", tmp / "a.npz", "--html", tmp / "a.npz"}, {"--html and --npz", "same file"}},
      {{"lesson", "causal", "--dump", tmp / "d", "--html", tmp / "d/a.html"}, {"--html and --dump", "same place"}},
      {{"lesson", "causal", "--shapes-only", "--html", tmp / "a.html"}, {"--html draws values", "shapes only"}},
      {{"lesson", "heads", "--heads", "3", "--html", tmp / "new/a.html"}, {"--heads"}},  // the lesson refused: no parent made
      // Refused after the lesson ran, still before anything is written: no dump, no pictures.
      {{"lesson", "causal", "--seq-len", "300", "--svg", tmp / "pics", "--dump", tmp / "dump"},
       {"too large to draw as SVG", "--svg"}},
      {{"lesson", "heads", "--batch", "20", "--heads", "16", "--d-out", "16", "--seq-len", "2", "--svg", tmp / "pics",
        "--dump", tmp / "dump"},
       {"--svg would write 320 pictures", "at most 64", "--svg-panels"}},
      {{"lesson", "heads", "--svg", tmp / "pics", "--svg-panels", "b7"}, {"--svg-panels b7 matches no panel", "b0..b1"}},
      {{"lesson", "causal", "--shapes-only", "--svg", tmp / "pics"}, {"--svg", "shapes only"}},
  };
  for (const auto& c : cases) refused(c, tmp.path);
}

TEST_CASE("bad input: step mode without a terminal") {
  Scratch tmp;
  refused({{"lesson", "causal", "--step"}, {"--step needs a terminal", "standard input"}}, tmp.path);
  refused({{"lesson", "causal", "--step", "--format", "json"}, {"--step"}}, tmp.path);
}

TEST_CASE("bad input: every registered lesson refuses the shared bad options the same way, and ends quietly in a closed pipe") {
  Scratch tmp;
  write_file(tmp / "file", "x");
  // A third of the lessons under the sanitizers: each refusal takes the same shared code path
  // whatever the lesson (process.hpp, all_or_a_third).
  for (const auto& name : attn::testing::all_or_a_third(lesson_names(), 0)) {
    CAPTURE(name);
    const std::vector<Case> cases = {
        {{"lesson", name, "--precision", "11"}, {"--precision"}},
        {{"lesson", name, "--seed", "x"}, {"--seed"}},
        {{"lesson", name, "--format", "xml"}, {"--format"}},
        {{"lesson", name, "--dump", ""}, {"--dump"}},
        {{"lesson", name, "--dump", tmp / "file"}, {"--dump"}},
        {{"lesson", name, "--svg", ""}, {"--svg"}},
        {{"lesson", name, "--step"}, {"--step"}},
        {{"lesson", name, "--no-such-option"}, {"--no-such-option", "attn lesson " + name + " --help"}},
        {{"lesson", name, "--dropout", "0.1"}, {"attn has no --dropout"}},
        {{"lesson", name, "--input", tmp / "missing.npy"}, {"--input"}},
    };
    for (const auto& c : cases) refused(c, tmp.path);
    // The reader leaves after one byte: status 0 under pipefail, nothing on stderr.
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = attn::testing::run({"/bin/bash", "-c", "set -o pipefail; '" + kAttn + "' lesson " + name + " | head -c 1 >/dev/null"}, 120);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < kBoundS);
  }
}

TEST_CASE("bad input: an output that fails while being written leaves nothing, and names no temporary path") {
  // The file-size limit (ulimit -f, in KiB; SIGXFSZ ignored so that the write fails with EFBIG
  // instead of killing attn) makes the file system refuse part-way, as a full disk would.
  Scratch tmp;
  auto run_limited = [&](int kib, const std::string& args) {
    return attn::testing::run({"/bin/bash", "-c", "trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; exec '" + kAttn +
                                                      "' lesson causal " + args},
                              120);
  };
  const auto before = listing(tmp.path);
  // 1 KiB: the dump's manifest (7 KB) cannot be written; the pictures were not started. The dump's
  // missing parent out/ was made for it, and goes with it.
  const auto dump = run_limited(1, "--dump '" + (tmp / "out/dump") + "' --svg '" + (tmp / "pics") + "'");
  CAPTURE(dump.err);
  CHECK(dump.status == 2);
  CHECK(dump.out.empty());
  CHECK(count_lines(dump.err) == 1);
  CHECK(dump.err.rfind("attn: error: cannot dump to --dump " + (tmp / "out/dump") + ": could not write ", 0) == 0);
  CHECK(dump.err.find(".tmp") == std::string::npos);
  CHECK(listing(tmp.path) == before);
  // 8 KiB: the dump is staged whole, then a picture (10 KB) fails: the staged dump, the pictures
  // written and the directory made for them all go.
  const auto pics = run_limited(8, "--dump '" + (tmp / "dump") + "' --svg '" + (tmp / "new/pics") + "'");
  CAPTURE(pics.err);
  CHECK(pics.status == 2);
  CHECK(pics.out.empty());
  CHECK(count_lines(pics.err) == 1);
  CHECK(pics.err.rfind("attn: error: --svg: could not write " + (tmp / "new/pics") + "/causal-stage06-attn_weights.svg", 0) == 0);
  CHECK(pics.err.find(".tmp") == std::string::npos);
  CHECK(listing(tmp.path) == before);
  // 1 KiB: the archive (14 KB) fails part-way; its temporary file and the parent made for it go.
  const auto npz = run_limited(1, "--npz '" + (tmp / "out/causal.npz") + "'");
  CAPTURE(npz.err);
  CHECK(npz.status == 2);
  CHECK(npz.out.empty());
  CHECK(count_lines(npz.err) == 1);
  CHECK(npz.err.rfind("attn: error: cannot write --npz " + (tmp / "out/causal.npz") + ": could not write ", 0) == 0);
  CHECK(npz.err.find(".tmp") == std::string::npos);
  CHECK(listing(tmp.path) == before);
}

// doctest_discover_tests hands each case name to CMake as a list item, so a name with a ';' is
// cut there and the ctest entry runs no case at all: it passes without checking anything. (Eleven
// cases did, one of them with a wrong assertion.) This keeps every case reachable from ctest.
TEST_CASE("every doctest case name in tests/ reaches ctest: no semicolon in a TEST_CASE name") {
  std::vector<std::string> cut;
  for (const auto& e : fs::recursive_directory_iterator(std::string(ATTN_SOURCE_DIR) + "/tests")) {
    if (e.path().extension() != ".cpp") continue;
    // Only programs whose cases ctest lists one by one: their CMakeLists.txt names them. (An
    // exercise's tests run as one program, test_<stem> by a pattern, so their names never pass
    // through CMake.)
    std::ifstream cmake(e.path().parent_path() / "CMakeLists.txt");
    std::stringstream listed;
    listed << cmake.rdbuf();
    if (listed.str().find(e.path().stem().string()) == std::string::npos) continue;
    std::ifstream in(e.path());
    std::size_t line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      const auto at = line.find("TEST_CASE(\"");
      if (at == std::string::npos) continue;
      const auto end = line.find('"', at + 11);
      if (line.substr(at + 11, end - at - 11).find(';') != std::string::npos)
        cut.push_back(e.path().string() + ":" + std::to_string(line_no));
    }
  }
  CHECK_MESSAGE(cut.empty(), "case names with ';' (ctest would run none of them): " << cut.size() << ", first "
                                                                                     << (cut.empty() ? "" : cut[0]));
}
