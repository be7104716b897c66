// The .npy reader: what write_npy writes reads back, and a header from anyone else is parsed in linear time, with
// every size checked against the file before anything is allocated for it.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "model/formats/npy_header.h"
#include "model/formats/npy.h"
#include "support/test_support.h"
#include "model/temp_dirs.h"

namespace fourfold::model {
namespace {

using fourfold::testing::throws_with;

const testing::TempDirs kDirs("fourfold_npy_test");

// A version 1.0 file: magic, version, little-endian length, `header` as given, then `data`.
std::string npy_bytes(const std::string& header, const std::string& data = "") {
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header + data;
}

std::string npy_v2(const std::string& header) {
  std::string out("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header;
}

TEST(Npy, WhatIsWrittenReadsBack) {
  const auto dir = kDirs.make();
  const Tensor t = Tensor::from_vector({1, -2, 3.5, 4, 5, 6}, {2, 3}, DType::f32);
  write_npy(dir / "a.npy", t);
  const Tensor back = read_npy(dir / "a.npy");
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.to_vector(), t.to_vector());
  write_npy(dir / "s.npy", Tensor::from_vector({7}, {}, DType::i64));
  EXPECT_EQ(read_npy(dir / "s.npy").to_vector(), std::vector<double>{7});
}

TEST(Npy, HeaderVariantsNumpyWrites) {
  const std::string data(8, '\0');
  const auto h = parse_npy_header(npy_bytes("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}\n", data), "x.npy");
  EXPECT_EQ(h.dtype, DType::i32);
  EXPECT_EQ(h.shape, (Shape{2}));
  const auto e = parse_npy_header(npy_bytes("{'shape': (0, 3), 'fortran_order': False, 'descr': '<f8', }   \n"), "x.npy");
  EXPECT_EQ(e.shape, (Shape{0, 3}));
  EXPECT_EQ(e.data_bytes, 0u);
}

// std::regex recursed once per header character: a 200 KB header overflowed the stack.
TEST(Npy, LongHeadersParseInLinearTimeAndAreNamed) {
  const std::string long_descr = "{'descr': '" + std::string(200000, 'a') + "', 'fortran_order': False, 'shape': (1,), }";
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(npy_v2(long_descr), "long.npy"); },
                                       {"long.npy", "descr", "'<f4'", "(200000 bytes)"}));
  try {
    parse_npy_header(npy_v2(long_descr), "long.npy");
  } catch (const FormatError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u);   // the value is quoted in part, not whole
  }
  const std::string spaces = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(200000, ' ') + "1,), }";
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(npy_v2(spaces), "sp.npy"); }, {"sp.npy", "data", "4 bytes"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(npy_v2(std::string(2 << 20, ' ')), "big.npy"); },
                                       {"big.npy", "header length", "at most"}));
}

TEST(Npy, SizesAreCheckedBeforeAnyAllocation) {
  const auto bad = [](const std::string& shape) {
    return npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }\n", std::string(16, '\0'));
  };
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(bad("(4294967296, 4294967296, 16)"), "o.npy"); },
                                       {"o.npy", "shape", "64 bits"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(bad("(99999999999999999999,)"), "o.npy"); },
                                       {"o.npy", "shape", "64 bits"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(bad("(1099511627776,)"), "short.npy"); },
                                       {"short.npy", "data", "8796093022208 bytes", "16 bytes"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(bad("(1,)"), "long.npy"); },
                                       {"long.npy", "data", "8 bytes", "16 bytes"}));
}

TEST(Npy, MalformedHeadersNameTheField) {
  const auto h = [](const std::string& text) { return npy_bytes(text, std::string(4, '\0')); };
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(h("{'descr': '<f4', 'shape': (1,), }"), "m.npy"); },
                                       {"m.npy", "fortran_order", "missing"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_npy_header(h("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }"), "m.npy"); },
      {"m.npy", "fortran_order", "C order"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_npy_header(h("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"), "m.npy"); },
      {"m.npy", "header key", "'descr'"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_npy_header(h("{'descr': '<f4', 'fortran_order': False, 'shape': (1, -2), }"), "m.npy"); },
      {"m.npy", "shape", "non-negative integers"}));
  EXPECT_TRUE(throws_with<FormatError>(
      [&] { parse_npy_header(h("{'descr': '<f4', 'fortran_order': False, 'shape': (1,) } trailing"), "m.npy"); },
      {"m.npy", "header", "nothing after"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(h("{'descr': '<f4"), "m.npy"); },
                                       {"m.npy", "descr", "closing quote"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header(std::string("\x93NUMPY\x07\x00", 8), "v.npy"); },
                                       {"v.npy", "version"}));
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_npy_header("PK\x03\x04", "z.npy"); }, {"z.npy", "magic"}));
}

TEST(Npy, AFileThatIsNotRegularIsRefusedByName) {
  EXPECT_TRUE(throws_with<FormatError>([&] { read_npy("/dev/zero"); }, {"/dev/zero", "regular file"}));
  const auto dir = kDirs.make();
  EXPECT_TRUE(throws_with<FormatError>([&] { read_npy(dir); }, {dir.string(), "directory"}));
}

}  // namespace
}  // namespace fourfold::model
