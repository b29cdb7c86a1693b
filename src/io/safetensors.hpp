// Strict safetensors reading: the header checked against the file before anything is allocated,
// tensor data read with pread into the caller's buffers and converted to float32.
//
// Layout (Hugging Face's safetensors): 8 bytes, little-endian u64 N; N bytes of UTF-8 JSON
// {"name": {"dtype": "BF16", "shape": [..], "data_offsets": [b, e]}, "__metadata__": {..}};
// then the data, offsets relative to its start. Stricter than the reference parser: duplicate
// names are refused, and so are shape entries that are not whole numbers (docs/checkpoints.md).
//
// No mmap: pages of a mapped file count in the process's resident memory once touched, and a
// model's weights would then look like (and on a small machine be) memory the reader holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// A refusal of a checkpoint's file: the message is one line, "<what> (<file>: <expected> vs <got>)".
struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "<what> (<where>: <expected> vs <got>)", the project's error shape.
[[noreturn]] void checkpoint_fail(const std::string& what, const std::string& where, const std::string& expected,
                                  const std::string& got);

// The dtypes safetensors defines. Only F32, F16 and BF16 convert to float32; the others are known
// so that the offsets can be checked and a refusal can name them.
enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 };

// "BF16"; the bytes one value takes (2 for BF16).
const char* dtype_name(DType t);
std::size_t dtype_size(DType t);
bool dtype_converts(DType t);  // F32, F16, BF16

// The reference parser's limit on the header, which we share: no real header comes near it.
constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::uint64_t count = 0;  // values: the product of shape
  std::uint64_t begin = 0;  // byte offsets into the data section, [begin, end)
  std::uint64_t end = 0;
  std::uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::string path;                // for messages
  std::uint64_t file_size = 0;
  std::uint64_t data_start = 0;    // 8 + N
  std::vector<TensorInfo> tensors; // sorted by begin offset (the order of the data)
  std::map<std::string, std::string> metadata;
  std::uint64_t data_bytes() const { return file_size - data_start; }
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
};

// The header of a file whose first bytes are `prefix` (at least 8 + N of them, or the whole file
// when shorter) and whose size is `file_size`. Throws CheckpointError naming `path`.
SafetensorsHeader parse_safetensors_header(const std::string& prefix, std::uint64_t file_size,
                                           const std::string& path);

// One value of each kind, exactly: bf16 is the high half of a float32; f16 is IEEE binary16
// (subnormals, infinities and NaN kept).
float bf16_to_float(std::uint16_t bits);
float f16_to_float(std::uint16_t bits);
// `count` values of `dtype` (F32, F16 or BF16) at `src`, little-endian and of any alignment, into dst.
void convert_to_f32(DType dtype, const unsigned char* src, std::size_t count, float* dst);

// An open safetensors file: its header read and checked, then tensors read on demand.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // reads at most 8 + kSafetensorsMaxHeader bytes
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;

  const SafetensorsHeader& header() const { return header_; }
  // Values [first, first + count) of tensor `t` (C order) as float32 into out[0 .. count).
  // Reads in blocks, so a layer can be streamed without holding its stored bytes as well.
  void read_f32(const TensorInfo& t, std::uint64_t first, std::uint64_t count, float* out) const;
  // The whole tensor.
  std::vector<float> read_f32(const TensorInfo& t) const;

 private:
  void pread_all(void* dst, std::uint64_t size, std::uint64_t offset) const;
  int fd_ = -1;
  SafetensorsHeader header_;
};

}  // namespace attn
