// Strict safetensors reading (safetensors.hpp): the header checked whole before any data is read.
#include "io/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/json.hpp"
#include "io/npy.hpp"  // escaped_for_message, not_a_file

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so is this reader");

namespace attn {

void checkpoint_fail(const std::string& what, const std::string& where, const std::string& expected,
                     const std::string& got) {
  throw CheckpointError(what + " (" + where + ": " + expected + " vs " + got + ")");
}

namespace {

struct DTypeRow {
  DType type;
  const char* name;
  std::size_t size;
};
constexpr DTypeRow kDTypes[] = {
    {DType::F32, "F32", 4},   {DType::F16, "F16", 2},         {DType::BF16, "BF16", 2},
    {DType::F64, "F64", 8},   {DType::I64, "I64", 8},         {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},           {DType::U64, "U64", 8},
    {DType::U32, "U32", 4},   {DType::U16, "U16", 2},         {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1}, {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1}};

const DTypeRow& row(DType t) {
  for (const auto& r : kDTypes)
    if (r.type == t) return r;
  return kDTypes[0];
}

// "'name'", escaped: tensor names come from the file.
std::string quoted(const std::string& name) { return "'" + escaped_for_message(name, 80, true) + "'"; }

// a * b, or false when it does not fit in 64 bits.
bool mul_fits(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

// Longest shape accepted: real tensors have at most 4 axes.
constexpr std::size_t kMaxRank = 16;

DType parse_dtype(const nlohmann::json& v, const std::string& tensor, const std::string& path) {
  if (!v.is_string()) checkpoint_fail("tensor " + tensor + " has a dtype that is not a string", path, "a dtype name such as \"BF16\"", v.type_name());
  const std::string s = v.get<std::string>();
  for (const auto& r : kDTypes)
    if (s == r.name) return r.type;
  checkpoint_fail("tensor " + tensor + " has an unknown dtype", path, "one of safetensors' dtypes (F32, F16, BF16, ...)",
                  "\"" + escaped_for_message(s, 24) + "\"");
}

void parse_shape(const nlohmann::json& v, const std::string& tensor, const std::string& path, TensorInfo& t) {
  if (!v.is_array()) checkpoint_fail("tensor " + tensor + " has a shape that is not a list", path, "a list of whole numbers", v.type_name());
  if (v.size() > kMaxRank)
    checkpoint_fail("tensor " + tensor + " has too many axes", path, "at most " + std::to_string(kMaxRank), std::to_string(v.size()));
  t.count = 1;
  for (const auto& d : v) {
    // is_number_unsigned: nlohmann stores a non-negative whole number as unsigned; -1 and 2.5 are not.
    if (!d.is_number_unsigned())
      checkpoint_fail("tensor " + tensor + " has a shape entry that is not a non-negative whole number", path,
                      "a whole number >= 0", escaped_for_message(d.dump(), 40));
    const auto n = d.get<std::uint64_t>();
    t.shape.push_back(static_cast<std::size_t>(n));
    if (!mul_fits(t.count, n, t.count))
      checkpoint_fail("tensor " + tensor + " has a shape too large to count", path, "fewer than 2^64 values",
                      escaped_for_message(v.dump(), 80));
  }
}

void parse_offsets(const nlohmann::json& v, const std::string& tensor, const std::string& path, TensorInfo& t) {
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() || !v[1].is_number_unsigned())
    checkpoint_fail("tensor " + tensor + " has malformed data_offsets", path, "[begin, end], whole numbers",
                    escaped_for_message(v.dump(), 60));
  t.begin = v[0].get<std::uint64_t>();
  t.end = v[1].get<std::uint64_t>();
  if (t.end < t.begin)
    checkpoint_fail("tensor " + tensor + " ends before it begins", path, "begin <= end",
                    std::to_string(t.begin) + " > " + std::to_string(t.end));
}

TensorInfo parse_entry(const std::string& name, const nlohmann::json& v, const std::string& path) {
  const std::string tensor = quoted(name);
  if (!v.is_object()) checkpoint_fail("tensor " + tensor + " is not described by an object", path, "{dtype, shape, data_offsets}", v.type_name());
  for (const auto& [key, _] : v.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      checkpoint_fail("tensor " + tensor + " has an unknown field", path, "dtype, shape, data_offsets", quoted(key));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!v.contains(key)) checkpoint_fail("tensor " + tensor + " has no " + key, path, "dtype, shape, data_offsets", std::string("no ") + key);
  TensorInfo t;
  t.name = name;
  t.dtype = parse_dtype(v["dtype"], tensor, path);
  parse_shape(v["shape"], tensor, path, t);
  parse_offsets(v["data_offsets"], tensor, path, t);
  std::uint64_t bytes = 0;
  if (!mul_fits(t.count, dtype_size(t.dtype), bytes) || bytes != t.bytes())
    checkpoint_fail("tensor " + tensor + " has a byte size that disagrees with its shape and dtype", path,
                    shape_str(t.shape) + " x " + std::to_string(dtype_size(t.dtype)) + " bytes (" + dtype_name(t.dtype) + ")",
                    std::to_string(t.bytes()) + " bytes");
  return t;
}

void parse_metadata(const nlohmann::json& v, const std::string& path, SafetensorsHeader& h) {
  if (!v.is_object()) checkpoint_fail("__metadata__ is not an object", path, "an object of strings", v.type_name());
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string())
      checkpoint_fail("__metadata__ holds a value that is not a string", path, "strings", quoted(key) + ": " + value.type_name());
    h.metadata[key] = value.get<std::string>();
  }
}

// The tensors, sorted by offset, must tile the data exactly: from 0, each beginning where the last
// ended, the last ending at the end of the file.
void check_tiling(const SafetensorsHeader& h) {
  const std::uint64_t size = h.data_bytes();
  for (const auto& t : h.tensors)
    if (t.end > size)
      checkpoint_fail("tensor " + quoted(t.name) + " runs past the end of the file", h.path,
                      "data_offsets within " + std::to_string(size) + " bytes of data", "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]");
  std::uint64_t at = 0;
  const TensorInfo* last = nullptr;
  for (const auto& t : h.tensors) {
    if (t.begin < at)
      checkpoint_fail("tensors " + quoted(last->name) + " and " + quoted(t.name) + " overlap", h.path,
                      "the second beginning at byte " + std::to_string(at), std::to_string(t.begin));
    if (t.begin > at)
      checkpoint_fail("a gap of " + std::to_string(t.begin - at) + " bytes before tensor " + quoted(t.name), h.path,
                      "it beginning at byte " + std::to_string(at), std::to_string(t.begin));
    at = t.end;
    last = &t;
  }
  if (at != size)
    checkpoint_fail("bytes after the last tensor", h.path, "data ending at byte " + std::to_string(at),
                    std::to_string(size) + " bytes of data");
}

}  // namespace

const char* dtype_name(DType t) { return row(t).name; }
std::size_t dtype_size(DType t) { return row(t).size; }
bool dtype_converts(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

const TensorInfo* SafetensorsHeader::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

SafetensorsHeader parse_safetensors_header(const std::string& prefix, std::uint64_t file_size, const std::string& path) {
  SafetensorsHeader h;
  h.path = path;
  h.file_size = file_size;
  if (file_size < 8 || prefix.size() < 8)
    checkpoint_fail("file is too short for a safetensors header", path, "at least 8 bytes", std::to_string(file_size) + " bytes");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
  if (n > kSafetensorsMaxHeader)
    checkpoint_fail("safetensors header length is too large", path, "at most " + std::to_string(kSafetensorsMaxHeader) + " bytes",
                    std::to_string(n));
  if (n > file_size - 8)
    checkpoint_fail("safetensors header length runs past the end of the file", path,
                    "at most " + std::to_string(file_size - 8) + " bytes", std::to_string(n));
  if (prefix.size() < 8 + n)
    checkpoint_fail("file is shorter than its header", path, std::to_string(8 + n) + " bytes", std::to_string(prefix.size()) + " read");
  h.data_start = 8 + n;
  nlohmann::json doc;
  try {
    doc = parse_json_strict(prefix.substr(8, n), path);
  } catch (const JsonError& e) {
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    checkpoint_fail("safetensors header is not valid JSON", path, "UTF-8 JSON, each name once", why);
  }
  if (!doc.is_object()) checkpoint_fail("safetensors header is not a JSON object", path, "an object", doc.type_name());
  for (const auto& [name, value] : doc.items()) {
    if (name == "__metadata__") parse_metadata(value, path, h);
    else h.tensors.push_back(parse_entry(name, value, path));
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  check_tiling(h);
  return h;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float32 (mant < 2^10, a power-of-two scale).
    const float magnitude = static_cast<float>(mant) * 0x1p-24f;
    std::memcpy(&bits, &magnitude, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, or NaN with its payload
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);  // rebias 15 -> 127
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void convert_to_f32(DType dtype, const unsigned char* __restrict src, std::size_t count, float* __restrict dst) {
  // An empty tensor (a shape with a 0) may come with null buffers (an empty vector's data()),
  // which memcpy must not be given even for 0 bytes.
  if (count == 0) return;
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, count * 4);
      return;
    case DType::BF16:
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);  // any alignment
        const std::uint32_t wide = static_cast<std::uint32_t>(v) << 16;
        std::memcpy(dst + i, &wide, 4);
      }
      return;
    case DType::F16:
      for (std::size_t i = 0; i < count; ++i) {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        dst[i] = f16_to_float(v);
      }
      return;
    default:
      throw CheckpointError(std::string("internal: convert_to_f32 called for ") + dtype_name(dtype));
  }
}

SafetensorsFile::SafetensorsFile(const std::string& path) {
  if (const std::string problem = not_a_file(path); !problem.empty())
    checkpoint_fail("cannot read a safetensors file", path, "a regular file", problem);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) checkpoint_fail("cannot open a safetensors file", path, "a readable file", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) checkpoint_fail("cannot tell a file's size", path, "fstat", std::strerror(errno));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  header_.path = path;
  header_.file_size = size;
  // The length first, then at most the header it declares: never more than the limit.
  std::string prefix(static_cast<std::size_t>(std::min<std::uint64_t>(size, 8)), '\0');
  pread_all(prefix.data(), prefix.size(), 0);
  if (prefix.size() == 8) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
    if (n <= kSafetensorsMaxHeader && n <= size - 8) {
      prefix.resize(static_cast<std::size_t>(8 + n));
      pread_all(prefix.data() + 8, n, 8);
    }
  }
  header_ = parse_safetensors_header(prefix, size, path);
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept : fd_(other.fd_), header_(std::move(other.header_)) {
  other.fd_ = -1;
}

void SafetensorsFile::pread_all(void* dst, std::uint64_t size, std::uint64_t offset) const {
  auto* p = static_cast<char*>(dst);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, p, static_cast<std::size_t>(std::min<std::uint64_t>(size, 1u << 30)), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) checkpoint_fail("read failed", header_.path, "bytes at offset " + std::to_string(offset), std::strerror(errno));
    if (got == 0)
      checkpoint_fail("file ended early (changed while read?)", header_.path, std::to_string(size) + " more bytes at offset " + std::to_string(offset),
                      "end of file");
    p += got;
    size -= static_cast<std::uint64_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
}

void SafetensorsFile::read_f32(const TensorInfo& t, std::uint64_t first, std::uint64_t count, float* out) const {
  if (!dtype_converts(t.dtype))
    checkpoint_fail("tensor " + quoted(t.name) + " has a dtype attn does not convert", header_.path, "F32, F16 or BF16", dtype_name(t.dtype));
  if (first > t.count || count > t.count - first)
    throw CheckpointError("internal: read_f32 past the end of " + t.name);
  const std::size_t item = dtype_size(t.dtype);
  const std::uint64_t at = header_.data_start + t.begin + first * item;
  if (t.dtype == DType::F32) {  // stored as float32 already: straight into the caller's buffer
    pread_all(out, count * 4, at);
    return;
  }
  // 16-bit values: a block at a time through a small buffer that stays in cache.
  constexpr std::uint64_t kBlock = 1u << 16;  // values per read (128 KiB)
  std::vector<unsigned char> raw(static_cast<std::size_t>(std::min(count, kBlock) * item));
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(kBlock, count - done);
    pread_all(raw.data(), n * item, at + done * item);
    convert_to_f32(t.dtype, raw.data(), static_cast<std::size_t>(n), out + done);
    done += n;
  }
}

std::vector<float> SafetensorsFile::read_f32(const TensorInfo& t) const {
  std::vector<float> values(static_cast<std::size_t>(t.count));  // (prod(shape),)
  read_f32(t, 0, t.count, values.data());
  return values;
}

}  // namespace attn
