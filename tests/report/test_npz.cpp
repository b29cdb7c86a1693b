// --npz's archive read back by a zip reader written here, apart from the product's: it walks the
// end record, the central directory and every local header, checks each member's CRC with the
// bitwise CRC-32 (not the product's table), and finds exactly the files --dump writes for the
// same Report, byte for byte. Also zip32's size limit, refused before anything is written.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/dump_sink.hpp"
#include "report/npz_sink.hpp"
#include "report/zip_store.hpp"
#include "zip_reader.hpp"
#include "cli/scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::TempDir;
using attn::Mat;
using attn::report::Report;
using attn::testing::bitwise_crc32;
using attn::testing::read_zip;

namespace {

// A report with what a dump must cope with: a stage showing two tensors of one name (the second
// file gets "_2"), a 1-D tensor and a matrix.
Report sample_report() {
  Report r;
  r.header.lesson = "causal";
  r.header.title = "Causal attention";
  r.header.follows = "Build an LLM from scratch, 3.5";
  r.header.setting = {"seed 789", "d_out 2"};
  const Mat x = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}};  // (T, d_in)
  const Mat w = {{1.0f, 0.0f}, {0.25f, 0.75f}};                    // (T, T)
  r.stage("Inputs", "x = embeddings").show("x", x, {"Your", "journey"});
  r.stage("Weights").show("attn_weights", w).show("attn_weights", x);
  r.stage("Sums").show_copy("row sums", attn::Shape{2}, std::vector<float>{1.0f, 1.0f}.data());
  return r;
}

// The dump's files as name -> bytes.
std::map<std::string, std::string> dump_of(const Report& r, const std::string& command, const fs::path& dir) {
  attn::report::write_dump(r, command, dir.string());
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename().string()] = read_file(e.path());
  return files;
}

}  // namespace

TEST_CASE("the archive holds exactly the dump's files, the same bytes, readable by an independent zip reader") {
  TempDir tmp{"attn-npz"};
  const Report r = sample_report();
  const auto dump = dump_of(r, "attn lesson causal", tmp.path / "dump");
  attn::report::write_npz(r, "attn lesson causal", (tmp.path / "lesson.npz").string());
  const std::string zip = read_file(tmp.path / "lesson.npz");
  const auto members = read_zip(zip);

  std::vector<std::string> names;
  std::map<std::string, std::string> stored;
  for (const auto& m : members) {
    names.push_back(m.name);
    stored[m.name] = m.bytes;
  }
  // Stage order, then the manifest; "_2" for the second attn_weights of stage 2.
  CHECK(names == std::vector<std::string>{"s01_x.npy", "s02_attn_weights.npy", "s02_attn_weights_2.npy",
                                          "s03_row_sums.npy", "manifest.json"});
  CHECK(stored.size() == dump.size());
  for (const auto& [name, bytes] : dump) {
    const std::string& file = name;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(file);
    REQUIRE(stored.count(name) == 1);
    CHECK(stored[name] == bytes);
  }
  CHECK(dump.at("manifest.json").find("\"file\": \"s02_attn_weights_2.npy\"") != std::string::npos);

  // The size the limit check computes is the size written.
  std::vector<attn::report::ZipMemberSize> sizes;
  for (const auto& m : members) sizes.emplace_back(m.name, m.bytes.size());
  CHECK(attn::report::zip_store_size(sizes) == zip.size());
  // One report, one archive: no timestamp or other accident of the run is in the bytes.
  attn::report::write_npz(r, "attn lesson causal", (tmp.path / "again.npz").string());
  CHECK(read_file(tmp.path / "again.npz") == zip);
}

TEST_CASE("the test's reader notices a damaged archive (so that its passing means something)") {
  TempDir tmp{"attn-npz"};
  const Report r = sample_report();
  attn::report::write_npz(r, "cmd", (tmp.path / "a.npz").string());
  std::string zip = read_file(tmp.path / "a.npz");
  REQUIRE_NOTHROW(read_zip(zip));
  std::string flipped = zip;
  flipped[30 + 9 + 80] ^= 0x01;  // a byte of s01_x.npy's data, past its 30-byte header and name
  CHECK_THROWS_WITH_AS(read_zip(flipped), "s01_x.npy: CRC-32 does not match the data", std::runtime_error);
  CHECK_THROWS_AS(read_zip(zip.substr(0, zip.size() - 1)), std::runtime_error);
}

TEST_CASE("a shapes-only report's archive is the manifest alone, as its dump is") {
  TempDir tmp{"attn-npz"};
  Report r;
  r.keep_values = false;
  r.header.lesson = "gqa";
  r.stage("Inputs").show("x", attn::report::Held<Mat>(attn::Shape{4096, 4096}));
  const auto dump = dump_of(r, "attn lesson gqa --shapes-only", tmp.path / "dump");
  attn::report::write_npz(r, "attn lesson gqa --shapes-only", (tmp.path / "plan.npz").string());
  const auto members = read_zip(read_file(tmp.path / "plan.npz"));
  REQUIRE(members.size() == 1);
  CHECK(members[0].name == "manifest.json");
  REQUIRE(dump.size() == 1);
  CHECK(members[0].bytes == dump.at("manifest.json"));
  CHECK(members[0].bytes.find("\"mode\": \"none\"") != std::string::npos);
}

TEST_CASE("CRC-32: the standard check value, the bitwise definition, and continuation") {
  using attn::report::crc32;
  const std::string check = "123456789";
  CHECK(crc32(check.data(), check.size()) == 0xCBF43926u);  // the catalogued check value of CRC-32/ISO-HDLC
  CHECK(crc32("", 0) == 0u);
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>((i * 7919 + 13) & 0xFF);
  CHECK(crc32(bytes.data(), bytes.size()) == bitwise_crc32(bytes));
  const std::uint32_t first = crc32(bytes.data(), 400);
  CHECK(crc32(bytes.data() + 400, bytes.size() - 400, first) == bitwise_crc32(bytes));
}

TEST_CASE("zip32's limits: refused from the sizes alone, at exactly the last byte and member that fit") {
  using attn::report::check_zip_store;
  using attn::report::ZipMemberSize;
  // One member whose archive is exactly kZip32MaxBytes: 30 + 46 + 2 * 5 + 22 bytes of headers.
  const std::uint64_t fits = attn::report::kZip32MaxBytes - (30 + 46 + 2 * 5 + 22);
  CHECK(attn::report::zip_store_size({{"a.npy", fits}}) == attn::report::kZip32MaxBytes);
  CHECK_NOTHROW(check_zip_store({{"a.npy", fits}}));
  CHECK_THROWS_WITH_AS(check_zip_store({{"a.npy", fits + 1}}),
                       doctest::Contains("past zip32's 4 GiB limit"), std::runtime_error);
  CHECK_THROWS_AS(check_zip_store({{"a.npy", std::uint64_t{5} << 30}}), std::runtime_error);
  std::vector<ZipMemberSize> many(attn::report::kZip32MaxMembers, ZipMemberSize{"m", 0});
  CHECK_NOTHROW(check_zip_store(many));
  many.emplace_back("m", 0);
  CHECK_THROWS_WITH_AS(check_zip_store(many), doctest::Contains("past zip32's limit of 65534"), std::runtime_error);
}

TEST_CASE("the target: a directory is refused before anything is written, a file is replaced whole") {
  TempDir tmp{"attn-npz"};
  const Report r = sample_report();
  CHECK_THROWS_WITH_AS(attn::report::write_npz(r, "cmd", tmp.path.string()), doctest::Contains("is a directory"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(attn::report::write_npz(r, "cmd", (tmp.path / "new").string() + "/"),
                       doctest::Contains("ends in '/'"), std::runtime_error);
  CHECK_FALSE(fs::exists(tmp.path / "new"));
  const fs::path file = tmp.path / "deep" / "er" / "a.npz";
  attn::report::write_npz(r, "cmd", file.string());  // parents created
  REQUIRE(fs::exists(file));
  {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << "old contents, longer than nothing";
  }
  attn::report::write_npz(r, "cmd", file.string());
  CHECK(read_zip(read_file(file)).size() == 5);
  std::size_t beside = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(file.parent_path())) ++beside;
  CHECK(beside == 1);  // no temporary file left
}
