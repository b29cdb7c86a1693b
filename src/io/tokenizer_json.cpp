// Loading tokenizer.json (tokenizer.hpp): nlohmann/json's SAX interface streams the vocabulary and
// the merges straight into maps (Llama 3's file holds 128,000 tokens and 280,147 merges: a full
// DOM of it takes about 220 ms, more than the whole budget of loading and encoding); every other
// part of the file, a few kilobytes, is built as a DOM and read from there. Like io/json.cpp this
// refuses a key twice in one object and nesting deeper than kJsonMaxDepth.
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "io/json.hpp"  // kJsonMaxDepth
#include "io/npy.hpp"   // escaped_for_message, not_a_file
#include "io/normalizer.hpp"
#include "io/tokenizer_parts.hpp"

namespace attn {

namespace {

using json = nlohmann::json;

// Ids are refused from 2^26 up: no vocabulary comes near (Qwen's 151,669 is the largest here), the
// id -> token table is allocated up to the largest id, and two ids make one 64-bit merge key.
constexpr std::uint64_t kMaxId = std::uint64_t{1} << 26;

std::string quote(const std::string& s) { return "'" + escaped_for_message(s, 80, true) + "'"; }

// "<what> (<file>: <expected> vs <got>)"
[[noreturn]] void refuse(const std::string& file, const std::string& what, const std::string& expected, const std::string& got) {
  throw TokenizerError(what + " (" + file + ": " + expected + " vs " + got + ")");
}

// The SAX side: vocabulary and merges into containers, everything else into `root`.
class Reader : public nlohmann::json_sax<json> {
 public:
  // `bytes`: the file's size, to size the vocabulary's table before it fills (about 70 bytes of
  // file per token in the files seen: 9 MB for Llama 3's 128,000).
  Reader(std::string file, std::size_t bytes) : file_(std::move(file)), expected_tokens_(bytes / 64) {}

  json root;
  TokenMap vocab;
  // Merges are resolved to ids as they are read when the vocabulary came first (it does in every
  // file Hugging Face writes); otherwise kept as strings until it has been read.
  std::vector<Bpe::Merge> resolved;
  std::vector<std::pair<std::string, std::string>> pending;
  bool vocab_seen = false, merges_seen = false;

  // Merge number `index`, a + b: the ids of a, b and a+b, or a refusal naming the one missing.
  Bpe::Merge resolve(std::size_t index, const std::string& a, const std::string& b) {
    joined_.assign(a).append(b);
    const auto ia = vocab.find(a), ib = vocab.find(b), ij = vocab.find(joined_);
    const std::string* missing = !ia ? &a : !ib ? &b : !ij ? &joined_ : nullptr;
    if (missing)
      refuse(file_, "merge " + std::to_string(index) + " names a token not in the vocabulary", "tokens of model.vocab",
             quote(a) + " + " + quote(b) + ": " + quote(*missing) + " unknown");
    return {*ia, *ib, *ij};
  }

  bool null() override { return value(json()); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override { return value(v); }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool string(string_t& v) override {
    if (mode() == Mode::Merges) return merge_line(v);
    if (mode() == Mode::MergePair) {
      pair_.push_back(std::move(v));
      return true;
    }
    return value(std::move(v));
  }
  bool binary(binary_t&) override { return value(json()); }  // JSON text has no binary values

  bool key(string_t& k) override {
    if (mode() == Mode::Vocab) {
      if (!vocab.insert(k, 0)) refuse(file_, "a token appears twice in the vocabulary", "distinct tokens", quote(k) + " twice");
      vocab_key_ = std::move(k);
      return true;
    }
    if (dom_.back()->contains(k)) refuse(file_, "a key appears twice in one object", "distinct keys", quote(k) + " twice");
    key_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    std::string why = e.what();
    const auto tag = why.find("] ");
    if (tag != std::string::npos) why = why.substr(tag + 2);
    throw TokenizerError("not valid JSON at byte " + std::to_string(position) + " (" + file_ + ": JSON vs " +
                         escaped_for_message(why, 120) + ")");
  }

 private:
  enum class Mode { Dom, Vocab, Merges, MergePair };
  Mode mode() const { return modes_.empty() ? Mode::Dom : modes_.back(); }

  // model.vocab and model.merges: the containers under key `key_` inside root["model"].
  bool at_model_field(const char* name) const {
    return modes_.size() == 2 && mode() == Mode::Dom && keys_.size() == 2 && keys_[1] == "model" && key_ == name;
  }

  bool value(json v) {
    switch (mode()) {
      case Mode::Vocab:
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= kMaxId)
          refuse(file_, "a vocabulary id is not a whole number below " + std::to_string(kMaxId), "ids 0.." + std::to_string(kMaxId - 1),
                 quote(vocab_key_) + ": " + escaped_for_message(v.dump(), 40));
        vocab.set_last_id(static_cast<TokenId>(v.get<std::uint64_t>()));
        return true;
      case Mode::Merges:
      case Mode::MergePair:
        refuse(file_, "a merge is neither \"a b\" nor [\"a\", \"b\"]", "strings", escaped_for_message(v.dump(), 40));
      case Mode::Dom:
        break;
    }
    if (dom_.empty()) root = std::move(v);
    else if (dom_.back()->is_array()) dom_.back()->push_back(std::move(v));
    else (*dom_.back())[key_] = std::move(v);
    return true;
  }

  bool open(bool object) {
    if (modes_.size() + 1 > kJsonMaxDepth)
      refuse(file_, "JSON nested too deeply", "at most " + std::to_string(kJsonMaxDepth) + " levels", "more");
    if (mode() == Mode::Merges && !object) {
      pair_.clear();
      modes_.push_back(Mode::MergePair);
      return true;
    }
    if (mode() != Mode::Dom) refuse(file_, "model.vocab or model.merges holds a nested value", "ids and merges", "an object or array");
    if (object && at_model_field("vocab")) {
      vocab_seen = true;
      vocab.reserve(expected_tokens_);
      (*dom_.back())[key_] = json::object();  // present, and counted as a key of model
      modes_.push_back(Mode::Vocab);
      return true;
    }
    if (!object && at_model_field("merges")) {
      merges_seen = true;
      (*dom_.back())[key_] = json::array();
      modes_.push_back(Mode::Merges);
      return true;
    }
    json* node;
    if (dom_.empty()) {
      root = object ? json::object() : json::array();
      node = &root;
    } else if (dom_.back()->is_array()) {
      dom_.back()->push_back(object ? json::object() : json::array());
      node = &dom_.back()->back();
    } else {
      node = &((*dom_.back())[key_] = object ? json::object() : json::array());
    }
    keys_.push_back(dom_.empty() || dom_.back()->is_array() ? std::string() : key_);
    dom_.push_back(node);
    modes_.push_back(Mode::Dom);
    return true;
  }

  bool close() {
    const Mode m = mode();
    modes_.pop_back();
    if (m == Mode::MergePair) {
      if (pair_.size() != 2) refuse(file_, "a merge is not a pair", "[\"a\", \"b\"]", std::to_string(pair_.size()) + " strings");
      add_merge(pair_[0], pair_[1]);
    } else if (m == Mode::Vocab) {
      vocab_done_ = true;
    } else if (m == Mode::Dom) {
      dom_.pop_back();
      keys_.pop_back();
    }
    return true;
  }

  // "a b": exactly one space, as Hugging Face's reader requires.
  bool merge_line(const std::string& line) {
    const auto space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      refuse(file_, "a merge is not two tokens separated by one space", "\"a b\"", quote(line));
    left_.assign(line, 0, space);
    right_.assign(line, space + 1, std::string::npos);
    add_merge(left_, right_);
    return true;
  }

  void add_merge(const std::string& a, const std::string& b) {
    if (vocab_done_) resolved.push_back(resolve(resolved.size(), a, b));
    else pending.emplace_back(a, b);
  }

  std::string file_;
  std::vector<json*> dom_;          // open DOM containers
  std::vector<std::string> keys_;   // the key each open DOM container was entered under
  std::vector<Mode> modes_;         // one per open container
  std::string key_, vocab_key_;
  std::vector<std::string> pair_;
  std::string left_, right_, joined_;  // reused: no allocation per merge
  std::size_t expected_tokens_;
  bool vocab_done_ = false;
};

// The pieces of the DOM part, each read or refused by name.
class Builder {
 public:
  Builder(std::string file, Reader& r) : file_(std::move(file)), r_(r) {}

  std::shared_ptr<const Tokenizer::Parts> build() {
    if (!r_.root.is_object()) refuse(file_, "tokenizer.json is not an object", "{...}", type_of(r_.root));
    for (const char* off : {"truncation", "padding"})
      if (r_.root.contains(off) && !r_.root[off].is_null())
        refuse(file_, std::string(off) + " is not supported", std::string(off) + ": null", "a setting");
    auto parts = std::make_shared<Tokenizer::Parts>(model());
    index_vocabulary(*parts);
    added_tokens(*parts);
    parts->pre_tokenizer = PreTokenizer(pre_tokenizer(field(r_.root, "pre_tokenizer")));
    parts->byte_level_decoder = decoder(field(r_.root, "decoder"));
    post_processor(field(r_.root, "post_processor"), *parts);
    return parts;
  }

 private:
  static std::string type_of(const json& v) { return v.type_name(); }
  static const json& field(const json& obj, const char* name) {
    static const json null_value;
    const auto it = obj.find(name);
    return it == obj.end() ? null_value : *it;
  }
  bool flag(const json& obj, const char* name, bool fallback, const std::string& where) const {
    const json& v = field(obj, name);
    if (v.is_null()) return fallback;
    if (!v.is_boolean()) refuse(file_, where + "." + name + " is not true or false", "a boolean", type_of(v));
    return v.get<bool>();
  }
  std::string text(const json& obj, const char* name, const std::string& where) const {
    const json& v = field(obj, name);
    if (!v.is_string()) refuse(file_, where + "." + name + " is missing or not a string", "a string", type_of(v));
    return v.get<std::string>();
  }
  std::string type(const json& obj, const std::string& where) const {
    if (!obj.is_object()) refuse(file_, where + " is not an object", "{\"type\": ...}", type_of(obj));
    return text(obj, "type", where);
  }
  [[noreturn]] void unsupported(const std::string& where, const std::string& what, const std::string& supported) const {
    refuse(file_, where + " '" + escaped_for_message(what, 60, true) + "' is not supported", supported, quote(what));
  }

  Bpe model() {
    const json& m = field(r_.root, "model");
    if (!m.is_object()) refuse(file_, "tokenizer.json has no model", "\"model\": {...}", type_of(m));
    const json& t = field(m, "type");
    const std::string kind = t.is_string() ? t.get<std::string>() : (r_.merges_seen ? "BPE" : "");
    if (kind != "BPE") unsupported("model type", kind.empty() ? "(none)" : kind, "BPE");
    if (!r_.vocab_seen) refuse(file_, "model.vocab is missing or not an object", "{\"token\": id, ...}", type_of(field(m, "vocab")));
    if (!r_.merges_seen) refuse(file_, "model.merges is missing or not an array", "[\"a b\", ...]", type_of(field(m, "merges")));
    const json& dropout = field(m, "dropout");
    if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() == 0.0))
      refuse(file_, "model.dropout is not supported", "null", escaped_for_message(dropout.dump(), 20));
    for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      const json& v = field(m, affix);
      if (!v.is_null() && !(v.is_string() && v.get<std::string>().empty()))
        refuse(file_, std::string("model.") + affix + " is not supported", "null or \"\"", escaped_for_message(v.dump(), 40));
    }
    Bpe::Options o;
    o.ignore_merges = flag(m, "ignore_merges", false, "model");
    o.byte_fallback = flag(m, "byte_fallback", false, "model");
    o.fuse_unk = flag(m, "fuse_unk", false, "model");
    const json& unk = field(m, "unk_token");
    if (!unk.is_null()) {
      if (!unk.is_string()) refuse(file_, "model.unk_token is not a string", "a token", type_of(unk));
      const auto id = r_.vocab.find(unk.get<std::string>());
      if (!id) refuse(file_, "model.unk_token is not in the vocabulary", "a vocabulary token", quote(unk.get<std::string>()));
      o.unk = *id;
    }
    for (const auto& [a, b] : r_.pending) r_.resolved.push_back(r_.resolve(r_.resolved.size(), a, b));
    return Bpe(std::move(r_.vocab), r_.resolved, o);
  }

  void index_vocabulary(Tokenizer::Parts& p) {
    const TokenMap& v = p.bpe.vocab();
    TokenId top = 0;
    for (std::size_t i = 0; i < v.size(); ++i) top = std::max(top, v.id(i));
    p.id_to_token.assign(v.empty() ? 0 : top + 1, std::nullopt);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (const auto other = p.id_to_token[v.id(i)])
        refuse(file_, "two tokens share id " + std::to_string(v.id(i)) + " in the vocabulary", "one id per token",
               quote(std::string(*other)) + " and " + quote(std::string(v.key(i))));
      p.id_to_token[v.id(i)] = v.key(i);
    }
  }

  void normalizer(const json& n, Tokenizer::Parts& p) {
    if (n.is_null()) return;
    const std::string t = type(n, "normalizer");
    if (t == "NFC") {
      p.normalizer = Normalizer::nfc();
    } else if (t == "Sequence") {
      const json& list = field(n, "normalizers");
      if (!list.is_array()) refuse(file_, "normalizer.normalizers is not a list", "[...]", type_of(list));
      for (const json& each : list) normalizer(each, p);
    } else {
      unsupported("normalizer", t, "NFC, a Sequence of NFC, or null");
    }
  }

  // Hugging Face does not take an added token's "id" as written: it gives the token the id its
  // text has in the vocabulary, or else the next free id after the vocabulary (it warns when the
  // file says otherwise). Same here, so that the ids are the ones it gives even for such a file.
  TokenId added_token_id(const Tokenizer::Parts& p, const std::string& content) const {
    if (const auto in_vocab = p.bpe.id_of(content)) return *in_vocab;
    const auto vocab_size = static_cast<TokenId>(p.bpe.vocab().size());
    if (p.added.empty()) return vocab_size;
    TokenId top = 0;
    for (const AddedToken& a : p.added) top = std::max(top, a.id);
    return top >= vocab_size || vocab_size == 0 ? top + 1 : vocab_size;
  }

  void added_tokens(Tokenizer::Parts& p) {
    normalizer(field(r_.root, "normalizer"), p);
    const json& list = field(r_.root, "added_tokens");
    if (list.is_null()) return;
    if (!list.is_array()) refuse(file_, "added_tokens is not a list", "[...]", type_of(list));
    for (const json& t : list) {
      if (!t.is_object()) refuse(file_, "an added token is not an object", "{\"id\", \"content\", ...}", type_of(t));
      AddedToken a;
      const json& id = field(t, "id");
      if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= kMaxId)
        refuse(file_, "an added token's id is not a whole number", "ids 0.." + std::to_string(kMaxId - 1), escaped_for_message(id.dump(), 20));
      a.content = text(t, "content", "added_tokens[]");
      a.special = flag(t, "special", false, "added_tokens[]");
      a.single_word = flag(t, "single_word", false, "added_tokens[]");
      a.lstrip = flag(t, "lstrip", false, "added_tokens[]");
      a.rstrip = flag(t, "rstrip", false, "added_tokens[]");
      a.normalized = flag(t, "normalized", !a.special, "added_tokens[]");
      if (a.content.empty()) continue;  // Hugging Face skips an empty one
      const auto same = std::find_if(p.added.begin(), p.added.end(), [&](const AddedToken& o) { return o.content == a.content; });
      if (same != p.added.end()) {  // the same text again: its id, the later flags
        a.id = same->id;
        *same = a;
        continue;
      }
      a.id = added_token_id(p, a.content);
      if (a.id >= kMaxId) refuse(file_, "too many added tokens", "ids below " + std::to_string(kMaxId), std::to_string(a.id));
      p.added_by_id[a.id] = p.added.size();
      p.added.push_back(a);
    }
    std::vector<AddedToken> raw, normalized;
    for (AddedToken a : p.added) {
      if (a.normalized) {
        a.content = p.normalizer.apply(a.content);  // matched in the normalized text
        normalized.push_back(std::move(a));
      } else {
        raw.push_back(std::move(a));
      }
    }
    p.raw_matcher = AddedTokenMatcher(std::move(raw));
    p.normalized_matcher = AddedTokenMatcher(std::move(normalized));
  }

  void pre_tokenizer_step(const json& s, std::vector<PreTokenizerStep>& steps) {
    const std::string t = type(s, "pre_tokenizer");
    PreTokenizerStep step;
    if (t == "Sequence") {
      const json& list = field(s, "pretokenizers");
      if (!list.is_array()) refuse(file_, "pre_tokenizer.pretokenizers is not a list", "[...]", type_of(list));
      for (const json& each : list) pre_tokenizer_step(each, steps);
      return;
    }
    if (t == "ByteLevel") {
      step.kind = PreTokenizerStep::Kind::ByteLevel;
      step.add_prefix_space = flag(s, "add_prefix_space", true, "pre_tokenizer");
      if (flag(s, "use_regex", true, "pre_tokenizer")) step.regex = std::make_shared<Regex>(kGpt2Pattern, file_);
    } else if (t == "Split") {
      step.kind = PreTokenizerStep::Kind::Split;
      const json& pattern = field(s, "pattern");
      if (pattern.is_object() && field(pattern, "Regex").is_string())
        step.regex = std::make_shared<Regex>(pattern["Regex"].get<std::string>(), file_);
      else if (pattern.is_object() && field(pattern, "String").is_string())
        step.regex = std::make_shared<Regex>(escaped_regex(pattern["String"].get<std::string>()), file_);
      else
        refuse(file_, "pre_tokenizer Split has no pattern", "{\"Regex\": ...} or {\"String\": ...}", escaped_for_message(pattern.dump(), 40));
      const std::string b = text(s, "behavior", "pre_tokenizer");
      static const std::pair<const char*, SplitBehavior> kBehaviors[] = {
          {"Removed", SplitBehavior::Removed}, {"Isolated", SplitBehavior::Isolated},
          {"MergedWithPrevious", SplitBehavior::MergedWithPrevious}, {"MergedWithNext", SplitBehavior::MergedWithNext},
          {"Contiguous", SplitBehavior::Contiguous}};
      bool known = false;
      for (const auto& [name, value] : kBehaviors)
        if (b == name) step.behavior = value, known = true;
      if (!known) unsupported("Split behavior", b, "Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
      step.invert = flag(s, "invert", false, "pre_tokenizer");
    } else {
      unsupported("pre_tokenizer", t, "ByteLevel, Split or a Sequence of them");
    }
    steps.push_back(std::move(step));
  }

  std::vector<PreTokenizerStep> pre_tokenizer(const json& s) {
    std::vector<PreTokenizerStep> steps;
    if (!s.is_null()) pre_tokenizer_step(s, steps);
    return steps;
  }

  bool decoder(const json& d) {
    if (d.is_null()) return false;
    const std::string t = type(d, "decoder");
    if (t != "ByteLevel") unsupported("decoder", t, "ByteLevel or null");
    return true;
  }

  // TemplateProcessing's "single": [{"SpecialToken": {"id": name}}, {"Sequence": {"id": "A"}}, ...].
  void post_template(const json& tp, Tokenizer::Parts& p) {
    const json& single = field(tp, "single");
    const json& specials = field(tp, "special_tokens");
    if (!single.is_array()) refuse(file_, "TemplateProcessing.single is not a list", "[...]", type_of(single));
    bool seen_text = false;
    for (const json& item : single) {
      if (item.is_object() && item.contains("Sequence")) {
        const json& id = field(item["Sequence"], "id");
        if (seen_text || !id.is_string() || id.get<std::string>() != "A")
          refuse(file_, "TemplateProcessing.single holds a sequence other than $A once", "$A once", escaped_for_message(item.dump(), 60));
        seen_text = true;
        continue;
      }
      if (!item.is_object() || !item.contains("SpecialToken") || !field(item["SpecialToken"], "id").is_string())
        refuse(file_, "TemplateProcessing.single holds an unknown piece", "SpecialToken or Sequence", escaped_for_message(item.dump(), 60));
      const std::string name = item["SpecialToken"]["id"].get<std::string>();
      const json& entry = specials.is_object() ? field(specials, name.c_str()) : specials;
      const json& ids = entry.is_object() ? field(entry, "ids") : entry;
      if (!ids.is_array()) refuse(file_, "TemplateProcessing names a special token it does not define", "special_tokens." + escaped_for_message(name, 40) + ".ids", "none");
      for (const json& id : ids) {
        if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= kMaxId)
          refuse(file_, "a TemplateProcessing id is not a whole number", "an id", escaped_for_message(id.dump(), 20));
        (seen_text ? p.post.after : p.post.before).push_back(static_cast<TokenId>(id.get<std::uint64_t>()));
      }
    }
    if (!seen_text) refuse(file_, "TemplateProcessing.single has no $A", "$A once", "none");
    p.has_template = true;
  }

  void post_processor(const json& pp, Tokenizer::Parts& p) {
    if (pp.is_null()) return;
    const std::string t = type(pp, "post_processor");
    if (t == "ByteLevel") return;  // offsets only: adds no token
    if (t == "TemplateProcessing") {
      if (p.has_template) refuse(file_, "two TemplateProcessing post-processors", "one", "two");
      post_template(pp, p);
    } else if (t == "Sequence") {
      const json& list = field(pp, "processors");
      if (!list.is_array()) refuse(file_, "post_processor.processors is not a list", "[...]", type_of(list));
      for (const json& each : list) post_processor(each, p);
    } else {
      unsupported("post_processor", t, "ByteLevel, TemplateProcessing or a Sequence of them");
    }
  }

  std::string file_;
  Reader& r_;
};

}  // namespace

Tokenizer Tokenizer::parse(const std::string& bytes, const std::string& what) {
  Reader reader(what, bytes.size());
  nlohmann::json::sax_parse(bytes, &reader, nlohmann::json::input_format_t::json, /*strict=*/true);
  return Tokenizer(Builder(what, reader).build());
}

Tokenizer Tokenizer::load(const std::string& path) {
  const std::string bad = not_a_file(path);
  if (!bad.empty()) throw TokenizerError("cannot read the tokenizer (" + escaped_for_message(path, 200) + ": a tokenizer.json file vs " + bad + ")");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw TokenizerError("cannot read the tokenizer (" + escaped_for_message(path, 200) + ": a readable file vs not readable)");
  if (static_cast<std::uintmax_t>(st.st_size) > kTokenizerJsonMaxBytes)
    throw TokenizerError("tokenizer.json is too large (" + escaped_for_message(path, 200) + ": at most " +
                         std::to_string(kTokenizerJsonMaxBytes >> 20) + " MiB vs " + std::to_string(st.st_size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw TokenizerError("cannot read the tokenizer (" + escaped_for_message(path, 200) + ": a readable file vs a read error)");
  return parse(bytes, escaped_for_message(path, 200));
}

}  // namespace attn
