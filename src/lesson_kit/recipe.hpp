// The "reproduce in PyTorch" block of a lesson's header, as data.
//
// A lesson records each thing it builds (x, a seed, a layer, a loaded file) as a step, in the
// order it builds them, right where it builds them. The header's lines are rendered from those
// steps, and tests/lessons/recipe_runner.hpp executes the same steps with TorchGenerator and
// the .npy reader and compares the result with the tensors the lesson printed. A step that draws
// from the seed is therefore always preceded by the seed it draws from, and `uses_seed()` says
// whether the header's `setting:` should name a seed at all.
//
// Recording is done by the functions that build the tensors (lesson_input, linear_weights,
// matrix_weights in lesson_kit/external.hpp), so a preset that changes the draw order (a seed inside
// __init__, W_key built before W_query) just calls them in its own order:
//
//   Recipe r = in.recipe;                 // x, however it was made
//   r.seed(gen, 0);                       // torch.manual_seed(0)   (reseeds gen too)
//   Linear wk = linear_weights(opts, "W_key", d_in, d_out, false, gen, r);
//   Linear wq = linear_weights(opts, "W_query", d_in, d_out, false, gen, r);
//   out.header.reproduce = r.lines();
//
// Legend: B batch, T tokens, d_in input width, in/out a layer's widths.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/generator.hpp"
#include "core/tensor.hpp"

namespace attn::recipe {

// torch.manual_seed(seed)
struct Seed {
  std::uint64_t seed;
};
// name = torch.rand(rows, cols)
struct Rand {
  std::string name;
  std::size_t rows, cols;
};
// name = nn.Linear(in, out, bias=...): name.weight (out, in), then name.bias (out,)
struct Linear {
  std::string name;
  std::size_t in, out;
  bool bias;
};
// x from words: every sentence's words embedded (the book's vector where `book` has the word,
// lower-cased ASCII, else torch.manual_seed(fnv1a32(word)); torch.rand(d_in)), one (T, d_in)
// matrix per sentence; several sentences are stacked into (B, T, d_in), or, when their lengths
// differ, padded with zero rows to the longest (torch.nn.utils.rnn.pad_sequence, batch_first).
struct Words {
  std::string name;
  std::vector<std::vector<std::string>> sentences;
  std::size_t d_in;
  std::map<std::string, std::vector<float>> book;  // lower-case word -> its book vector (d_in each)
};
// name = torch.tensor([...]) of `shape`: values a preset types in. Rendered with the fewest
// digits that give back the same float32.
struct Literal {
  std::string name;
  Shape shape;
  std::vector<float> values;  // C order
};
// target = torch.tensor(np.load(path), dtype=torch.float32), or np.loadtxt over the file's lines
// with commas and semicolons made spaces for a text file (.csv, .tsv, .txt), transposed
// (.T) when `transpose`. `target` is a variable ("x", "W_query") or a layer's parameter
// ("W_query.weight"), which replaces what nn.Linear drew.
struct Load {
  std::string target;
  std::string path;
  bool transpose;
};
// name = torch.stack([name] * copies): B copies of one (T, d_in) sentence.
struct Stack {
  std::string name;
  std::size_t copies;
};
// A comment line; changes nothing.
struct Comment {
  std::string text;
};
// name = nn.Embedding(num, dim): name.weight (num, dim) drawn N(0, 1) (normal_, the path
// TorchGenerator::randn takes).
struct Embedding {
  std::string name;
  std::size_t num, dim;
};
// name = torch.empty(n).uniform_(lo, hi): a (n,) vector, U(lo, hi) (a norm's weight drawn
// rather than left at ones). lo and hi are written as float_literal writes them.
struct Uniform {
  std::string name;
  std::size_t n;
  float lo, hi;
};
// name = torch.tensor([[3, 1, 4]]): whole numbers of `shape` (token ids), an int64 tensor in
// PyTorch because no literal has a decimal point.
struct Ids {
  std::string name;
  Shape shape;
  std::vector<std::size_t> values;  // C order
};

using Step = std::variant<Seed, Rand, Linear, Words, Literal, Load, Stack, Comment, Embedding, Uniform, Ids>;

class Recipe {
 public:
  // Recording. The ones that draw take the generator, so that recording and drawing cannot
  // drift apart: seed() reseeds it.
  Recipe& seed(TorchGenerator& gen, std::uint64_t s);
  Recipe& add(Step step);

  const std::vector<Step>& steps() const { return steps_; }
  // True when some step draws from a torch.manual_seed of this recipe (Rand, Embedding, Uniform,
  // or a Linear whose weight is not replaced by a Load): only then does the seed produce printed
  // numbers.
  bool uses_seed() const;

  // The PyTorch lines, starting with the imports they need.
  std::vector<std::string> lines() const;

 private:
  std::vector<Step> steps_;
};

// Lines written by hand (the RNN lessons' headers), preceded by the imports they use, the way
// Recipe::lines() starts: "import numpy as np, torch" when a line calls np., else "import torch",
// then "from torch import nn" when a line uses nn., so the block runs as printed.
std::vector<std::string> with_imports(std::vector<std::string> lines);

// The shortest decimal that Python turns back into the same float32 ("0.1", "0.43", "1e-09").
std::string float_literal(float v);

// A Python string literal: "..." with \\, \" and every byte outside printable ASCII escaped
// (UTF-8 kept as it is in a str). `bytes` gives b"...", whose bytes are exactly the C++ string's.
std::string py_string(const std::string& s, bool bytes);

}  // namespace attn::recipe
