// The options a lesson may take, and the error a learner sees when one is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// Bad input from the learner: printed as one line
//   attn: error: <what> (<option>: <expected> vs <got>)
// with exit status 2.
struct UsageError : std::runtime_error {
  UsageError(const std::string& what, const std::string& option, const std::string& expected,
             const std::string& got)
      : std::runtime_error(what + " (" + option + ": " + expected + " vs " + got + ")") {}
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

// A tensor handed in from outside (a file, or a preset's literal values), and where it came from
// so that a refusal can name it.
struct ExternalTensor {
  std::string source;  // e.g. "--input x.npy", "--weights w/W_key.npy", "preset rakesh"
  Shape shape;
  std::vector<float> values;  // C order, float32
  std::string path = {};      // the file it was read from, or "" for values typed in (a preset's literal)
};

// Every option a lesson can read. Unset optionals take the lesson's own defaults (the article's).
struct LessonOptions {
  std::optional<std::uint64_t> seed;
  bool shapes_only = false;  // --shapes-only (an output option, src/cli/output_options.*), or a preset
  std::optional<std::size_t> batch;
  std::optional<std::size_t> seq_len;
  std::optional<std::size_t> d_in;
  std::optional<std::size_t> d_out;
  std::optional<std::size_t> heads;
  std::optional<bool> causal;
  bool qkv_bias = false;
  std::optional<std::vector<std::string>> tokens;   // the first (or only) sentence
  std::vector<std::vector<std::string>> more_sentences;  // --tokens "a b | c d": sentences 2..B
  std::optional<ExternalTensor> input;                // --input FILE, or a preset's literal x
  std::map<std::string, ExternalTensor> weights;      // --weights DIR: "W_query", "W_key_bias", ...
  std::string weights_dir;                            // for messages
  bool weights_torch_layout = false;                  // --weights-layout torch: (out, in) files
  std::optional<std::size_t> kv_heads;                // heads lesson: grouped key/value heads
  std::string preset;                                 // the --preset applied, or ""
  std::vector<std::string> preset_notes;              // what the preset says on screen
  std::optional<std::vector<std::string>> src;  // RNN lessons: the sentence to translate
  std::optional<std::vector<std::string>> tgt;  // RNN lessons: its translation
  std::optional<std::size_t> hidden;            // RNN lessons: hidden width d_h
  std::map<std::string, ExternalTensor> states;  // RNN lessons, --states DIR: "H", "s" or "h_t"
  std::string states_dir;                        // for messages; "" when --states was not given
  // A lesson's own options (LessonEntry::extra: --theta, --samples, ...) by flag, given or default.
  std::map<std::string, double> own;
  // A lesson's own list options (OptionType::IntegerList: --valid-lens 5,2) by flag; an empty list
  // when the learner gave none (a given list is never empty), so the lesson picks its own default.
  std::map<std::string, std::vector<std::int64_t>> own_lists;
  // Training lessons call this after each step with (steps done, steps in all); the CLI draws a
  // progress bar on stderr from it (only on a terminal, only for a run longer than half a
  // second). Empty everywhere else (tests, attn verify): lessons never touch the terminal.
  // Call it through report_progress (lesson_kit/training.hpp), which checks for empty.
  std::function<void(std::size_t done, std::size_t total)> progress;

  // The value of one of the lesson's own options. LessonEntry::run fills in the defaults, so
  // inside a lesson this answers for every flag it declares; any other flag is a programming
  // error (std::logic_error).
  double number(const std::string& flag) const;
  // The same for an integer option, as an integer.
  std::int64_t integer(const std::string& flag) const;
  // The value of one of the lesson's own list options, empty when not given. Like number(), it
  // answers inside a lesson for every list flag the lesson declares; any other flag is a
  // programming error (std::logic_error).
  const std::vector<std::int64_t>& integers(const std::string& flag) const;
};

// An option of a lesson's own, declared in its registration (LessonEntry::extra). `attn lesson`
// adds it to the command line, parses it strictly against its range, refuses it for lessons that
// do not declare it, and hands it over in LessonOptions::own (a number) or own_lists (a list).
// IntegerList is whole numbers separated by commas ("5,2"), each within the range; it has no
// default of its own (an absent list reaches the lesson empty), so its fallback is not used.
enum class OptionType { Integer, Real, IntegerList };
struct LessonOption {
  const char* flag;  // "--theta"
  OptionType type;
  double lo, hi;     // the allowed range, both ends included (IntegerList: of every entry)
  double fallback;   // the default, inside the range (IntegerList: unused)
  const char* help;  // one line for `attn lesson --help`
};

// Parses `text` as the value of `option`: an integer is digits only (a leading '-' when the range
// allows negatives), a real is a plain decimal or exponent number ("1e9"; no inf, nan or hex),
// and either must lie in [lo, hi]. Throws UsageError in the one-line form, for example
//   --theta is out of range (--theta: 1..1e9 vs 0)
double parse_lesson_option(const LessonOption& option, const std::string& text);
// Parses an IntegerList option: entries separated by commas, no spaces, none empty, each a whole
// number within [lo, hi], at most kMaxSize of them. Throws UsageError in the one-line form, e.g.
//   --valid-lens is out of range (--valid-lens: each 1..65536 vs 0)
std::vector<std::int64_t> parse_lesson_list(const LessonOption& option, const std::string& text);
// A whole number typed for `flag`: digits only (no sign, no spaces), inside [lo, hi]. Throws
// UsageError in the one-line form, e.g.
//   --seed must not be negative (--seed: 0..9223372036854775807 vs '-5')
std::uint64_t parse_whole(const std::string& flag, const std::string& text, std::uint64_t lo, std::uint64_t hi);
// A range end or default as the messages and --help print it: 4096, 0.5, 1e9.
std::string format_option_value(double v);

// Which shared options a lesson reads (a learner who passes one that does nothing is told so).
enum OptionBit : unsigned {
  kSeed = 1u << 0,
  kBatch = 1u << 1,
  kSeqLen = 1u << 2,
  kDIn = 1u << 3,
  kDOut = 1u << 4,
  kHeads = 1u << 5,
  kCausal = 1u << 6,
  kQkvBias = 1u << 7,
  kTokens = 1u << 8,
  kSrc = 1u << 9,
  kTgt = 1u << 10,
  kHidden = 1u << 11,
  kInput = 1u << 12,
  kWeights = 1u << 13,
  kKvHeads = 1u << 14,
  kStates = 1u << 15,
};
// The flag of each bit, its group and its help: lesson_kit/shared_options.hpp.

// Longest --src or --tgt sentence: every stage prints one row or column per word.
constexpr std::size_t kMaxSentence = 32;
// Largest --hidden: vectors are printed whole, one per line where they fit.
constexpr std::size_t kMaxHidden = 256;

// Largest value any size option takes; larger tensors are refused by check_size anyway.
constexpr std::size_t kMaxSize = 65536;
// A tensor with more values than this is not computed at all (memory: 4 bytes each).
constexpr std::size_t kMaxValues = std::size_t{1} << 25;
// A tensor with more values than this is not printed; --shapes-only lifts this limit.
constexpr std::size_t kMaxPrintedValues = std::size_t{1} << 24;
// Everything a lesson holds at once, all tensors (and their row labels) together: a lesson that
// makes many tensors of the same large shape checks their sum (check_held), since each one
// passing check_size still let a run hold dozens of them (padding held 4.8 GB at sizes it took).
constexpr std::size_t kMaxHeldBytes = std::size_t{800} << 20;

// Refuses a tensor the lesson is about to make when it would be too large to hold, or to
// print (unless shapes_only). `options` names the flags that set its size.
void check_size(const std::string& tensor, const Shape& shape, bool shapes_only,
                const std::string& options);

// Refuses a run that would hold more than kMaxHeldBytes at once: `what` is the run ("padding at
// these sizes"), `bytes` the most it holds at once, counted from the sizes before anything is
// made, and `options` the flags that set them. The message says to add --shapes-only when
// `suggest_shapes_only` (where that computes nothing).
void check_held(const std::string& what, long double bytes, bool suggest_shapes_only, const std::string& options);

// `count` float32 tensors of `shape` held at once: one term of what a run holds.
struct HeldTensors {
  double count;
  Shape shape;
};
// 4 bytes a value over the terms, plus what the options hold already (loaded_bytes).
long double held_bytes(const LessonOptions& opts, const std::vector<HeldTensors>& terms);
// The values of --input, --weights and --states, read before the lesson runs and kept all along.
long double loaded_bytes(const LessonOptions& opts);

// Whether a run that check_sizes lets compute values still does once all it holds at once
// (`bytes`) is counted. Within kMaxHeldBytes it does. Past it, a --shapes-only run that no sink
// reads values from (`values_optional`, see check_sizes) computes nothing instead, and any other
// run is refused (check_held), told to add --shapes-only where that would compute nothing: in a
// lesson that `skips_values` (can run without values: causal, heads, gqa) and without it so far.
bool values_within_held(const std::string& what, long double bytes, bool shapes_only, bool values_optional,
                        bool skips_values, const std::string& options);

// A tensor a lesson is about to make, for check_sizes.
struct SizedTensor {
  std::string name;     // "attn_scores"
  Shape shape;          // (B, T, T)
  std::string options;  // the flags that set its size: "--batch, --seq-len"
};

// Whether this run computes values, checked before anything is made. A --shapes-only run that no
// sink reads values from (`values_optional`: the lesson can run without them and the report keeps
// none, see report::Report::keep_values) computes nothing once any of `tensors` is too large to
// print, or all of them together are (2^24 values, 64 MB: Llama-sized weights at a few tokens):
// it shows names and shapes at any size, instantly, holding nothing, and returns false.
// Otherwise each tensor goes through check_size (which may refuse it) and the answer is true.
bool check_sizes(const std::vector<SizedTensor>& tensors, bool shapes_only, bool values_optional);

}  // namespace attn
