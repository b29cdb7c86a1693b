// attn tokenize (tokenize_command.hpp): checks the text, loads the tokenizer, encodes, adds what
// the post-processor adds, prints.
#include "cli/tokenize_command.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <vector>

#include "io/npy.hpp"  // escaped_for_message
#include "io/tokenizer.hpp"
#include "io/tokenizer_folder.hpp"
#include "lesson_kit/options.hpp"  // UsageError
#include "report/manifest.hpp"     // json_string

namespace attn::cli {

std::vector<TokenId> parse_ids(const std::string& text) {
  std::vector<TokenId> ids;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--ids expects whole numbers separated by commas", "--ids", "ids such as 1,2,3",
                       "'" + escaped_for_message(item, 40, true) + "'");
    ids.push_back(static_cast<TokenId>(std::stoul(item)));
    at = comma + 1;
  }
  return ids;
}

namespace {

[[noreturn]] void too_long(const std::string& option, std::uintmax_t bytes) {
  throw UsageError(option + " is too long", option, "at most " + std::to_string(kTokenizeMaxTextBytes) + " bytes (1 MiB)",
                   std::to_string(bytes) + " bytes");
}

}  // namespace

// --text-file: its size is checked before it is read; standard input is read up to one byte past
// the limit.
std::string read_text_file(const std::string& path) {
  const std::string shown = escaped_for_message(path, 200);
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    if (const std::string bad = not_a_file(path); !bad.empty())
      throw UsageError("cannot read --text-file", "--text-file", "a text file", shown + ": " + bad);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kTokenizeMaxTextBytes) too_long("--text-file", size);
    file.open(path, std::ios::binary);
    in = &file;
  }
  std::string text(kTokenizeMaxTextBytes + 1, '\0');
  in->read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in->gcount()));
  if (text.size() > kTokenizeMaxTextBytes) too_long("--text-file", text.size());
  return text;
}

void check_text(const std::string& text, const std::string& option) {
  if (text.size() > kTokenizeMaxTextBytes) too_long(option, text.size());
  if (const auto bad = invalid_utf8_at(text)) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
    throw UsageError(option + " is not valid UTF-8", option, "UTF-8 text", std::string("byte ") + byte + " at offset " + std::to_string(*bad));
  }
}

namespace {

// What the post-processor puts before and after the text's tokens, after --bos, --no-bos, --no-special.
PostTemplate additions(const TokenizeOptions& o, const Tokenizer& tok, const TokenizerFolder& folder) {
  if (o.no_special) return {};
  PostTemplate t = tok.post_template();
  if (o.bos == TokenizeOptions::Bos::Drop) t.before.clear();
  if (o.bos == TokenizeOptions::Bos::Add && t.before.empty()) {
    std::optional<TokenId> bos;
    if (folder.bos_token) bos = tok.id_of(*folder.bos_token);
    if (!bos)
      throw UsageError("--bos: this tokenizer names no BOS token", "--bos",
                       "a TemplateProcessing post-processor or tokenizer_config.json's bos_token",
                       folder.bos_token ? "'" + escaped_for_message(*folder.bos_token, 60, true) + "', not a token" : "neither");
    t.before.push_back(*bos);
  }
  return t;
}

}  // namespace

EncodedPrompt encode_prompt(const TokenizeOptions& o, const Tokenizer& tok, const TokenizerFolder& folder,
                            const std::string& option) {
  EncodedPrompt out;
  const PostTemplate t = additions(o, tok, folder);
  const std::size_t extra = t.before.size() + t.after.size();
  std::size_t room = std::numeric_limits<std::size_t>::max();
  if (folder.context) {
    if (*folder.context < extra)
      throw UsageError("the model's context cannot hold the added tokens", option, "at most " + std::to_string(*folder.context) + " tokens", std::to_string(extra));
    room = *folder.context - extra;
  }
  std::vector<TokenId> body;
  try {
    body = tok.encode(*o.text, room);
  } catch (const Tokenizer::TooMany&) {
    throw UsageError("the text has more tokens than the model's context", option,
                     "at most " + std::to_string(*folder.context) + " tokens (" + folder.context_from + ")",
                     "more than " + std::to_string(*folder.context));
  }
  out.ids = t.before;
  out.ids.insert(out.ids.end(), body.begin(), body.end());
  out.ids.insert(out.ids.end(), t.after.begin(), t.after.end());
  out.added.assign(out.ids.size(), false);
  for (std::size_t i = 0; i < t.before.size(); ++i) out.added[i] = true;
  for (std::size_t i = 0; i < t.after.size(); ++i) out.added[out.ids.size() - 1 - i] = true;
  return out;
}

namespace {

// Decoded text for the terminal: UTF-8 as it is, but a quote, a backslash and control characters
// (C0, DEL, C1: the ones a terminal might act on) written as escapes.
std::string shown(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (c == '\\' || c == '"') out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7F || c1) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c1 ? static_cast<unsigned char>(text[++i]) : c);
      out += buf;
    } else out += static_cast<char>(c);
  }
  return out;
}

void print_table(const Tokenizer& tok, const std::vector<TokenId>& ids, const std::vector<bool>& added, std::ostream& out) {
  out << "  pos        id  token\n";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    char head[48];
    std::snprintf(head, sizeof head, "%5zu  %8u  ", i, ids[i]);
    out << head << '"' << tok.readable(ids[i]) << '"' << (added[i] ? "   (added by the post-processor)" : "") << "\n";
  }
}

void print_json(const Tokenizer& tok, const std::vector<TokenId>& ids, const std::vector<bool>& added, std::ostream& out) {
  std::string ids_s, tokens_s, pieces_s, added_s;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string sep = i ? ", " : "";
    ids_s += sep + std::to_string(ids[i]);
    tokens_s += sep + report::json_string(tok.token(ids[i]).value_or(""));
    pieces_s += sep + report::json_string(tok.readable(ids[i]));
    if (added[i]) added_s += (added_s.empty() ? "" : ", ") + std::to_string(i);
  }
  out << "{\"ids\": [" << ids_s << "], \"tokens\": [" << tokens_s << "], \"pieces\": [" << pieces_s << "], \"added\": ["
      << added_s << "], \"text\": " << report::json_string(tok.decode(ids)) << "}\n";
}

}  // namespace

int run_tokenize(const TokenizeOptions& given, std::ostream& out) {
  TokenizeOptions o = given;
  const int sources = o.text.has_value() + o.text_file.has_value() + o.ids.has_value();
  if (sources != 1)
    throw UsageError("attn tokenize needs one of --text, --text-file, --ids", "--text", "one of them", sources ? "more" : "none");
  const std::string option = o.text_file ? "--text-file" : "--text";
  if (o.text_file) o.text = read_text_file(*o.text_file);
  if (o.ids && (o.no_special || o.bos != TokenizeOptions::Bos::AsTemplate))
    throw UsageError("--ids decodes the ids as given", o.no_special ? "--no-special" : "--bos", "no post-processor option with --ids", "one");
  if (o.no_special && o.bos != TokenizeOptions::Bos::AsTemplate)
    throw UsageError("--no-special already leaves out every added token", "--no-special", "--no-special or --bos/--no-bos", "both");
  std::vector<TokenId> parsed_ids;
  if (o.text) check_text(*o.text, option);  // limits before any work
  else parsed_ids = parse_ids(*o.ids);

  try {
    const TokenizerFolder folder = find_tokenizer(o.path);
    const Tokenizer tok = Tokenizer::load(folder.tokenizer_json);
    std::vector<TokenId> ids;
    std::vector<bool> added;
    if (o.ids) {
      for (TokenId id : parsed_ids)
        if (!tok.token(id))
          throw UsageError("--ids names an id the tokenizer does not have", "--ids",
                           "ids of " + escaped_for_message(folder.tokenizer_json, 200), std::to_string(id));
      ids = parsed_ids;
      added.assign(ids.size(), false);
    } else {
      const auto prompt = encode_prompt(o, tok, folder, option);
      ids = prompt.ids;
      added = prompt.added;
    }
    if (o.json) {
      print_json(tok, ids, added, out);
      return 0;
    }
    out << "tokenizer: " << escaped_for_message(folder.tokenizer_json, 200) << " (" << tok.vocab_size() << " tokens, "
        << tok.added_count() << " of them added tokens)\n";
    print_table(tok, ids, added, out);
    std::size_t n_added = 0;
    for (bool a : added) n_added += a;
    out << ids.size() << " tokens";
    if (o.text) out << " (" << ids.size() - n_added << " from the text, " << n_added << " added by the post-processor)";
    if (folder.context) out << "; context " << *folder.context << " (" << folder.context_from << ")";
    out << "\ndecoded: \"" << shown(tok.decode(ids)) << "\"\n";
    return 0;
  } catch (const TokenizerError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace attn::cli
