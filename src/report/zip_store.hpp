// A zip archive whose members are stored as they are (method 0, no compression), as `--npz`
// writes it: numpy.load reads such an archive as an NpzFile, and storing needs no zlib.
// Only the classic (zip32) format: every size and offset is a 32-bit field, so the whole archive
// must stay under 4 GiB and hold fewer than 65535 members (zip64 is not written; check_zip_store
// refuses an archive that would need it before a byte is written).
//
// The layout (APPNOTE.TXT, sections 4.3.7, 4.3.12, 4.3.16), little-endian throughout:
//   per member: local header (30 bytes + name), then the member's bytes
//   per member: central directory entry (46 bytes + name)
//   end of central directory record (22 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace attn::report {

// CRC-32 as zip (and gzip, PNG) use it: reflected polynomial 0xEDB88320, initial value and final
// xor 0xFFFFFFFF. `crc` continues a previous call's result over more bytes.
std::uint32_t crc32(const char* data, std::size_t n, std::uint32_t crc = 0);

// A member as the size check sees it: its name and its length in bytes.
using ZipMemberSize = std::pair<std::string, std::uint64_t>;

// The archive's length in bytes, headers included, for these members.
std::uint64_t zip_store_size(const std::vector<ZipMemberSize>& members);

// The largest archive zip32 can describe: its fields hold offsets up to 0xFFFFFFFE (0xFFFFFFFF
// tells a reader to look for zip64 fields), and 0xFFFF members means the same for the count.
inline constexpr std::uint64_t kZip32MaxBytes = 0xFFFFFFFEu;
inline constexpr std::size_t kZip32MaxMembers = 0xFFFEu;

// Throws std::runtime_error saying which limit the archive would pass, and by how much.
void check_zip_store(const std::vector<ZipMemberSize>& members);

// Writes the archive to `out` member by member (each member's bytes are needed whole, for its
// CRC before its header); finish() writes the central directory. Members keep the order added.
// Every member gets the same timestamp (1980-01-01 00:00, the format's earliest), so that one run
// always gives the same bytes: the archive is a function of the lesson's numbers alone.
class ZipStoreWriter {
 public:
  explicit ZipStoreWriter(std::ostream& out) : out_(out) {}
  void add(const std::string& name, const std::string& bytes);
  void finish();

 private:
  struct Entry {
    std::string name;
    std::uint32_t crc, size, offset;
  };
  std::ostream& out_;
  std::vector<Entry> entries_;
  std::uint64_t written_ = 0;
};

}  // namespace attn::report
