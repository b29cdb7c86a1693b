// --states DIR and --weights DIR for the RNN lessons, checked against each other (rnn_external.hpp).
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/rnn_external.hpp"

namespace attn {
namespace {

std::string num(std::size_t n) { return std::to_string(n); }

// "(d_a, d_s) = (d_a, 3)": the shape in symbols, then in numbers where they are known.
std::string shape_text(const std::vector<Width>& dims) {
  std::string symbols, numbers;
  for (const auto& d : dims) {
    symbols += (symbols.empty() ? "" : ", ") + d.symbol;
    numbers += (numbers.empty() ? "" : ", ") + (d.size ? num(d.size) : d.symbol);
  }
  return "(" + symbols + ") = (" + numbers + (dims.size() == 1 ? ",)" : ")");
}

bool fits(const Shape& shape, const std::vector<Width>& dims) {
  if (shape.size() != dims.size()) return false;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (dims[k].size && dims[k].size != shape[k]) return false;
  for (std::size_t d : shape)
    if (d == 0) return false;
  return true;
}

const ExternalTensor& required(const std::map<std::string, ExternalTensor>& files, const std::string& flag,
                               const std::string& dir, const std::string& name, const std::string& expected) {
  const auto it = files.find(name);
  if (it == files.end())
    throw UsageError(flag + " is missing " + name + ".npy", flag + " " + dir, name + ".npy of shape " + expected,
                     "no such file");
  return it->second;
}

std::string layout_words(bool torch) { return torch ? "torch layout (out, in)" : "math layout (in, out)"; }

Mat as_matrix(const ExternalTensor& t, std::size_t rows, std::size_t cols) {
  Mat m = xt::empty<float>({rows, cols});  // (rows, cols)
  std::copy(t.values.begin(), t.values.end(), m.begin());
  return m;
}

void refuse_beside_states(bool given, const std::string& flag, const std::string& why) {
  if (given)
    throw UsageError(flag + " and --states contradict each other: " + why, flag, "one of " + flag + " and --states",
                     "both");
}

}  // namespace

RnnStates rnn_states(const LessonOptions& opts, const std::string& query, const std::string& row_prefix) {
  const std::string why = "the states replace the lesson's own encoder";
  refuse_beside_states(opts.input.has_value(), "--input", why);
  refuse_beside_states(opts.hidden.has_value(), "--hidden", "the widths come from the files");
  refuse_beside_states(opts.d_in.has_value(), "--d-in", why);
  RnnStates st;
  st.query = query;
  const std::string dir = opts.states_dir;
  const ExternalTensor& H = required(opts.states, "--states", dir, "H", "(S, d_enc)");
  if (H.shape.size() != 2 || H.shape[0] == 0 || H.shape[1] == 0)
    throw UsageError("H.npy must hold one encoder state per source word", H.source, "(S, d_enc)", shape_str(H.shape));
  st.S = H.shape[0];
  st.d_enc = H.shape[1];
  if (st.S > kMaxSentence)
    throw UsageError("H.npy has too many rows to print", H.source, "at most " + num(kMaxSentence) + " source words",
                     num(st.S));
  if (st.d_enc > kMaxHidden)
    throw UsageError("H.npy's states are too wide to print", H.source, "d_enc at most " + num(kMaxHidden),
                     num(st.d_enc));
  st.H = as_matrix(H, st.S, st.d_enc);  // (S, d_enc)

  const ExternalTensor& q = required(opts.states, "--states", dir, query, "(d_s,) or (T, d_s)");
  const std::string qfile = query + ".npy";
  const bool vector = q.shape.size() == 1, matrix = q.shape.size() == 2;
  if ((!vector && !matrix) || q.shape[0] == 0 || (matrix && q.shape[1] == 0))
    throw UsageError(qfile + " must hold one decoder state or one per row", q.source, "(d_s,) or (T, d_s)",
                     shape_str(q.shape));
  st.one_query = vector;
  st.T = vector ? 1 : q.shape[0];
  st.d_s = vector ? q.shape[0] : q.shape[1];
  if (st.T > kMaxSentence)
    throw UsageError(qfile + " has too many rows to print", q.source, "at most " + num(kMaxSentence) + " decoder states",
                     num(st.T));
  if (st.d_s > kMaxHidden)
    throw UsageError(qfile + "'s states are too wide to print", q.source, "d_s at most " + num(kMaxHidden), num(st.d_s));
  st.queries = as_matrix(q, st.T, st.d_s);  // (T, d_s)

  if (opts.src && opts.src->size() != st.S)
    throw UsageError("--src does not label every row of H.npy", "--src",
                     one_word_each(st.S, "row"),
                     words_given(opts.src->size()));
  if (opts.tgt && opts.tgt->size() != st.T)
    throw UsageError("--tgt does not label every decoder state in " + qfile, "--tgt",
                     one_word_each(st.T, "state"),
                     words_given(opts.tgt->size()));
  for (std::size_t j = 0; j < st.S; ++j) st.src.push_back(opts.src ? (*opts.src)[j] : row_prefix + num(j + 1));
  for (std::size_t i = 0; i < st.T; ++i)
    st.tgt.push_back(opts.tgt ? (*opts.tgt)[i] : (vector ? query : query + "[" + num(i) + "]"));
  return st;
}

Mat rnn_weight(const LessonOptions& opts, const std::string& name, const Width& out, const Width& in) {
  const bool torch = opts.weights_torch_layout;
  const std::vector<Width> want = torch ? std::vector<Width>{out, in} : std::vector<Width>{in, out};
  const std::vector<Width> other = torch ? std::vector<Width>{in, out} : std::vector<Width>{out, in};
  const std::string expected = shape_text(want) + " in " + layout_words(torch);
  const ExternalTensor& t = required(opts.weights, "--weights", opts.weights_dir, name, expected);
  if (!fits(t.shape, want)) {
    const bool flipped = fits(t.shape, other);
    throw UsageError(name + ".npy has the wrong shape" +
                         (flipped ? std::string("; it fits --weights-layout ") + (torch ? "math" : "torch") : ""),
                     t.source, expected, shape_str(t.shape));
  }
  const std::size_t o = t.shape[torch ? 0 : 1], i = t.shape[torch ? 1 : 0];
  if (o > kMaxHidden)
    throw UsageError(name + ".npy is too wide to print", t.source, out.symbol + " at most " + num(kMaxHidden), num(o));
  Mat w = xt::empty<float>({o, i});  // (out, in)
  for (std::size_t r = 0; r < o; ++r)
    for (std::size_t c = 0; c < i; ++c) w(r, c) = torch ? t.values[r * i + c] : t.values[c * o + r];
  return w;
}

Vec rnn_vector(const LessonOptions& opts, const std::string& name, const Width& d) {
  const bool torch = opts.weights_torch_layout;
  const Width one{"1", 1};
  const std::string expected = shape_text({d}) + " or " + shape_text(torch ? std::vector<Width>{one, d}
                                                                            : std::vector<Width>{d, one});
  const ExternalTensor& t = required(opts.weights, "--weights", opts.weights_dir, name, expected);
  const bool ok = fits(t.shape, {d}) || (torch ? fits(t.shape, {one, d}) : fits(t.shape, {d, one}));
  if (!ok) throw UsageError(name + ".npy has the wrong shape", t.source, expected, shape_str(t.shape));
  Vec v = xt::empty<float>({d.size});  // (d,)
  std::copy(t.values.begin(), t.values.end(), v.begin());
  return v;
}

Mat bilinear_weight(const LessonOptions& opts, const std::string& name, const Width& rows, const Width& cols) {
  const std::string expected = shape_text({rows, cols}) + " in either layout";
  const ExternalTensor& t = required(opts.weights, "--weights", opts.weights_dir, name, expected);
  if (!fits(t.shape, {rows, cols}))
    throw UsageError(name + ".npy has the wrong shape", t.source, expected, shape_str(t.shape));
  return as_matrix(t, rows.size, cols.size);  // (rows, cols)
}

std::string py_path(const std::string& dir, const std::string& name) {
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  path += name + ".npy";
  std::string quoted = "'";
  for (char c : path) quoted += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return quoted + "'";
}

std::string py_load(const std::string& dir, const std::string& name, bool transpose) {
  return "torch.tensor(np.load(" + py_path(dir, name) + "), dtype=torch.float32)" + (transpose ? ".T" : "");
}

std::string py_input_line(const ExternalTensor& input) {
  const std::string prefix = "--input ";
  const std::string path = input.source.rfind(prefix, 0) == 0 ? input.source.substr(prefix.size()) : input.source;
  std::string quoted = "'";
  for (char c : path) quoted += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  quoted += "'";
  const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  // A text matrix separates values by commas or white space, as attn's reader does.
  const std::string load = npy ? "np.load(" + quoted + ")"
                               : "np.loadtxt(open(" + quoted + ").read().replace(',', ' ').splitlines(), ndmin=2)";
  return "x = torch.tensor(" + load + ", dtype=torch.float32)  # the source embeddings, from --input";
}

std::string layout_name(const LessonOptions& opts) {
  return std::string("weights from ") + opts.weights_dir + " (" + layout_words(opts.weights_torch_layout) + ")";
}

}  // namespace attn
