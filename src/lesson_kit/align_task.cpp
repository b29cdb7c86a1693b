#include "lesson_kit/align_task.hpp"

#include <algorithm>
#include <cctype>

namespace attn {
namespace {

// Source words by kind, in id order, and their translations in the same order. The adjectives
// are colours, which French puts after the noun; the nouns are masculine, so that the
// determiners translate one way each. Six words of every kind: a kind with fewer choices carries
// less information, and the decoder then learns to fetch it from a neighbour's encoder state
// instead of the word itself, which blurs the alignment (two determiners did exactly that).
const std::vector<std::string> kDet = {"the", "a", "this", "my", "your", "his"};
const std::vector<std::string> kAdj = {"red", "black", "green", "white", "blue", "grey"};
const std::vector<std::string> kNoun = {"cat", "dog", "bird", "horse", "fish", "wolf"};
const std::vector<std::string> kVerb = {"sees", "likes", "follows", "eats", "finds", "hears"};
const std::vector<std::string> kTarget = {"le",   "un",    "ce",     "mon",    "ton",     "son",
                                          "rouge", "noir", "vert",   "blanc",  "bleu",    "gris",
                                          "chat", "chien", "oiseau", "cheval", "poisson", "loup",
                                          "voit", "aime",  "suit",   "mange",  "trouve",  "entend"};

// The first id of each kind: determiners, then adjectives, nouns, verbs.
const std::size_t kAdjFirst = kDet.size(), kNounFirst = kAdjFirst + kAdj.size(),
                  kVerbFirst = kNounFirst + kNoun.size();

bool is_adj(std::size_t id) { return id >= kAdjFirst && id < kNounFirst; }
bool is_noun(std::size_t id) { return id >= kNounFirst && id < kVerbFirst; }

// Word floor(u * n) of a kind whose first id is `first`; u * n in double is exact for float u.
std::size_t pick(float u, std::size_t first, std::size_t n) {
  return first + std::min(n - 1, static_cast<std::size_t>(static_cast<double>(u) * static_cast<double>(n)));
}

void noun_phrase(const float* u, std::vector<std::size_t>& src) {
  src.push_back(pick(u[0], 0, kDet.size()));
  if (u[1] < 0.5f) src.push_back(pick(u[2], kAdjFirst, kAdj.size()));
  src.push_back(pick(u[3], kNounFirst, kNoun.size()));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

const std::vector<std::string>& align_source_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w;
    for (const auto* kind : {&kDet, &kAdj, &kNoun, &kVerb}) w.insert(w.end(), kind->begin(), kind->end());
    return w;
  }();
  return words;
}

const std::vector<std::string>& align_target_words() { return kTarget; }
std::size_t align_start_id() { return kTarget.size(); }

std::string align_kind(std::size_t id) {
  return id < kAdjFirst ? "det" : is_adj(id) ? "adj" : is_noun(id) ? "noun" : "verb";
}

AlignPair align_translate(const std::vector<std::size_t>& src) {
  AlignPair p;
  p.src = src;
  for (std::size_t j = 0; j < src.size(); ++j) {
    if (is_adj(src[j]) && j + 1 < src.size() && is_noun(src[j + 1])) {
      p.origin.push_back(j + 1);  // the noun first, then its adjective
      p.origin.push_back(j);
      ++j;
    } else {
      p.origin.push_back(j);
    }
  }
  for (std::size_t j : p.origin) p.tgt.push_back(src[j]);  // a source id translates to the same target id
  return p;
}

AlignPair align_draw_sentence(TorchGenerator& gen) {
  const Vec u = gen.rand(9);  // (9,)
  std::vector<std::size_t> src;
  noun_phrase(u.data(), src);
  src.push_back(pick(u(4), kVerbFirst, kVerb.size()));
  noun_phrase(u.data() + 5, src);
  return align_translate(src);
}

AlignData align_make_data(TorchGenerator& gen, std::size_t n_held_out, std::size_t n_train) {
  AlignData d;
  auto held_out = [&d](const AlignPair& p) {
    return std::any_of(d.held_out.begin(), d.held_out.end(), [&p](const AlignPair& h) { return h.src == p.src; });
  };
  // The grammar has 252 * 6 * 252 = 381,024 sentences (a noun phrase is one of 6 * (6 + 36)), so
  // these loops end quickly.
  while (d.held_out.size() < n_held_out) {
    AlignPair p = align_draw_sentence(gen);
    if (!held_out(p)) d.held_out.push_back(std::move(p));
  }
  while (d.train.size() < n_train) {
    AlignPair p = align_draw_sentence(gen);
    if (!held_out(p)) d.train.push_back(std::move(p));
  }
  return d;
}

std::optional<std::vector<std::size_t>> align_source_ids(const std::vector<std::string>& words,
                                                         std::vector<std::string>& unknown) {
  const auto& vocab = align_source_words();
  std::vector<std::size_t> ids;
  for (const std::string& w : words) {
    const auto at = std::find(vocab.begin(), vocab.end(), lower(w));
    if (at == vocab.end()) {
      if (std::find(unknown.begin(), unknown.end(), w) == unknown.end()) unknown.push_back(w);
    } else {
      ids.push_back(static_cast<std::size_t>(at - vocab.begin()));
    }
  }
  if (!unknown.empty()) return std::nullopt;
  return ids;
}

std::vector<std::string> align_source_text(const std::vector<std::size_t>& ids) {
  std::vector<std::string> out;
  for (std::size_t id : ids) out.push_back(align_source_words().at(id));
  return out;
}

std::vector<std::string> align_target_text(const std::vector<std::size_t>& ids) {
  std::vector<std::string> out;
  for (std::size_t id : ids) out.push_back(id == align_start_id() ? "<s>" : kTarget.at(id));
  return out;
}

bool align_grammatical(const std::vector<std::size_t>& src) {
  std::size_t j = 0;
  auto np = [&]() {
    if (j >= src.size() || src[j] >= kAdjFirst) return false;
    ++j;
    if (j < src.size() && is_adj(src[j])) ++j;
    if (j >= src.size() || !is_noun(src[j])) return false;
    ++j;
    return true;
  };
  if (!np()) return false;
  if (j >= src.size() || src[j] < kVerbFirst) return false;
  ++j;
  return np() && j == src.size();
}

}  // namespace attn
