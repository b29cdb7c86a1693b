// The strict .npy reader and the float32 writer. Learners load their own arrays and the npy sink
// writes files NumPy must open, so: what we write is byte for byte what NumPy writes, what
// NumPy writes (float64, Fortran order, 1-D, 0-d, version 2.0) loads with the right values in
// the right places, and every broken file is refused with NpyError naming the problem, never
// loaded as garbage or answered with bad_alloc (docs/architecture.md, trap 7).
//
// tests/data/npy/ was written by NumPy 1.24 (/usr/bin/python3), see tests/data/README.md.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "support.hpp"

using attn::NpyArray;
using attn::NpyError;
using attn::Shape;

namespace {

std::string npy_path(const std::string& name) { return attn::test::data_path("npy/" + name); }

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A version 1.0 file with the header dict given verbatim, padded as NumPy pads, then `data`.
std::string npy_with_header(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

// The NpyError message `parse_npy` gives for `bytes`; fails the test if it accepts them or
// throws anything else (bad_alloc included).
std::string refusal(const std::string& bytes, const std::string& path = "broken.npy") {
  try {
    attn::parse_npy(bytes, path);
  } catch (const NpyError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected NpyError, got another exception: ", std::string(e.what()));
    return "";
  }
  FAIL("expected NpyError, but the bytes were accepted");
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const std::vector<float> kSix = {0.5f, -1.0f, 2.25f, 1e-3f, 3.0e7f, -0.0f};

}  // namespace

// ------------------------------------------------------------------------------- round trip

TEST_CASE("encode_npy then parse_npy gives back the same shape and bits") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> odd = {nan, -inf, inf, -0.0f, std::numeric_limits<float>::denorm_min(), 1.0f / 3.0f};
  for (const Shape& shape : {Shape{6}, Shape{2, 3}, Shape{3, 1, 2}, Shape{1, 2, 3, 1}}) {
    INFO(attn::shape_str(shape));
    const NpyArray back = attn::parse_npy(attn::encode_npy(shape, odd.data()), "round.npy");
    CHECK(back.shape == shape);
    CHECK(same_bits(back.values, odd));
  }
  const float one = 42.0f;
  const NpyArray scalar = attn::parse_npy(attn::encode_npy({}, &one), "scalar.npy");
  CHECK(scalar.shape.empty());
  CHECK(scalar.values == std::vector<float>{42.0f});
  const NpyArray empty = attn::parse_npy(attn::encode_npy({0, 3}, nullptr), "empty.npy");
  CHECK(empty.shape == Shape{0, 3});
  CHECK(empty.values.empty());
}

TEST_CASE("encode_npy writes the same bytes as numpy.save") {
  // np.save(..., np.array([[0.5, -1.0, 2.25], [1e-3, 3.0e7, -0.0]], dtype=np.float32))
  CHECK(attn::encode_npy({2, 3}, kSix.data()) == file_bytes(npy_path("c_f4_2x3.npy")));
  // np.save(..., np.array([1.5, -2.5, 0.0, 7.0, 0.1], dtype=np.float32)): the 1-tuple "(5,)"
  const std::vector<float> five = {1.5f, -2.5f, 0.0f, 7.0f, 0.1f};
  CHECK(attn::encode_npy({5}, five.data()) == file_bytes(npy_path("vector_f4_5.npy")));
  // np.save(..., np.array(3.25, dtype=np.float32)): the empty tuple "()"
  const float scalar = 3.25f;
  CHECK(attn::encode_npy({}, &scalar) == file_bytes(npy_path("scalar_f4.npy")));
}

TEST_CASE("write_npy then read_npy through a real file") {
  const auto path = std::filesystem::temp_directory_path() / "attn_test_npy_roundtrip.npy";
  attn::write_npy(path.string(), {2, 3}, kSix.data());
  const NpyArray back = attn::read_npy(path.string());
  std::filesystem::remove(path);
  CHECK(back.shape == Shape{2, 3});
  CHECK(same_bits(back.values, kSix));
}

TEST_CASE("write_npy into a missing directory throws NpyError naming the path") {
  const std::string path = "/nonexistent-attn-dir/out.npy";
  try {
    attn::write_npy(path, {2, 3}, kSix.data());
    FAIL("no exception");
  } catch (const NpyError& e) {
    CHECK(contains(e.what(), path));
  }
}

// ------------------------------------------------------------------ files written by NumPy

TEST_CASE("NumPy files load with the right values in the right places") {
  SUBCASE("float64, converted to float32") {
    // np.array([[0.5, -1.25, 3.0], [1e-3, 2.0**-20, 12345.678]], dtype=np.float64)
    const NpyArray a = attn::read_npy(npy_path("float64_2x3.npy"));
    CHECK(a.shape == Shape{2, 3});
    CHECK(a.values == std::vector<float>{0.5f, -1.25f, 3.0f, static_cast<float>(1e-3),
                                         static_cast<float>(std::ldexp(1.0, -20)), static_cast<float>(12345.678)});
  }
  SUBCASE("Fortran order, 2-D") {
    // np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4) / 4): C order 0, .25, .5, ...
    const NpyArray a = attn::read_npy(npy_path("fortran_f4_3x4.npy"));
    CHECK(a.shape == Shape{3, 4});
    REQUIRE(a.values.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) CHECK(a.values[i] == static_cast<float>(i) / 4.0f);
  }
  SUBCASE("Fortran order, 3-D, float64") {
    // np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 10)
    const NpyArray a = attn::read_npy(npy_path("fortran_f8_2x3x4.npy"));
    CHECK(a.shape == Shape{2, 3, 4});
    REQUIRE(a.values.size() == 24);
    for (std::size_t i = 0; i < 24; ++i) CHECK(a.values[i] == static_cast<float>(i) - 10.0f);
  }
  SUBCASE("1-D") {
    // np.array([1.5, -2.5, 0.0, 7.0, 0.1], dtype=np.float32)
    const NpyArray a = attn::read_npy(npy_path("vector_f4_5.npy"));
    CHECK(a.shape == Shape{5});
    CHECK(a.values == std::vector<float>{1.5f, -2.5f, 0.0f, 7.0f, 0.1f});
  }
  SUBCASE("0-d") {
    // np.array(3.25, dtype=np.float32)
    const NpyArray a = attn::read_npy(npy_path("scalar_f4.npy"));
    CHECK(a.shape.empty());
    CHECK(a.values == std::vector<float>{3.25f});
  }
  SUBCASE("format version 2.0 (4-byte header length)") {
    // np.lib.format.write_array(f, np.array([[1, 2], [3, 4]], dtype=np.float32), version=(2, 0))
    const NpyArray a = attn::read_npy(npy_path("version2_f4_2x2.npy"));
    CHECK(a.shape == Shape{2, 2});
    CHECK(a.values == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  }
}

// ---------------------------------------------------------------------------------- refusals

TEST_CASE("refuses a file without the .npy magic") {
  std::string bytes = attn::encode_npy({2, 3}, kSix.data());
  bytes[1] = 'X';
  const std::string msg = refusal(bytes, "weights.npy");
  CHECK(contains(msg, "weights.npy"));
  CHECK(contains(msg, "magic"));
  CHECK(contains(refusal("hello"), "magic"));  // shorter than any header
  CHECK(contains(refusal(""), "magic"));
}

TEST_CASE("refuses a truncated data section") {
  std::string bytes = attn::encode_npy({2, 3}, kSix.data());
  bytes.resize(bytes.size() - 4);
  const std::string msg = refusal(bytes);
  CHECK(contains(msg, "20 bytes"));
  CHECK(contains(msg, "(2, 3)"));
  CHECK(contains(msg, "needs 24"));
}

TEST_CASE("refuses extra bytes after the data") {
  const std::string bytes = attn::encode_npy({2, 3}, kSix.data()) + std::string(4, '\0');
  const std::string msg = refusal(bytes);
  CHECK(contains(msg, "28 bytes"));
  CHECK(contains(msg, "needs 24"));
}

TEST_CASE("refuses a truncated header") {
  const std::string bytes = attn::encode_npy({2, 3}, kSix.data());
  CHECK(contains(refusal(bytes.substr(0, 40)), "truncated header"));
}

TEST_CASE("refuses dtypes it does not convert") {
  // np.save(..., np.array([1, 2, 3], dtype='<i4')): ints would be read as garbage floats.
  const std::string msg = refusal(file_bytes(npy_path("int32_3.npy")));
  CHECK(contains(msg, "'<i4'"));
  CHECK(contains(msg, "not supported"));
  // np.save(..., np.array([1.0, 2.0], dtype='>f4')): right size, wrong byte order.
  CHECK(contains(refusal(file_bytes(npy_path("bigendian_f4_2.npy"))), "'>f4'"));
}

TEST_CASE("refuses malformed shapes") {
  const std::string data(24, '\0');
  for (const char* shape : {"(2, x)", "(2, -3)", "(2.0, 3)", "[2, 3]", "(2, 3", "(2 3)"}) {
    INFO(std::string(shape));
    const std::string dict = std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }";
    const std::string msg = refusal(npy_with_header(dict, data));
    CHECK(contains(msg, "shape"));
  }
}

TEST_CASE("refuses an absurd shape with NpyError, not bad_alloc") {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }";
  const std::string msg = refusal(npy_with_header(dict, std::string(16, '\0')));
  CHECK(contains(msg, "(100000000000, 100000000000)"));
  CHECK(contains(msg, "too large"));
  // Just past the limit on one axis, so the product cannot hide behind an overflow check.
  const std::string one_axis =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(attn::kNpyMaxElements + 1) + ",), }";
  CHECK(contains(refusal(npy_with_header(one_axis, "")), "too large"));
}

TEST_CASE("refuses headers without the keys it needs") {
  const std::string data(24, '\0');
  CHECK(contains(refusal(npy_with_header("{'fortran_order': False, 'shape': (2, 3), }", data)), "'descr'"));
  CHECK(contains(refusal(npy_with_header("{'descr': '<f4', 'shape': (2, 3), }", data)), "'fortran_order'"));
  CHECK(contains(refusal(npy_with_header("{'descr': '<f4', 'fortran_order': False, }", data)), "'shape'"));
  CHECK(contains(refusal(npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", data)),
                 "fortran_order"));
}

TEST_CASE("refuses format versions it does not know") {
  std::string bytes = attn::encode_npy({2, 3}, kSix.data());
  bytes[6] = 4;
  CHECK(contains(refusal(bytes), "version 4"));
}

TEST_CASE("read_npy refuses a missing file and a directory, naming the path") {
  const std::string missing = npy_path("no_such_file.npy");
  CHECK_THROWS_WITH_AS(attn::read_npy(missing), (missing + ": no such file").c_str(), NpyError);
  // A directory "opens" on Linux and seeks to a huge size: it is named for what it is, not "too large".
  const std::string dir = attn::test::data_path("npy");
  CHECK_THROWS_WITH_AS(attn::read_npy(dir), (dir + ": a directory, not a file").c_str(), NpyError);
  // A FIFO would block the open itself; it is refused before opening.
  CHECK_THROWS_WITH_AS(attn::read_npy("/dev/null"), "/dev/null: not a regular file", NpyError);
}

TEST_CASE("non-finite values: found with their C-order index, float64 overflow becomes inf") {
  const std::vector<float> v = {1.0f, std::nanf(""), 2.0f, -INFINITY, INFINITY};
  const attn::NonFinite nf = attn::find_nonfinite(v, 2);
  CHECK(nf.count == 3);
  CHECK(nf.first == std::vector<std::size_t>{1, 3});
  CHECK(attn::index_str({2, 3}, 4) == "[1, 1]");
  CHECK(attn::index_str({5}, 3) == "[3]");
  CHECK(attn::index_str({2, 2, 2}, 7) == "[1, 1, 1]");
  CHECK(attn::value_str(v[1]) == "nan");
  CHECK(attn::value_str(v[3]) == "-inf");
  CHECK(attn::find_nonfinite(kSix, 3).count == 0);
  // A float64 beyond float32's range is inf (as NumPy's astype), never a cast's undefined behaviour.
  const double big[] = {1e300, -1e300, 1e-300, 0.5};
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size());
  bytes += '\0';
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(big), sizeof big);
  const attn::NpyArray a = attn::parse_npy(bytes, "big.npy");
  CHECK(std::isinf(a.values[0]));
  CHECK(a.values[0] > 0);
  CHECK(std::isinf(a.values[1]));
  CHECK(a.values[1] < 0);
  CHECK(a.values[2] == 0.0f);
  CHECK(a.values[3] == 0.5f);
}

TEST_CASE("header text quoted in a refusal is cut short and escaped") {
  std::string bytes = attn::encode_npy({2, 3}, kSix.data());
  const std::string evil = "'\x1b[31m" + std::string(3000, 'A') + "'";
  const auto at = bytes.find("'<f4'");
  bytes.replace(at, 5, evil);
  // Keep the header length field honest so that the dtype is what is refused.
  const std::size_t header_len = bytes.find('\n', 10) - 10 + 1;
  bytes[8] = static_cast<char>(header_len & 0xFF);
  bytes[9] = static_cast<char>(header_len >> 8);
  const std::string msg = refusal(bytes);
  CAPTURE(msg);
  CHECK(contains(msg, "dtype '\\x1b[31mAAAA"));
  CHECK(contains(msg, "A... is not supported"));
  CHECK(msg.find('\x1b') == std::string::npos);
  CHECK(msg.size() < 200);
}

TEST_CASE("read_npy: the declared shape is checked before the data is read") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("attn-npy-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "huge.npy").string();
  {  // 1 GiB of zeros behind a (16384, 16384) header, as a sparse file: no disk, no read
    std::ofstream out(path, std::ios::binary);
    out << npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (16384, 16384), }", "");
  }
  fs::resize_file(path, 128 + std::uintmax_t{16384} * 16384 * 4);
  Shape seen;
  const auto refuse = [&](const Shape& s) {
    seen = s;
    throw std::runtime_error("too large for this lesson");
  };
  CHECK_THROWS_WITH(attn::read_npy(path, refuse), "too large for this lesson");
  CHECK(seen == Shape{16384, 16384});
  // A file whose size disagrees with its header is refused before the check is asked.
  fs::resize_file(path, 128 + 100);
  bool asked = false;
  CHECK_THROWS_WITH_AS(attn::read_npy(path, [&](const Shape&) { asked = true; }),
                       doctest::Contains("data is 100 bytes but shape (16384, 16384) of float32 needs 1073741824"), NpyError);
  CHECK_FALSE(asked);
  // An accepted shape reads as usual.
  const std::string small = (dir / "small.npy").string();
  {
    std::ofstream out(small, std::ios::binary);
    out << attn::encode_npy({2, 3}, kSix.data());
  }
  const NpyArray a = attn::read_npy(small, [&](const Shape& s) { seen = s; });
  CHECK(seen == Shape{2, 3});
  CHECK(same_bits(a.values, kSix));
  fs::remove_all(dir);
}

TEST_CASE("parse_npy_header: what the header declares, and a header longer than NumPy writes") {
  const attn::NpyHeader h = attn::parse_npy_header(attn::encode_npy({2, 3}, kSix.data()), "x.npy");
  CHECK(h.shape == Shape{2, 3});
  CHECK(h.count == 6);
  CHECK(h.item == 4);
  CHECK_FALSE(h.fortran);
  CHECK(h.data_start == 128);
  std::string v2("\x93NUMPY\x02\x00", 8);
  v2 += std::string("\x00\x00\x10\x00", 4);  // a 1 MiB header
  CHECK(contains(refusal(v2 + std::string(1 << 20, ' ')), "header of 1048576 bytes is too long (limit 65535)"));
}
