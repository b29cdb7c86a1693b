#include "report/zip_store.hpp"

#include <array>
#include <cstdio>
#include <ostream>
#include <stdexcept>

namespace attn::report {

namespace {

constexpr std::uint64_t kLocalHeader = 30, kCentralEntry = 46, kEndRecord = 22;  // bytes, names apart
constexpr std::uint16_t kVersionNeeded = 10;  // 1.0: stored members, no zip64, nothing newer
// Made by 2.0 on Unix (high byte 3), so that unzip applies the permission bits below.
constexpr std::uint16_t kVersionMadeBy = (3u << 8) | 20u;
constexpr std::uint32_t kRegularFile0644 = 0100644u << 16;  // st_mode in the external attributes' high half
constexpr std::uint16_t kDosDate1980 = (0u << 9) | (1u << 5) | 1u;  // year-1980, month, day

// The 256-entry table of the byte-at-a-time CRC: entry b is the CRC register after shifting b
// through eight times (what the bitwise loop would do for that byte).
std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t r = b;
    for (int k = 0; k < 8; ++k) r = (r & 1u) ? (r >> 1) ^ 0xEDB88320u : r >> 1;
    table[b] = r;
  }
  return table;
}

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}

void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

std::uint32_t crc32(const char* data, std::size_t n, std::uint32_t crc) {
  static const std::array<std::uint32_t, 256> table = make_crc_table();
  std::uint32_t r = ~crc;
  for (std::size_t i = 0; i < n; ++i) r = table[(r ^ static_cast<unsigned char>(data[i])) & 0xFFu] ^ (r >> 8);
  return ~r;
}

std::uint64_t zip_store_size(const std::vector<ZipMemberSize>& members) {
  std::uint64_t total = kEndRecord;
  for (const auto& [name, size] : members) total += kLocalHeader + kCentralEntry + 2 * name.size() + size;
  return total;
}

void check_zip_store(const std::vector<ZipMemberSize>& members) {
  if (members.size() > kZip32MaxMembers)
    throw std::runtime_error("the archive would hold " + std::to_string(members.size()) +
                             " files, past zip32's limit of " + std::to_string(kZip32MaxMembers));
  for (const auto& m : members)
    if (m.first.size() > 0xFFFFu) throw std::runtime_error("a member's name is longer than zip's 65535 bytes");
  const std::uint64_t total = zip_store_size(members);
  if (total > kZip32MaxBytes)
    throw std::runtime_error("the archive would be " + std::to_string(total) + " bytes (" + gib(total) +
                             "), past zip32's 4 GiB limit (--dump DIR writes the same files without one)");
}

void ZipStoreWriter::add(const std::string& name, const std::string& bytes) {
  // check_zip_store ran on the whole list first; this only guards the fields from wrapping.
  if (written_ + kLocalHeader + name.size() + bytes.size() > kZip32MaxBytes || entries_.size() >= kZip32MaxMembers ||
      name.size() > 0xFFFFu)
    throw std::logic_error("zip member " + name + " past zip32's limits (check_zip_store first)");
  const Entry e{name, crc32(bytes.data(), bytes.size()), static_cast<std::uint32_t>(bytes.size()),
                static_cast<std::uint32_t>(written_)};
  std::string h;
  put32(h, 0x04034b50u);  // local file header signature "PK\3\4"
  put16(h, kVersionNeeded);
  put16(h, 0);             // flags: none (sizes and CRC are known, so no data descriptor)
  put16(h, 0);             // method 0: stored
  put16(h, 0);             // time 00:00:00
  put16(h, kDosDate1980);  // date 1980-01-01
  put32(h, e.crc);
  put32(h, e.size);  // compressed size: stored, so the same
  put32(h, e.size);
  put16(h, static_cast<std::uint32_t>(name.size()));
  put16(h, 0);  // no extra field
  h += name;
  out_.write(h.data(), static_cast<std::streamsize>(h.size()));
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  written_ += h.size() + bytes.size();
  entries_.push_back(e);
}

void ZipStoreWriter::finish() {
  std::string cd;
  for (const Entry& e : entries_) {
    put32(cd, 0x02014b50u);  // central directory entry signature "PK\1\2"
    put16(cd, kVersionMadeBy);
    put16(cd, kVersionNeeded);
    put16(cd, 0);  // flags
    put16(cd, 0);  // stored
    put16(cd, 0);
    put16(cd, kDosDate1980);
    put32(cd, e.crc);
    put32(cd, e.size);
    put32(cd, e.size);
    put16(cd, static_cast<std::uint32_t>(e.name.size()));
    put16(cd, 0);  // extra field
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk number
    put16(cd, 0);  // internal attributes
    put32(cd, kRegularFile0644);
    put32(cd, e.offset);  // where its local header starts
    cd += e.name;
  }
  if (written_ + cd.size() + kEndRecord > kZip32MaxBytes)
    throw std::logic_error("zip central directory past zip32's limits (check_zip_store first)");
  std::string end;
  put32(end, 0x06054b50u);  // end of central directory signature "PK\5\6"
  put16(end, 0);            // this disk
  put16(end, 0);            // the disk the directory starts on
  put16(end, static_cast<std::uint32_t>(entries_.size()));  // entries on this disk
  put16(end, static_cast<std::uint32_t>(entries_.size()));  // entries in all
  put32(end, static_cast<std::uint32_t>(cd.size()));
  put32(end, static_cast<std::uint32_t>(written_));  // the directory's offset
  put16(end, 0);  // no comment
  out_.write(cd.data(), static_cast<std::streamsize>(cd.size()));
  out_.write(end.data(), static_cast<std::streamsize>(end.size()));
  written_ += cd.size() + end.size();
}

}  // namespace attn::report
