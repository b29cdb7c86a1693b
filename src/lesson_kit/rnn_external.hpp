// The RNN lessons (bahdanau, luong) with tensors from outside: the encoder states and decoder
// states from --states DIR, the scoring weights from --weights DIR in math (in, out) or torch
// (out, in) layout. Every file is checked against the widths the others fix, and a refusal
// names the file with the shape it should have, in symbols and in numbers.
//
// Legend: S source words, T decoder states (queries), d_enc encoder state width, d_s decoder
// state width (Luong's h_t: d_t), d_a alignment width, in/out a layer's widths.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lesson_kit/options.hpp"

namespace attn {

// A width with its symbol, for messages: {"d_s", 3}.
struct Width {
  std::string symbol;
  std::size_t size = 0;  // 0: not known yet, taken from the file being read
};

// The states handed in with --states.
struct RnnStates {
  Mat H;                         // (S, d_enc)
  Mat queries;                   // (T, d_s): one decoder state per row
  bool one_query = true;         // the file held one vector (d_s,), shown as such
  std::vector<std::string> src;  // S labels: --src, or `row_prefix` 1 .. S
  std::vector<std::string> tgt;  // T labels: --tgt, or the query's name with its row number
  std::string query;             // "s" (bahdanau) or "h_t" (luong)
  std::size_t S = 0, T = 0, d_enc = 0, d_s = 0;
};

// H.npy (S, d_enc) and `query`.npy, (d_s,) or (T, d_s), from --states. Refuses --input,
// --hidden and --d-in beside --states (they size the lesson's own encoder, which the files
// replace), and --src / --tgt that do not label every row.
// Unlabelled rows are called `row_prefix` + 1..S ("h_1", or "h_enc_1" in luong).
RnnStates rnn_states(const LessonOptions& opts, const std::string& query, const std::string& row_prefix);

// A layer's weight as nn.Linear keeps it, (out, in), from --weights in the chosen layout.
// `out.size == 0` takes that width from the file (d_a).
Mat rnn_weight(const LessonOptions& opts, const std::string& name, const Width& out, const Width& in);

// A vector (d,): the file holds (d,), or nn.Linear(d, 1).weight, (1, d) torch / (d, 1) math.
Vec rnn_vector(const LessonOptions& opts, const std::string& name, const Width& d);

// The matrix between two states in a bilinear score u^T W v, (rows, cols): read as it is in
// both layouts (it is nn.Linear(cols, rows).weight and also the (in, out) matrix of u @ W).
Mat bilinear_weight(const LessonOptions& opts, const std::string& name, const Width& rows, const Width& cols);

// "'dir/W_a.npy'" as a Python string literal.
std::string py_path(const std::string& dir, const std::string& name);

// "torch.tensor(np.load('dir/W_a.npy'), dtype=torch.float32)" (+ ".T" in math layout when
// `transpose`): a reproduce line's right-hand side for a file from --weights or --states.
std::string py_load(const std::string& dir, const std::string& name, bool transpose = false);

// The reproduce line that loads --input as the source embeddings x.
std::string py_input_line(const ExternalTensor& input);

// "weights: torch layout (out, in)" for the setting line.
std::string layout_name(const LessonOptions& opts);

}  // namespace attn
