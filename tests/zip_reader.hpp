// A zip reader for the tests, written apart from the product's writer (src/report/zip_store.*):
// it reads what --npz writes (stored members, zip32, no comment) and throws on anything else, so
// that a test passing through it means the archive is well formed, not that two copies of one
// misunderstanding agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::testing {

// CRC-32 one bit at a time, straight from the definition (reflected polynomial 0xEDB88320).
inline std::uint32_t bitwise_crc32(const std::string& bytes) {
  std::uint32_t r = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    r ^= c;
    for (int k = 0; k < 8; ++k) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1u)));
  }
  return ~r;
}

inline std::uint32_t le(const std::string& z, std::size_t at, int bytes) {
  if (at + static_cast<std::size_t>(bytes) > z.size()) throw std::runtime_error("field past the end at " + std::to_string(at));
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(z[at + static_cast<std::size_t>(i)]);
  return v;
}

struct Member {
  std::string name, bytes;
};

// Reads a stored-only zip32 archive, or throws saying what is wrong with it: the end record (no
// comment, so the last 22 bytes), the central directory it points to, and for each entry its local
// header, whose fields must agree with the entry's; members must follow one another with no gap
// and the directory must start right after the last one.
inline std::vector<Member> read_zip(const std::string& z) {
  auto expect = [](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
  };
  expect(z.size() >= 22, "shorter than an end record");
  const std::size_t end = z.size() - 22;
  expect(le(z, end, 4) == 0x06054b50u, "no end record in the last 22 bytes");
  expect(le(z, end + 4, 2) == 0 && le(z, end + 6, 2) == 0, "multi-disk");
  const std::uint32_t count = le(z, end + 10, 2);
  expect(le(z, end + 8, 2) == count, "entry counts disagree");
  const std::uint32_t cd_size = le(z, end + 12, 4), cd_at = le(z, end + 16, 4);
  expect(le(z, end + 20, 2) == 0, "a comment");
  expect(std::size_t{cd_at} + cd_size == end, "the central directory does not end at the end record");
  std::vector<Member> members;
  std::size_t at = cd_at, next_local = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    expect(le(z, at, 4) == 0x02014b50u, "bad central entry signature");
    expect(le(z, at + 10, 2) == 0, "a member not stored");
    const std::uint32_t crc = le(z, at + 16, 4), csize = le(z, at + 20, 4), size = le(z, at + 24, 4);
    const std::uint32_t name_len = le(z, at + 28, 2), extra = le(z, at + 30, 2), comment = le(z, at + 32, 2);
    const std::uint32_t local = le(z, at + 42, 4);
    expect(csize == size, "compressed and plain sizes differ for a stored member");
    const std::string name = z.substr(at + 46, name_len);
    at += 46 + name_len + extra + comment;
    expect(local == next_local, name + ": local header not where the previous member ended");
    expect(le(z, local, 4) == 0x04034b50u, name + ": bad local header signature");
    expect(le(z, local + 6, 2) == 0, name + ": flags set (a data descriptor?)");
    expect(le(z, local + 8, 2) == 0, name + ": local header not stored");
    expect(le(z, local + 14, 4) == crc && le(z, local + 18, 4) == size && le(z, local + 22, 4) == size,
           name + ": local header disagrees with the central directory");
    const std::uint32_t lname = le(z, local + 26, 2), lextra = le(z, local + 28, 2);
    expect(z.substr(local + 30, lname) == name, name + ": local name differs");
    const std::size_t data = local + 30 + lname + lextra;
    expect(data + size <= cd_at, name + ": data runs into the central directory");
    Member m{name, z.substr(data, size)};
    expect(bitwise_crc32(m.bytes) == crc, name + ": CRC-32 does not match the data");
    next_local = data + size;
    members.push_back(std::move(m));
  }
  expect(at == std::size_t{cd_at} + cd_size, "central directory size disagrees with its entries");
  expect(next_local == cd_at, "bytes between the last member and the central directory");
  return members;
}

}  // namespace attn::testing
