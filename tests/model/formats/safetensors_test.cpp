// safetensors: write/read round trips for every dtype and layout, the mapping's lifetime, and every malformed file
// giving a FormatError that names the file and the tensor.
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "model/formats/safetensors.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::bit_equal;
using fourfold::testing::random_bits;
using fourfold::testing::throws_with;

// The folders this process made under the temp directory are removed when the tests end.
struct RemoveTempDirs {
  ~RemoveTempDirs() {
    std::error_code ec;
    const std::string mine = "fourfold_safetensors_" + std::to_string(::getpid()) + "_";
    for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec))
      if (entry.path().filename().string().rfind(mine, 0) == 0) fs::remove_all(entry.path(), ec);
  }
} remove_temp_dirs;

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() /
                       ("fourfold_safetensors_" + std::to_string(::getpid()) + "_" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  return dir;
}

// Every dtype safetensors stores; complex64 has no safetensors name.
constexpr DType kStored[] = {DType::f32, DType::f16, DType::bf16, DType::f8_e4m3fn, DType::f8_e5m2,
                             DType::i32, DType::i64, DType::boolean, DType::f64};

bool is_mapped(const fs::path& file) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(file.string()) != std::string::npos) return true;
  return false;
}

TEST(Safetensors, EveryDTypeRoundTripsBitExact) {
  const fs::path file = temp_dir() / "all.safetensors";
  std::vector<std::pair<std::string, Tensor>> tensors;
  uint64_t seed = 1;
  for (DType d : kStored) {
    tensors.emplace_back(std::string(dtype_name(d)) + ".odd", random_bits({3, 5}, d, seed++));   // 15 elements
    tensors.emplace_back(std::string(dtype_name(d)) + ".scalar", random_bits({}, d, seed++));
    tensors.emplace_back(std::string(dtype_name(d)) + ".empty", Tensor::empty({0, 4}, d));
  }
  write_safetensors(file, tensors, {{"format", "pt"}});
  const SafetensorsFile read = read_safetensors(file);
  EXPECT_EQ(read.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(read.mapped_bytes, fs::file_size(file));
  EXPECT_TRUE(read.copied.empty());   // the writer keeps every tensor aligned to its element size
  ASSERT_EQ(read.tensors.size(), tensors.size());
  std::map<std::string, Tensor> by_name(read.tensors.begin(), read.tensors.end());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(by_name.count(name));
    EXPECT_TRUE(bit_equal(by_name[name], t));
  }
}

TEST(Safetensors, NonContiguousInputsAreWrittenInLogicalOrder) {
  const fs::path file = temp_dir() / "views.safetensors";
  const Tensor base = random_bits({6, 8}, DType::bf16, 7);
  const Tensor transposed = base.transpose(0, 1);
  const Tensor strided = base.slice(1, 1, 8, 3);
  const Tensor padded = fourfold::testing::non_contiguous(random_bits({4, 5}, DType::f32, 8));
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(padded.is_contiguous());
  write_safetensors(file, {{"t", transposed}, {"s", strided}, {"p", padded}});
  const SafetensorsFile read = read_safetensors(file);
  std::map<std::string, Tensor> by_name(read.tensors.begin(), read.tensors.end());
  EXPECT_TRUE(bit_equal(by_name.at("t"), transposed.contiguous()));
  EXPECT_TRUE(bit_equal(by_name.at("s"), strided.contiguous()));
  EXPECT_TRUE(bit_equal(by_name.at("p"), padded.contiguous()));
}

TEST(Safetensors, ViewsAreInPlaceAndTheMapLivesAsLongAsTheLastView) {
  const fs::path file = temp_dir() / "lifetime.safetensors";
  write_safetensors(file, {{"a", random_bits({64}, DType::f32, 1)}, {"b", random_bits({8, 8}, DType::bf16, 2)}});
  Tensor keep;
  {
    SafetensorsFile read = read_safetensors(file);
    EXPECT_TRUE(is_mapped(file));
    EXPECT_FALSE(read.tensors[0].second.storage()->from_allocator());   // a view of the map, not a copy
    keep = read.tensors[1].second.slice(0, 2, 4);
  }
  EXPECT_TRUE(is_mapped(file));   // a view of a view keeps it
  EXPECT_EQ(keep.shape(), (Shape{2, 8}));
  keep = Tensor();
  EXPECT_FALSE(is_mapped(file));
}

// copy and populate report the bytes they read in (a file of several load chunks), adding up to the file's size,
// and give the same tensors as map; map reports nothing (it reads nothing at load).
TEST(Safetensors, CopyAndPopulateReportTheirProgress) {
  const fs::path file = temp_dir() / "progress.safetensors";
  const Tensor big = random_bits({(int64_t(40) << 20) / 4}, DType::f32, 3);   // 40 MiB: two 32 MiB chunks
  write_safetensors(file, {{"big", big}});
  for (WeightResidency r : {WeightResidency::copy, WeightResidency::populate, WeightResidency::map}) {
    SCOPED_TRACE(std::string(residency_name(r)));
    uint64_t total = 0;
    int calls = 0;
    const SafetensorsFile read = read_safetensors(file, r, [&](uint64_t bytes) {
      total += bytes;
      ++calls;
    });
    EXPECT_TRUE(bit_equal(read.tensors.at(0).second, big));
    if (r == WeightResidency::map) {
      EXPECT_EQ(calls, 0);
    } else {
      EXPECT_EQ(calls, 2);
      EXPECT_EQ(total, fs::file_size(file));
    }
  }
}

TEST(Safetensors, AlignmentAndExpertAdjacency) {
  const fs::path file = temp_dir() / "order.safetensors";
  // 3 bytes first would misalign everything after it; the writer moves it last.
  std::vector<std::pair<std::string, Tensor>> tensors = {{"odd", random_bits({3}, DType::boolean, 1)}};
  std::vector<Tensor> experts;
  for (int e = 0; e < 4; ++e) tensors.emplace_back("e" + std::to_string(e), random_bits({4, 6}, DType::bf16, 10 + e));
  tensors.emplace_back("f64", random_bits({5}, DType::f64, 3));
  write_safetensors(file, tensors);
  const SafetensorsFile read = read_safetensors(file);
  for (const auto& [name, t] : read.tensors) {
    if (name != "odd") {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 8, 0u) << name;
    }
    if (name[0] == 'e') experts.push_back(t);
  }
  EXPECT_EQ(read.tensors.back().first, "odd");
  const std::optional<Tensor> stacked = stacked_view(experts);
  ASSERT_TRUE(stacked.has_value());
  EXPECT_EQ(stacked->shape(), (Shape{4, 4, 6}));
  for (int e = 0; e < 4; ++e) EXPECT_TRUE(bit_equal(stacked->select(0, e), tensors[1 + e].second));
  // Every other one is evenly spaced too (a name-ordered file interleaves a layer's projections so): a strided view.
  const std::optional<Tensor> strided = stacked_view({experts[0], experts[2]});
  ASSERT_TRUE(strided.has_value());
  EXPECT_EQ(strided->stride(0), 2 * 4 * 6);
  EXPECT_TRUE(bit_equal(strided->select(0, 1), tensors[3].second));
  EXPECT_FALSE(stacked_view({experts[0], experts[1], experts[3]}).has_value());   // unevenly spaced
  EXPECT_FALSE(stacked_view({experts[1], experts[0]}).has_value());               // backwards
}

TEST(Safetensors, WriterRefusesDuplicatesAndComplex) {
  const fs::path file = temp_dir() / "bad.safetensors";
  const Tensor t = Tensor::zeros({2}, DType::f32);
  EXPECT_TRUE(throws_with<ValueError>([&] { write_safetensors(file, {{"x", t}, {"x", t}}); }, {"x", "once"}));
  EXPECT_TRUE(throws_with<UnsupportedError>(
      [&] { write_safetensors(file, {{"c", Tensor::zeros({2}, DType::complex64)}}); }, {"complex64"}));
}

// ---- malformed files ----

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// A file of the length field, `header` and `data_bytes` zero bytes.
fs::path write_raw(const std::string& name, const std::string& header, size_t data_bytes,
                   std::optional<uint64_t> length = std::nullopt) {
  const fs::path file = temp_dir() / name;
  std::ofstream out(file, std::ios::binary);
  out << le64(length.value_or(header.size())) << header << std::string(data_bytes, '\0');
  return file;
}

::testing::AssertionResult rejects(const fs::path& file, std::vector<std::string> fragments) {
  fragments.push_back(file.string());
  return throws_with<FormatError>([&] { read_safetensors(file); }, fragments);
}

TEST(Safetensors, MalformedFilesNameFileAndTensor) {
  const std::string one = R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})";
  EXPECT_NO_THROW(read_safetensors(write_raw("good.safetensors", one, 16)));

  EXPECT_TRUE(rejects(write_raw("empty.safetensors", "", 0, 0), {"header", "valid JSON"}));   // "" is not JSON
  {
    const fs::path file = temp_dir() / "short.safetensors";
    std::ofstream(file, std::ios::binary) << "abc";
    EXPECT_TRUE(rejects(file, {"header length", "3 bytes"}));
  }
  EXPECT_TRUE(rejects(write_raw("length.safetensors", one, 16, 1ull << 40), {"header length", "1099511627776"}));
  EXPECT_TRUE(rejects(write_raw("length_wrap.safetensors", one, 16, ~0ull), {"header length"}));
  EXPECT_TRUE(rejects(write_raw("truncated.safetensors", one, 10), {"tensor w", "data_offsets", "[0, 16]"}));
  EXPECT_TRUE(rejects(write_raw("json.safetensors", R"({"w": {"dtype": )", 0), {"header", "valid JSON"}));
  EXPECT_TRUE(rejects(write_raw("array.safetensors", "[1, 2]", 0), {"header", "a JSON object"}));
  EXPECT_TRUE(rejects(write_raw("dtype.safetensors",
                                R"({"w": {"dtype": "Q4_K", "shape": [2, 2], "data_offsets": [0, 16]}})", 16),
                      {"tensor w", "dtype", "Q4_K", "BF16"}));
  EXPECT_TRUE(rejects(write_raw("shape.safetensors",
                                R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}})", 16),
                      {"tensor w", "24 bytes", "16 bytes"}));
  EXPECT_TRUE(rejects(write_raw("negative.safetensors",
                                R"({"w": {"dtype": "F32", "shape": [-2, 2], "data_offsets": [0, 16]}})", 16),
                      {"tensor w", "non-negative"}));
  EXPECT_TRUE(rejects(write_raw("huge_shape.safetensors",
                                R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}})",
                                16),
                      {"tensor w", "64 bits"}));
  EXPECT_TRUE(rejects(write_raw("missing.safetensors", R"({"w": {"dtype": "F32", "shape": [4]}})", 16),
                      {"tensor w", "data_offsets"}));
  EXPECT_TRUE(rejects(write_raw("range.safetensors",
                                R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [16, 32]}})", 16),
                      {"tensor w", "within the data region of 16 bytes", "[16, 32]"}));
  EXPECT_TRUE(rejects(write_raw("reversed.safetensors",
                                R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", 16),
                      {"tensor w", "[8, 4]"}));
  EXPECT_TRUE(rejects(write_raw("overlap.safetensors",
                                R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                    "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                                16),
                      {"tensor b", "overlapping a"}));
  EXPECT_TRUE(rejects(write_raw("hole.safetensors",
                                R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                    "b": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}})",
                                16),
                      {"tensor b", "no hole"}));
  EXPECT_TRUE(rejects(write_raw("uncovered.safetensors",
                                R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 16),
                      {"data region", "first 8"}));
  EXPECT_TRUE(rejects(write_raw("duplicate.safetensors",
                                R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                    "a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                                16),
                      {"tensor a", "once"}));
  EXPECT_TRUE(rejects(write_raw("metadata.safetensors", R"({"__metadata__": {"format": 1}})", 0),
                      {"__metadata__.format", "a string"}));
  EXPECT_TRUE(throws_with<FormatError>([] { read_safetensors("/nonexistent/x.safetensors"); },
                                       {"/nonexistent/x.safetensors"}));
}

TEST(Safetensors, MisalignedTensorsFromOtherWritersAreCopied) {
  // A 1-byte tensor first leaves the f32 after it at an odd offset: readable, but copied out of the map.
  const std::string header = R"({"b": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]},
                                 "w": {"dtype": "F32", "shape": [2], "data_offsets": [1, 9]}})";
  const std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  const fs::path file = write_raw("misaligned.safetensors", padded, 9);
  const SafetensorsFile read = read_safetensors(file);
  EXPECT_EQ(read.copied.count("w"), 1u);
  EXPECT_EQ(read.copied.count("b"), 0u);
  EXPECT_EQ(read.tensors[1].second.to_vector(), (std::vector<double>{0.0, 0.0}));
}

}  // namespace
}  // namespace fourfold::model
