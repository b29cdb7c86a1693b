// Tensors a learner hands in: the lesson's input x (--input, or a preset's literal values) and
// the projection weights (--weights DIR). Each falls back to what the lesson draws itself.
//
// Legend: B batch, T tokens, d_in input width, in/out a layer's widths.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/generator.hpp"
#include "core/linear.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/options.hpp"
#include "lesson_kit/recipe.hpp"

namespace attn {

// x and its labels, from wherever the options say.
struct LessonInput {
  Ten3 x;                   // (B, T, d_in)
  report::Labels rows;      // labels for the T rows, or B*T when each batch entry is another sentence
  report::Labels cols;      // labels for T columns, empty when the batch entries differ
  std::string origin;       // where x came from, for the learner
  bool batched = false;     // show the batch axis
  bool repeated = false;    // the B batch entries are copies of one (T, d_in) matrix
  std::string equation;     // stage 1's equation: "x = embed(tokens)", "x = torch.stack([load(--input)] * B)", ...
  recipe::Recipe recipe;    // the PyTorch steps that rebuild x as shown: (T, d_in), or (B, T, d_in) when batched
  std::size_t B = 1, T = 0, d_in = 0;
};

// The sizes an --input of `shape` gives a token lesson, refused when they disagree with --d-in,
// --batch, --seq-len or --tokens, or when x (B, T, d_in) or the attention scores (B, T, T) every
// token lesson makes would be too large (check_size). lesson_input calls it on the loaded file;
// the command line calls it on the shape a file declares, before reading its data, so a huge
// file is refused at once. With `complete` false the shape is a text file's rows so far: only
// the size limits apply, which more rows could not lift.
struct InputSizes {
  std::size_t B = 1, T = 0, d_in = 0;
  bool has_batch = false;  // the file is (B, T, d_in)
};
InputSizes check_input_shape(const LessonOptions& opts, const Shape& shape, const std::string& source,
                             std::size_t default_B, bool complete = true);

// --input (sizes from the file; a disagreeing --d-in, --seq-len or --batch is refused),
// several --tokens sentences (one batch entry each), or the tokens and their embeddings
// (lesson_kit/inputs.hpp), stacked to `default_B` copies unless --batch says otherwise.
// `check_first`, when given, runs as soon as the sizes are known and before any of x is made:
// a lesson's check_size calls go there, so that a refusal costs nothing (embedding 65536 words
// first took seconds). It returns whether the run computes values (check_sizes); when it does
// not, x is allocated with its shape but never filled or touched (no memory, no time), and the
// lesson must not read it. --input's values are copied either way (they are already read).
LessonInput lesson_input(const LessonOptions& opts, std::size_t default_d_in, std::size_t default_B,
                         bool always_batched, const std::function<bool(const InputSizes&)>& check_first = {});

// The book's vectors by lower-case word when the embedding rule uses them (d_in 3, else empty):
// what recipe::Words needs to print a sentence's embeddings as embed_tokens made them.
std::map<std::string, std::vector<float>> book_table(std::size_t d_in);

// d_out: from W_query.npy when --weights is given (a disagreeing --d-out is refused), else
// --d-out or `default_d_out`.
std::size_t projection_width(const LessonOptions& opts, std::size_t default_d_out);

// --d-k as the grouped-query lessons (gqa, kv-cache) declare it: 0, the default, is d_in / heads.
inline const LessonOption kHeadWidthOption{
    "--d-k", OptionType::Integer, 0, 65536, 0,
    "Head width d_k: queries h*d_k wide, keys and values h_kv*d_k, out_proj back to d_in; 0 is d_in / heads"};

// The head width d_k of the grouped-query lessons (gqa, kv-cache), whose own option --d-k gives it
// (0, its default: not given): from W_query.npy's width over `h` heads when --weights gives one
// (a disagreeing --d-k is refused), else --d-k, else d_in / h, the lessons' default. Refuses, in
// one line naming the real constraint, an h that does not divide d_in when --d-k is not given
// (or W_query.npy's width when it is read).
std::size_t head_width_option(const LessonOptions& opts, std::size_t h, std::size_t d_in);

// h_kv of the grouped-query lessons: from W_key.npy's width (h_kv * d_k) when --weights gives one
// (a learner's own model decides it), else --kv-heads, else half of h when h is even, else h.
// Refuses a W_key that is not whole heads of d_k, a --kv-heads that disagrees with the file, and
// an h_kv that does not divide h.
std::size_t kv_heads_option(const LessonOptions& opts, std::size_t h, std::size_t d_in, std::size_t d_k);

// The output width of the heads lesson's out_proj, nn.Linear(d_out, width): from out_proj.npy's
// output axis when --weights gives one whose input axis is d_out (a disagreeing --out-proj-width
// is refused), else --out-proj-width when not 0, else d_out (Raschka's square out_proj).
std::size_t out_proj_width(const LessonOptions& opts, std::size_t d_out);

// nn.Linear(in, out, bias) from --weights when given (the bias when its file exists), otherwise
// drawn from `gen` like PyTorch. Records how in `r`: `name = nn.Linear(...)`, then the loads
// that replace its parameters when they come from files. `name` is also the file's stem
// (W_query.npy); `python_name`, when given, is what the reproduce lines and the screen call the
// layer (a preset's "wq", "q_proj"). With `draw` false (a run that computes no values) a layer
// that would be drawn is recorded in `r` all the same but not drawn: its weight stays empty.
Linear linear_weights(const LessonOptions& opts, const std::string& name, std::size_t in, std::size_t out,
                      bool bias, TorchGenerator& gen, recipe::Recipe& r, const std::string& python_name = "",
                      bool draw = true);

// A plain (in, out) matrix, as the book's torch.rand(d_in, d_out) parameters of 3.4, or loaded
// from --weights; recorded in `r`.
Mat matrix_weights(const LessonOptions& opts, const std::string& name, std::size_t in, std::size_t out,
                   TorchGenerator& gen, recipe::Recipe& r);

// The sizes and input the single-head lessons (self-attention, causal) start from.
struct SingleHeadSetup {
  std::uint64_t seed;
  std::size_t d_in, d_out, B, T;
  bool values;     // false: a --shapes-only run past printable sizes that computes nothing (check_sizes)
  BatchView view;  // batched when --batch was given or the input has a batch axis
  LessonInput in;  // x (B, T, d_in) and its labels
  std::string preset;  // the --preset applied, or ""
  // The header's "seed 789", "tokens 6", ...: the seed only when `r` draws from it.
  std::vector<std::string> setting(const recipe::Recipe& r) const;
};

// What a single-head lesson holds at once at its peak, its own tensors and the report's, by size:
// how many of (B, T, T), (d_in, d_out), (B, T, d_in) and (B, T, d_out). Measured, each at its
// limit alone (docs/testing.md, "Memory at the largest sizes"), and rounded up.
struct SingleHeadHeld {
  const char* lesson;  // "causal", for the refusal
  double scores, weights, inputs, outputs;
  bool skips_values;   // the lesson runs without values when none are read (see values_within_held)
};

// Sizes from the options (the book's d_in 3, d_out 2, batch 1 by default; from --input and
// --weights when given), refused when the tensors they imply are too large, each or all together
// (`held`), before x is made. `values_optional`: the lesson can run without values (see
// check_sizes and values_within_held).
SingleHeadSetup single_head_setup(const LessonOptions& opts, std::uint64_t default_seed, const SingleHeadHeld& held,
                                  bool values_optional = false);

// Stage 1 of every token lesson: x with its tokens, where it came from, and how a batch is made.
// The equation is input.equation.
report::Stage& inputs_stage(report::Report& out, const BatchView& view, const LessonInput& input,
                            const std::string& title = "Inputs: one embedding per token");

// "W_query, W_key, W_value come from --weights DIR (layout ...)" for the weights stage, or "".
std::string weights_origin(const LessonOptions& opts);

}  // namespace attn
