#include "io/npy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace attn {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw NpyError(path + ": " + what);
}

// The value of one key in the header dict, e.g. 'descr': '<f4' -> "'<f4'".
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  const auto at = header.find(quoted);
  if (at == std::string::npos) fail(path, "header has no " + quoted + " entry");
  auto colon = header.find(':', at + quoted.size());
  if (colon == std::string::npos) fail(path, "malformed header near " + quoted);
  std::size_t start = colon + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  std::size_t end = start;
  if (start < header.size() && header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) fail(path, "malformed shape in header");
    return header.substr(start, end - start + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string v = header.substr(start, end - start);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

Shape parse_shape(const std::string& tuple, const std::string& path) {
  // "(3, 4)", "(5,)", "()"
  Shape shape;
  std::string inner = tuple.substr(1, tuple.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;  // trailing comma of a 1-tuple
    std::size_t e = item.find_last_not_of(' ');
    const std::string digits = item.substr(b, e - b + 1);
    if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos)
      fail(path, "malformed shape " + escaped_for_message(tuple, 40) + " in header");
    shape.push_back(static_cast<std::size_t>(std::stoull(digits)));
  }
  return shape;
}

}  // namespace

NpyHeader parse_npy_header(const std::string& bytes, const std::string& path) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0) fail(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    fail(path, "unsupported .npy version " + std::to_string(major));
  }
  // NumPy writes headers of a few hundred bytes; a longer one is not a file it wrote.
  if (header_len > kNpyMaxHeader)
    fail(path, "header of " + std::to_string(header_len) + " bytes is too long (limit " + std::to_string(kNpyMaxHeader) + ")");
  if (header_start + header_len > bytes.size()) fail(path, "truncated header");
  const std::string header = bytes.substr(header_start, header_len);

  NpyHeader h;
  const std::string descr = dict_value(header, "descr", path);
  if (descr == "'<f4'") h.item = 4;
  else if (descr == "'<f8'") h.item = 8;
  else fail(path, "dtype " + escaped_for_message(descr, 24) + " is not supported (expected float32 '<f4' or float64 '<f8')");

  const std::string order = dict_value(header, "fortran_order", path);
  if (order != "False" && order != "True") fail(path, "malformed fortran_order " + escaped_for_message(order, 24));
  h.fortran = order == "True";

  const std::string tuple = dict_value(header, "shape", path);
  if (tuple.size() < 2 || tuple.front() != '(') fail(path, "malformed shape in header");
  h.shape = parse_shape(tuple, path);

  h.count = 1;
  for (std::size_t d : h.shape) {
    if (d != 0 && h.count > kNpyMaxElements / d)
      fail(path, "shape " + shape_str(h.shape) + " is too large (limit " + std::to_string(kNpyMaxElements) + " values)");
    h.count *= d;
  }
  h.data_start = header_start + header_len;
  return h;
}

namespace {

// The data section must be exactly what the header declares: checked from the file's size
// before a byte of it is read.
void check_data_size(const NpyHeader& h, std::size_t file_size, const std::string& path) {
  const std::size_t expected = h.count * h.item;
  const std::size_t actual = file_size - h.data_start;
  if (actual != expected)
    fail(path, "data is " + std::to_string(actual) + " bytes but shape " + shape_str(h.shape) + " of " +
                   (h.item == 4 ? "float32" : "float64") + " needs " + std::to_string(expected));
}

NpyArray decode_data(const NpyHeader& h, const char* src) {
  NpyArray out;
  out.shape = h.shape;
  const std::size_t count = h.count, item = h.item;
  const bool fortran = h.fortran;
  std::vector<float> raw(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (item == 4) {
      std::memcpy(&raw[i], src + 4 * i, 4);
    } else {
      double d;
      std::memcpy(&d, src + 8 * i, 8);
      // A float64 beyond float32's range becomes inf, as NumPy's astype gives (the cast itself
      // would be undefined behaviour); the caller refuses it with the other non-finite values.
      if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
        raw[i] = d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      else
        raw[i] = static_cast<float>(d);
    }
  }
  if (!fortran || out.shape.size() < 2) {
    out.values = std::move(raw);
    return out;
  }
  // Fortran order: the first index varies fastest. Re-lay in C order.
  out.values.resize(count);
  const std::size_t n = out.shape.size();
  std::vector<std::size_t> idx(n, 0);
  for (std::size_t f = 0; f < count; ++f) {
    std::size_t c = 0;
    for (std::size_t d = 0; d < n; ++d) c = c * out.shape[d] + idx[d];
    out.values[c] = raw[f];
    for (std::size_t d = 0; d < n; ++d) {  // advance the Fortran-order counter
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& path) {
  const NpyHeader h = parse_npy_header(bytes, path);
  check_data_size(h, bytes.size(), path);
  return decode_data(h, bytes.data() + h.data_start);
}

std::string escaped_for_message(const std::string& text, std::size_t limit, bool escape_quotes) {
  std::string out;
  std::size_t shown = 0;
  for (const char ch : text) {
    if (shown == limit) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e || c == '\\' || (escape_quotes && c == '\'')) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
    ++shown;
  }
  return out;
}

std::string not_a_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::regular) return "";
  if (st.type() == fs::file_type::not_found) return "no such file";
  if (st.type() == fs::file_type::directory) return "a directory, not a file";
  if (ec) return "cannot be read (" + ec.message() + ")";
  return "not a regular file";
}

NonFinite find_nonfinite(const std::vector<float>& values, std::size_t keep) {
  NonFinite nf;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) {
      if (nf.first.size() < keep) nf.first.push_back(i);
      ++nf.count;
    }
  return nf;
}

std::string index_str(const Shape& shape, std::size_t flat) {
  if (shape.empty()) return "[]";
  std::vector<std::size_t> idx(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string value_str(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

NpyArray read_npy(const std::string& path, const ShapeCheck& check) {
  // Opening a FIFO would block and a directory "opens"; only a regular file is read.
  if (const std::string problem = not_a_file(path); !problem.empty()) fail(path, problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  if (size < 0) fail(path, "cannot tell its size");
  // The header first: its shape is checked (the data's size against it, then the caller's
  // limits) before a byte of the data is read, so a huge file is refused at once.
  std::string prefix(static_cast<std::size_t>(std::min<std::streamoff>(size, 12 + kNpyMaxHeader)), '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  if (!in) fail(path, "read failed");
  const NpyHeader h = parse_npy_header(prefix, path);
  check_data_size(h, static_cast<std::size_t>(size), path);
  if (check) check(h.shape);
  std::string data(h.count * h.item, '\0');
  in.seekg(static_cast<std::streamoff>(h.data_start));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (!in) fail(path, "read failed");
  return decode_data(h, data.data());
}

std::string npy_header(const Shape& shape) {
  std::string dims;
  for (std::size_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // "(3, 4)"; a 1-tuple keeps "(5,)"
  else if (shape.size() == 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;  // magic, version, length, header, '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  out += header;
  return out;
}

std::size_t npy_size(const Shape& shape) {
  std::size_t count = 1;
  for (std::size_t d : shape) count *= d;
  return npy_header(shape).size() + count * sizeof(float);
}

std::string encode_npy(const Shape& shape, const float* values) {
  std::size_t count = 1;
  for (std::size_t d : shape) count *= d;
  std::string out = npy_header(shape);
  out.append(reinterpret_cast<const char*>(values), count * sizeof(float));
  return out;
}

void write_npy(const std::string& path, const Shape& shape, const float* values) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string bytes = encode_npy(shape, values);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw NpyError(path + ": write failed");
}

}  // namespace attn
