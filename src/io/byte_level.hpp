// GPT-2's byte-to-unicode table: how byte-level BPE tokenizers (GPT-2, Llama 3, Qwen) write every
// byte as a printable character, so that a vocabulary of strings can hold any byte sequence.
// Bytes 33-126, 161-172 and 174-255 stand for themselves; the other 68 (controls, space, 127-160,
// 173) become U+0100, U+0101, ... in byte order, which is why a space shows as 'Ġ' (U+0120) and a
// newline as 'Ċ' (U+010A).
#pragma once

#include <string>
#include <string_view>

namespace attn::byte_level {

// The UTF-8 of the character that stands for byte `b`.
const std::string& char_of_byte(unsigned char b);

// Every byte of `bytes` written as its character (what the ByteLevel pre-tokenizer does).
std::string encode(std::string_view bytes);

// The bytes behind a byte-level string. False (and `bytes` unspecified) when a character of
// `text` is not in the table: an added token written verbatim, such as "日本" (an ASCII one like
// "<|endoftext|>" decodes to itself).
bool decode(std::string_view text, std::string& bytes);

}  // namespace attn::byte_level
