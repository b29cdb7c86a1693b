// Where a lesson's x and weights come from: --input, --tokens sentences, --weights DIR, or the seed
// (declarations and the full story in external.hpp).
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/external.hpp"

#include <cctype>

#include <xtensor/xmanipulation.hpp>

namespace attn {
namespace {

std::string numbered(std::size_t i) { return "t" + std::to_string(i + 1); }

// (rows, cols) of a loaded 2-D tensor, or a refusal naming the file.
void require_rank(const ExternalTensor& t, std::size_t rank, const std::string& expected) {
  if (t.shape.size() != rank)
    throw UsageError(t.source + " has the wrong number of axes", t.source, expected, shape_str(t.shape));
}

const ExternalTensor* find_weight(const LessonOptions& opts, const std::string& name) {
  const auto it = opts.weights.find(name);
  return it == opts.weights.end() ? nullptr : &it->second;
}

// The file a --weights tensor came from, for the reproduce lines.
std::string weight_path(const LessonOptions& opts, const std::string& name) {
  const ExternalTensor* t = find_weight(opts, name);
  return t && !t->path.empty() ? t->path : opts.weights_dir + "/" + name + ".npy";
}

// The weight as nn.Linear keeps it, (out, in), whatever the file's layout.
Mat weight_out_in(const LessonOptions& opts, const std::string& name, std::size_t in, std::size_t out) {
  const ExternalTensor* t = find_weight(opts, name);
  const std::string layout = opts.weights_torch_layout ? "(out, in)" : "(in, out)";
  const Shape expected = opts.weights_torch_layout ? Shape{out, in} : Shape{in, out};
  if (!t)
    throw UsageError("--weights is missing " + name + ".npy", "--weights " + opts.weights_dir,
                     name + ".npy of shape " + shape_str(expected) + " " + layout, "no such file");
  if (t->shape != expected)
    throw UsageError(name + ".npy has the wrong shape", t->source, shape_str(expected) + " " + layout,
                     shape_str(t->shape));
  Mat w = xt::empty<float>({out, in});  // (out, in)
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t i = 0; i < in; ++i)
      w(o, i) = opts.weights_torch_layout ? t->values[o * in + i] : t->values[i * out + o];
  return w;
}

}  // namespace

std::map<std::string, std::vector<float>> book_table(std::size_t d_in) {
  std::map<std::string, std::vector<float>> table;
  if (d_in != 3) return table;
  const Mat book = book_embeddings();  // (6, 3)
  for (std::size_t r = 0; r < book_tokens().size(); ++r) {
    std::string key = book_tokens()[r];
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    table[key] = {book(r, 0), book(r, 1), book(r, 2)};
  }
  return table;
}

namespace {

// x is one (T, d_in) matrix so far: copies make the batch when it is shown.
void record_copies(LessonInput& in, const std::string& one) {
  in.repeated = true;
  if (in.batched) {
    in.recipe.add(recipe::Stack{"x", in.B});
    in.equation = in.B == 1 ? "x = " + one + ".unsqueeze(0)" : "x = torch.stack([" + one + "] * B)";
  } else {
    in.equation = "x = " + one;
  }
}

}  // namespace

InputSizes check_input_shape(const LessonOptions& opts, const Shape& shape, const std::string& source,
                             std::size_t default_B, bool complete) {
  if (shape.size() != 2 && shape.size() != 3)
    throw UsageError("--input must be a matrix (T, d_in) or a batch (B, T, d_in)", source, "(T, d_in) or (B, T, d_in)",
                     shape_str(shape));
  InputSizes in;
  in.has_batch = shape.size() == 3;
  const std::size_t file_B = in.has_batch ? shape[0] : 1;
  in.T = shape[in.has_batch ? 1 : 0];
  in.d_in = shape[in.has_batch ? 2 : 1];
  if (in.T == 0 || in.d_in == 0 || file_B == 0)
    throw UsageError("--input holds no values", source, "at least one token of width 1", shape_str(shape));
  if (opts.d_in && *opts.d_in != in.d_in)
    throw UsageError("--d-in disagrees with --input", "--d-in", std::to_string(in.d_in) + " (from " + source + ")",
                     std::to_string(*opts.d_in));
  if (in.has_batch && opts.batch && *opts.batch != file_B)
    throw UsageError("--batch disagrees with --input", "--batch", std::to_string(file_B) + " (from " + source + ")",
                     std::to_string(*opts.batch));
  in.B = in.has_batch ? file_B : size_option(opts.batch, default_B, "--batch");
  // Every token lesson holds x and scores each token against every other: (B, T, T).
  const std::string flags = source + (in.has_batch ? "" : ", --batch");  // what set B, T and d_in
  check_size("x", {in.B, in.T, in.d_in}, opts.shapes_only, flags);
  check_size("attn_scores", {in.B, in.T, in.T}, opts.shapes_only, flags);
  if (!complete) return in;  // rows still to come: only the limits above apply yet
  if (opts.seq_len && *opts.seq_len != in.T)
    throw UsageError("--seq-len disagrees with --input", "--seq-len", std::to_string(in.T) + " (from " + source + ")",
                     std::to_string(*opts.seq_len));
  if (opts.tokens && opts.tokens->size() != in.T)
    throw UsageError("--tokens does not label every row of --input", "--tokens",
                     one_word_each(in.T, "row"),
                     words_given(opts.tokens->size()));
  return in;
}

LessonInput lesson_input(const LessonOptions& opts, std::size_t default_d_in, std::size_t default_B,
                         bool always_batched, const std::function<bool(const InputSizes&)>& check_first) {
  auto sizes_known = [&](std::size_t B, std::size_t T, std::size_t d_in) {  // whether x gets its values
    return check_first ? check_first({B, T, d_in}) : true;
  };
  LessonInput in;
  if (opts.input) {
    const ExternalTensor& t = *opts.input;
    const InputSizes sizes = check_input_shape(opts, t.shape, t.source, default_B);
    const bool has_batch = sizes.has_batch;
    const std::size_t file_B = sizes.B;
    in.B = sizes.B;
    in.T = sizes.T;
    in.d_in = sizes.d_in;
    sizes_known(in.B, in.T, in.d_in);  // --input is read already: its values are kept either way
    Mat one = xt::empty<float>({in.T, in.d_in});  // (T, d_in)
    if (has_batch) {
      in.x = xt::empty<float>({in.B, in.T, in.d_in});  // (B, T, d_in)
      std::copy(t.values.begin(), t.values.end(), in.x.begin());
    } else {
      std::copy(t.values.begin(), t.values.end(), one.begin());
      in.x = stack_batch(one, in.B);  // (B, T, d_in)
    }
    if (has_batch && opts.tokens && opts.more_sentences.size() + 1 == file_B) {
      // One labelled sentence per batch entry (a preset's literal batch): rows per sentence, no
      // shared column labels.
      for (const auto& w : *opts.tokens) in.rows.push_back(w);
      for (const auto& sentence : opts.more_sentences) {
        if (sentence.size() != in.T)
          throw UsageError("every --tokens sentence needs the same number of words", "--tokens",
                           std::to_string(in.T) + " words each", std::to_string(sentence.size()));
        for (const auto& w : sentence) in.rows.push_back(w);
      }
    } else {
      for (std::size_t i = 0; i < in.T; ++i) in.rows.push_back(opts.tokens ? (*opts.tokens)[i] : numbered(i));
      in.cols = in.rows;
    }
    in.origin = "x comes from " + t.source + ", shape " + shape_str(t.shape) + ".";
    in.batched = always_batched || has_batch || opts.batch.has_value();
    const std::string what = t.path.empty() ? "torch.tensor(...)" : "load(--input)";
    if (t.path.empty()) in.recipe.add(recipe::Literal{"x", t.shape, t.values});
    else in.recipe.add(recipe::Load{"x", t.path, false});
    if (has_batch) in.equation = "x = " + what;
    else record_copies(in, what);
    return in;
  }
  if (!opts.more_sentences.empty()) {
    // Several sentences: one batch entry each, each with its own labels.
    std::vector<std::vector<std::string>> sentences = {opts.tokens.value_or(std::vector<std::string>{})};
    for (const auto& s : opts.more_sentences) sentences.push_back(s);
    in.B = sentences.size();
    in.T = sentences[0].size();
    in.d_in = size_option(opts.d_in, default_d_in, "--d-in");
    for (const auto& s : sentences)
      if (s.size() != in.T)
        throw UsageError("every --tokens sentence needs the same number of words", "--tokens",
                         std::to_string(in.T) + " words each", std::to_string(s.size()));
    if (opts.batch && *opts.batch != in.B)
      throw UsageError("--batch disagrees with the number of --tokens sentences", "--batch",
                       std::to_string(in.B) + " (one per sentence)", std::to_string(*opts.batch));
    if (opts.seq_len && *opts.seq_len != in.T)
      throw UsageError("--seq-len disagrees with the number of --tokens", "--seq-len",
                       std::to_string(in.T) + " (one per token)", std::to_string(*opts.seq_len));
    check_size("x", {in.B, in.T, in.d_in}, opts.shapes_only, "--tokens, --d-in");
    const bool values = sizes_known(in.B, in.T, in.d_in);
    in.x = xt::empty<float>({in.B, in.T, in.d_in});  // (B, T, d_in)
    for (std::size_t b = 0; b < in.B; ++b) {
      const TokenInput one = embed_tokens(sentences[b], in.d_in, true, values);
      if (values) std::copy(one.x.data(), one.x.data() + one.x.size(), in.x.data() + b * in.T * in.d_in);
      for (const auto& w : sentences[b]) in.rows.push_back(w);
      in.origin += (b ? " " : "") + std::string("Sentence ") + std::to_string(b + 1) + ": " + one.origin;
    }
    in.batched = true;
    in.equation = "x = torch.stack([embed(sentence) for sentence in sentences])";
    in.recipe.add(recipe::Words{"x", sentences, in.d_in, book_table(in.d_in)});
    return in;
  }
  in.d_in = size_option(opts.d_in, default_d_in, "--d-in");
  in.B = size_option(opts.batch, default_B, "--batch");
  const std::size_t T = resolve_seq_len(opts, book_tokens().size());
  check_size("x", {T, in.d_in}, opts.shapes_only, "--seq-len, --d-in");
  const bool values = sizes_known(in.B, T, in.d_in);
  const TokenInput words = token_input(opts, in.d_in, values);
  in.T = words.tokens.size();
  in.x = values ? stack_batch(words.x, in.B) : Ten3(xt::empty<float>({in.B, in.T, in.d_in}));  // (B, T, d_in)
  in.rows = words.tokens;
  in.cols = words.tokens;
  in.origin = words.origin;
  in.batched = always_batched || opts.batch.has_value();
  in.recipe.add(recipe::Words{"x", {words.tokens}, in.d_in, book_table(in.d_in)});
  record_copies(in, "embed(tokens)");
  return in;
}

std::size_t projection_width(const LessonOptions& opts, std::size_t default_d_out) {
  const ExternalTensor* t = find_weight(opts, "W_query");
  if (!t) return size_option(opts.d_out, default_d_out, "--d-out");
  require_rank(*t, 2, opts.weights_torch_layout ? "(out, in)" : "(in, out)");
  const std::size_t from_file = t->shape[opts.weights_torch_layout ? 0 : 1];
  if (opts.d_out && *opts.d_out != from_file)
    throw UsageError("--d-out disagrees with --weights", "--d-out", std::to_string(from_file) + " (from W_query.npy)",
                     std::to_string(*opts.d_out));
  return from_file;
}

std::size_t head_width_option(const LessonOptions& opts, std::size_t h, std::size_t d_in) {
  const std::size_t given = static_cast<std::size_t>(opts.integer("--d-k"));  // 0: not given
  const ExternalTensor* t = find_weight(opts, "W_query");
  const std::size_t in_axis = opts.weights_torch_layout ? 1 : 0;
  // A wrong rank, or a file whose input axis is not d_in (the other layout?), is linear_weights'
  // to refuse, with the shape it expected.
  if (t && t->shape.size() == 2 && t->shape[in_axis] == d_in) {
    const std::size_t width = t->shape[1 - in_axis];  // h * d_k
    if (width % h != 0)
      throw UsageError("--heads must divide W_query.npy's width, h * d_k", "--heads",
                       "a divisor of " + std::to_string(width) + " (" + t->source + ")", std::to_string(h));
    if (given && given != width / h)
      throw UsageError("--d-k disagrees with --weights", "--d-k",
                       std::to_string(width / h) + " (from W_query.npy, " + std::to_string(width) + " wide over " +
                           std::to_string(h) + " heads)",
                       std::to_string(given));
    return width / h;
  }
  if (given) return given;
  if (d_in % h != 0)
    throw UsageError("--heads must divide --d-in when --d-k is not given (d_k = d_in / heads); or give --d-k",
                     "--heads", "a divisor of " + std::to_string(d_in), std::to_string(h));
  return d_in / h;
}

std::size_t kv_heads_option(const LessonOptions& opts, std::size_t h, std::size_t d_in, std::size_t d_k) {
  std::size_t h_kv = 0;
  const ExternalTensor* t = find_weight(opts, "W_key");
  const std::size_t in_axis = opts.weights_torch_layout ? 1 : 0;
  // As above: a file that does not fit d_in is linear_weights' to refuse.
  if (t && t->shape.size() == 2 && t->shape[in_axis] == d_in) {
    const std::size_t width = t->shape[1 - in_axis];  // h_kv * d_k
    if (width % d_k != 0)
      throw UsageError("W_key.npy's width is not a whole number of heads", t->source,
                       "a multiple of d_k = " + std::to_string(d_k), std::to_string(width));
    if (opts.kv_heads && *opts.kv_heads != width / d_k)
      throw UsageError("--kv-heads disagrees with --weights", "--kv-heads",
                       std::to_string(width / d_k) + " (from W_key.npy, " + std::to_string(width) + " wide)",
                       std::to_string(*opts.kv_heads));
    h_kv = width / d_k;
    if (h_kv == 0 || h_kv > h || h % h_kv != 0)
      throw UsageError("W_key.npy's key/value heads must divide --heads", t->source,
                       "a divisor of " + std::to_string(h) + " heads of d_k = " + std::to_string(d_k),
                       std::to_string(h_kv) + " heads (" + std::to_string(width) + " wide)");
    return h_kv;
  }
  h_kv = size_option(opts.kv_heads, h % 2 == 0 ? h / 2 : h, "--kv-heads");
  if (h_kv > h || h % h_kv != 0)
    throw UsageError("--kv-heads must divide --heads", "--kv-heads", "a divisor of " + std::to_string(h),
                     std::to_string(h_kv));
  return h_kv;
}

std::size_t out_proj_width(const LessonOptions& opts, std::size_t d_out) {
  const std::size_t given = static_cast<std::size_t>(opts.integer("--out-proj-width"));  // 0: d_out
  const ExternalTensor* t = find_weight(opts, "out_proj");
  const std::size_t in_axis = opts.weights_torch_layout ? 1 : 0;
  // A file that does not take d_out is linear_weights' to refuse, with the shape it expected.
  if (t && t->shape.size() == 2 && t->shape[in_axis] == d_out) {
    const std::size_t width = t->shape[1 - in_axis];
    if (given && given != width)
      throw UsageError("--out-proj-width disagrees with --weights", "--out-proj-width",
                       std::to_string(width) + " (from out_proj.npy)", std::to_string(given));
    return width;
  }
  return given ? given : d_out;
}

Linear linear_weights(const LessonOptions& opts, const std::string& name, std::size_t in, std::size_t out,
                      bool bias, TorchGenerator& gen, recipe::Recipe& r, const std::string& python_name, bool draw) {
  const std::string& py = python_name.empty() ? name : python_name;
  if (opts.weights.empty()) {
    r.add(recipe::Linear{py, in, out, bias});
    return draw ? make_linear(gen, in, out, bias) : Linear{};
  }
  Linear layer;
  layer.weight = weight_out_in(opts, name, in, out);  // (out, in)
  const ExternalTensor* b = find_weight(opts, name + "_bias");
  if (b) {
    if (b->shape != Shape{out})
      throw UsageError(name + "_bias.npy has the wrong shape", b->source, shape_str(Shape{out}), shape_str(b->shape));
    layer.bias = xt::empty<float>({out});  // (out,)
    std::copy(b->values.begin(), b->values.end(), layer.bias.begin());
  }
  r.add(recipe::Linear{py, in, out, b != nullptr});
  r.add(recipe::Load{py + ".weight", weight_path(opts, name), !opts.weights_torch_layout});
  if (b) r.add(recipe::Load{py + ".bias", weight_path(opts, name + "_bias"), false});
  return layer;
}

Mat matrix_weights(const LessonOptions& opts, const std::string& name, std::size_t in, std::size_t out,
                   TorchGenerator& gen, recipe::Recipe& r) {
  if (opts.weights.empty()) {
    r.add(recipe::Rand{name, in, out});
    return gen.rand(in, out);  // (in, out)
  }
  Mat w = xt::transpose(weight_out_in(opts, name, in, out));  // (out, in) -> (in, out)
  r.add(recipe::Load{name, weight_path(opts, name), opts.weights_torch_layout});
  return w;
}

SingleHeadSetup single_head_setup(const LessonOptions& opts, std::uint64_t default_seed, const SingleHeadHeld& held,
                                  bool values_optional) {
  const std::size_t d_out = projection_width(opts, 2);
  bool values = true;
  LessonInput in = lesson_input(opts, 3, 1, false, [&](const InputSizes& n) {
    values = check_sizes({{"attn_scores", {n.B, n.T, n.T}, "--batch, --seq-len"},
                          {"each projection weight", {n.d_in, d_out}, "--d-in, --d-out"},
                          {"queries", {n.B, n.T, d_out}, "--batch, --seq-len, --d-out"}},
                         opts.shapes_only, values_optional);
    if (values)
      values = values_within_held(std::string(held.lesson) + " at these sizes",
                                  held_bytes(opts, {{held.scores, {n.B, n.T, n.T}},
                                                    {held.weights, {n.d_in, d_out}},
                                                    {held.inputs, {n.B, n.T, n.d_in}},
                                                    {held.outputs, {n.B, n.T, d_out}}}),
                                  opts.shapes_only, values_optional, held.skips_values,
                                  "--batch, --seq-len, --d-in, --d-out");
    return values;
  });
  const std::size_t B = in.B, T = in.T, d_in = in.d_in;
  const bool batched = in.batched;
  return {opts.seed.value_or(default_seed), d_in, d_out, B, T, values, BatchView(batched), std::move(in), opts.preset};
}

std::vector<std::string> SingleHeadSetup::setting(const recipe::Recipe& r) const {
  std::vector<std::string> s;
  if (r.uses_seed()) s.push_back("seed " + std::to_string(seed));
  for (const std::string& item : {"tokens " + std::to_string(T), "d_in " + std::to_string(d_in),
                                  "d_out " + std::to_string(d_out), "batch " + std::to_string(B)})
    s.push_back(item);
  if (!preset.empty()) s.push_back("preset " + preset);
  return s;
}

report::Stage& inputs_stage(report::Report& out, const BatchView& view, const LessonInput& input,
                            const std::string& title) {
  auto& s = out.stage(title, input.equation);
  view.show(s, "x", input.x, input.rows);
  s.note(input.origin);
  if (view.batched())
    s.note("The batch axis is real: every step below runs on the whole batch (B = " +
           std::to_string(input.B) + ") at once." +
           (!input.repeated || input.B == 1 ? ""
                               : " Like the book's torch.stack((inputs, inputs)), the batch repeats the same "
                                 "sentence."));
  return s;
}

std::string weights_origin(const LessonOptions& opts) {
  if (opts.weights.empty()) return "";
  return std::string("The weights come from --weights ") + opts.weights_dir + " (files in " +
         (opts.weights_torch_layout ? "PyTorch's (out, in) layout" : "the math's (in, out) layout") +
         "), not from the seed.";
}

}  // namespace attn
