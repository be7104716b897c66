// The Wan VAE's bad-input classes (the folder and its files, config.json's sizes, PNG frames) at the library
// level: each ends in a FormatError / ShapeError / ValueError naming the file or input and the field, never a hang,
// a crash, an op's internal error or an undersized buffer.
#include <sys/stat.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "model/formats/safetensors.h"
#include "model/temp_dirs.h"
#include "model/formats/png_frames.h"
#include "model/vae/wan_vae.h"
#include "model/vae/wan_vae_presets.h"
#include "support/test_support.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::throws_with;
using nlohmann::json;

const testing::TempDirs kTemp("fourfold_vae_bad_input_test");
const fs::path kTiny = fs::path(FOURFOLD_TEST_DATA_DIR) / "diffusers" / "wan2.1_tiny";
const fs::path kTiny22 = fs::path(FOURFOLD_TEST_DATA_DIR) / "diffusers" / "wan2.2_tiny";
constexpr const char* kWeights = "diffusion_pytorch_model.safetensors";
constexpr const char* kIndex = "diffusion_pytorch_model.safetensors.index.json";

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

json fixture_config(const fs::path& dir = kTiny) { return json::parse(read_regular_file(dir / "config.json")); }

// A copy of the tiny Wan 2.1 folder (config.json and the single weights file) to spoil.
fs::path tiny_copy(const std::string& suffix = "") {
  const fs::path dir = kTemp.make(suffix);
  fs::copy_file(kTiny / "config.json", dir / "config.json");
  fs::copy_file(kTiny / kWeights, dir / kWeights);
  return dir;
}

// The tiny folder's weights as two shards and an index naming `second` for the second shard's tensors.
fs::path sharded_copy(const std::string& second) {
  const fs::path dir = kTemp.make();
  fs::copy_file(kTiny / "config.json", dir / "config.json");
  std::vector<std::pair<std::string, Tensor>> a, b;
  for (auto& [name, t] : read_safetensors(kTiny / kWeights).tensors) (name < "decoder" ? a : b).emplace_back(name, t);
  write_safetensors(dir / "part-1.safetensors", a);
  write_safetensors(dir / "part-2.safetensors", b);
  json index = {{"metadata", json::object()}, {"weight_map", json::object()}};
  for (const auto& [name, t] : a) index["weight_map"][name] = "part-1.safetensors";
  for (const auto& [name, t] : b) index["weight_map"][name] = second;
  write(dir / kIndex, index.dump());
  return dir;
}

TEST(VaeFolderBadInput, AShardedFolderLoadsThroughTheSharedReader) {
  const WanVae vae = load_wan_vae(sharded_copy("part-2.safetensors"));
  EXPECT_EQ(vae.config().z_dim, 4);
}

// A FIFO as config.json or as the index blocked std::ifstream for ever.
TEST(VaeFolderBadInput, FifoConfigAndIndexAreRefusedWithoutBlocking) {
  const fs::path dir = tiny_copy();
  fs::remove(dir / "config.json");
  ASSERT_EQ(::mkfifo((dir / "config.json").c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(dir); }, {(dir / "config.json").string(), "a FIFO"}));
  const fs::path sharded = sharded_copy("part-2.safetensors");
  fs::remove(sharded / kIndex);
  ASSERT_EQ(::mkfifo((sharded / kIndex).c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(sharded); }, {(sharded / kIndex).string(), "a FIFO"}));
}

// A link to /dev/zero as config.json or index was read without end.
TEST(VaeFolderBadInput, SymlinkToDevZeroIsRefused) {
  const fs::path dir = tiny_copy();
  fs::remove(dir / "config.json");
  fs::create_symlink("/dev/zero", dir / "config.json");
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(dir); }, {"config.json", "character device"}));
  const fs::path sharded = sharded_copy("part-2.safetensors");
  fs::remove(sharded / kIndex);
  fs::create_symlink("/dev/zero", sharded / kIndex);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(sharded); }, {kIndex, "character device"}));
}

// An index naming a file outside the folder was followed there (an absolute name loaded whatever it named).
TEST(VaeFolderBadInput, IndexNamingFilesOutsideTheFolderIsRefused) {
  const fs::path elsewhere = kTemp.make("_elsewhere");
  const fs::path outside = elsewhere / "part-2.safetensors";
  for (const std::string& name : {std::string("../") + elsewhere.filename().string() + "/part-2.safetensors",
                                  outside.string(), std::string(".."), std::string("."), std::string("")}) {
    const fs::path dir = sharded_copy(name);
    fs::copy_file(dir / "part-2.safetensors", outside, fs::copy_options::overwrite_existing);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(dir); }, {kIndex, "a file name in this folder"}))
        << name;
  }
}

// A misshapen weight said "wan vae"; it names the file it came from, the tensor, expected and found.
TEST(VaeFolderBadInput, WeightMismatchNamesTheFileTheTensorExpectedAndFound) {
  const fs::path dir = tiny_copy();
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (auto& [name, t] : read_safetensors(kTiny / kWeights).tensors)
    tensors.emplace_back(name, name == "decoder.conv_out.weight" ? Tensor::zeros({3, 4, 3, 3, 1}, DType::f32) : t);
  write_safetensors(dir / kWeights, tensors);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(dir); },
                                       {(dir / kWeights).string(), "tensor decoder.conv_out.weight",
                                        "[3, 4, 3, 3, 3]", "found float32 [3, 4, 3, 3, 1]"}));
  tensors.erase(std::find_if(tensors.begin(), tensors.end(),
                             [](const auto& p) { return p.first == "decoder.conv_out.weight"; }));
  write_safetensors(dir / kWeights, tensors);
  EXPECT_TRUE(throws_with<FormatError>([&] { load_wan_vae(dir); },
                                       {dir.string(), "tensor decoder.conv_out.weight", "missing"}));
}

// Sizes that overflowed (patch_size^2 -> SIGFPE; frames x scale_factor_temporal -> an undersized buffer) or built
// for ever (num_res_blocks): each bounded, refused from config.json alone, naming the key.
TEST(VaeConfigBadInput, HugeSizesAreRefusedNamingTheKey) {
  const std::vector<std::pair<const char*, int64_t>> cases = {
      {"patch_size", int64_t(1) << 32},       {"scale_factor_temporal", int64_t(1) << 62},
      {"num_res_blocks", 10000000},            {"base_dim", int64_t(1) << 40},
      {"z_dim", 100000},                       {"in_channels", int64_t(1) << 33},
      {"decoder_base_dim", 5000},              {"scale_factor_spatial", std::numeric_limits<int64_t>::max()}};
  for (const auto& [key, value] : cases) {
    json c = fixture_config();
    c[key] = value;
    EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "v/config.json"); },
                                         {"v/config.json", std::string("field '") + key + "'", "an integer in [1, "}))
        << key;
  }
  json c = fixture_config();
  c["dim_mult"] = json::array({1, 2, 4, 4, 4, 4, 4, 4, 4});
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "config.json"); }, {"field 'dim_mult'"}));
  c = fixture_config();
  c["dim_mult"] = json::array({1, 2, 4, 1000});
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "config.json"); }, {"field 'dim_mult'"}));
  c = fixture_config();
  c["patch_size"] = 18446744073709551615ull;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "config.json"); }, {"field 'patch_size'"}));
}

// Scale factors that disagree with the network: the encoder's chunks and the decoder's output buffer were sized
// from them and ended in Tensor::narrow errors.
TEST(VaeConfigBadInput, ScaleFactorsMustBeWhatTheNetworkDoes) {
  json c = fixture_config();
  c["scale_factor_temporal"] = 8;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "v/config.json"); },
                                       {"v/config.json", "field 'scale_factor_temporal'", "expected 4", "found 8"}));
  c = fixture_config();
  c["scale_factor_spatial"] = 16;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "v/config.json"); },
                                       {"v/config.json", "field 'scale_factor_spatial'", "expected 8", "found 16"}));
  c = fixture_config();
  c["temperal_downsample"] = json::array({true, true, true});
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "c.json"); },
                                       {"field 'scale_factor_temporal'", "expected 8", "found 4"}));
  c = fixture_config(kTiny22);   // Wan 2.2: 2^3 from dim_mult times patch_size 2
  c["patch_size"] = 1;
  c["in_channels"] = c["out_channels"] = 3;
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "c.json"); },
                                       {"field 'scale_factor_spatial'", "expected 8", "found 16"}));
  // Every preset and both fixture folders describe their networks.
  for (const std::string& preset : wan_vae_preset_names()) EXPECT_NO_THROW(check_wan_vae_config(wan_vae_preset(preset), preset));
  EXPECT_NO_THROW(load_wan_vae(kTiny));
  EXPECT_NO_THROW(load_wan_vae(kTiny22));
}

// Wan 2.2's shortcut blocks need channels that divide; a config where they do not ended in a view error mid-decode.
TEST(VaeConfigBadInput, ResidualShortcutChannelsMustDivide) {
  json c = fixture_config(kTiny22);
  c["dim_mult"] = json::array({1, 3, 4, 4});
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "c.json"); },
                                       {"c.json", "field 'dim_mult'", "AvgDown3D"}));
  c = fixture_config(kTiny22);
  c["dim_mult"] = json::array({1, 2, 3, 8});
  EXPECT_TRUE(throws_with<FormatError>([&] { parse_wan_vae_config(c.dump(), "c.json"); }, {"field 'dim_mult'"}));
}

// Latent sizes times the scale factors, and the decoded frame count, in checked math before any allocation.
TEST(VaeConfigBadInput, LatentSizesAreCheckedBeforeAllocation) {
  const WanVae vae = load_wan_vae(kTiny);
  EXPECT_TRUE(throws_with<FormatError>([&] { vae.config().decoded_frames(int64_t(1) << 62); }, {"latents"}));
  for (const Shape& shape : {Shape{1, 4, 1, 0, int64_t(1) << 40}, Shape{1, 4, int64_t(1) << 60, 1, 0},
                             Shape{0, 4, 1, 2, 2}})
    EXPECT_TRUE(throws_with<ShapeError>([&] { vae.decode(Tensor::zeros(shape, DType::f32)); },
                                        {"latents", shape_string(shape), "at least one"}))
        << shape_string(shape);
}

// A PNG file of `width` x `height` 8-bit grey, its IDAT inflating to `rows` zero rows (fewer than height: the
// header alone is what a reader must check).
std::string grey_png(uint32_t width, uint32_t height, uint32_t rows) {
  const auto be32 = [](uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  };
  const auto chunk = [&](const std::string& type, const std::string& data) {
    const std::string body = type + data;
    return be32(uint32_t(data.size())) + body +
           be32(uint32_t(crc32(0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
  };
  std::string idat;
  z_stream z{};
  EXPECT_EQ(deflateInit(&z, 9), Z_OK);
  const std::vector<unsigned char> row(width + 1, 0);
  std::vector<unsigned char> buffer(1 << 16);
  for (uint32_t r = 0; r <= rows; ++r) {
    z.next_in = const_cast<Bytef*>(row.data());
    z.avail_in = r < rows ? uInt(row.size()) : 0;
    const int flush = r < rows ? Z_NO_FLUSH : Z_FINISH;
    do {
      z.next_out = buffer.data();
      z.avail_out = uInt(buffer.size());
      deflate(&z, flush);
      idat.append(reinterpret_cast<char*>(buffer.data()), buffer.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  const std::string ihdr = be32(width) + be32(height) + std::string{8, 0, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", "");
}

// A ~100-byte PNG declaring 1,000,000 x 1,400 pixels, and a bomb whose IDAT inflates to 100 Mpixel: refused from
// the header, naming the file, before the pixels are allocated (the old reader sized its buffer with libpng's
// 32-bit PNG_IMAGE_SIZE).
TEST(PngFramesBadInput, OversizedDeclaredPngIsRefusedBeforeAllocation) {
  const fs::path dir = kTemp.make();
  const std::string tiny = grey_png(1000000, 1400, 0);
  EXPECT_LT(tiny.size(), 2000u);
  write(dir / "frame_0000.png", tiny);
  EXPECT_TRUE(throws_with<FormatError>([&] { read_png_frames(dir); },
                                       {(dir / "frame_0000.png").string(), "1000000 x 1400", "at most 67108864 pixels"}));
  const fs::path bomb_dir = kTemp.make("_bomb");
  const std::string bomb = grey_png(10000, 10000, 10000);
  EXPECT_LT(bomb.size(), 200000u);
  write(bomb_dir / "frame_0000.png", bomb);
  EXPECT_TRUE(throws_with<FormatError>([&] { read_png_frames(bomb_dir); }, {"frame_0000.png", "pixels"}));
}

// Frames each within the per-frame cap but too many pixels in all, or too many frames: refused naming the folder
// before any is decoded.
TEST(PngFramesBadInput, TotalPixelsAndFrameCountAreCapped) {
  const fs::path dir = kTemp.make();
  for (int f = 0; f < 9; ++f) write(dir / fmt::format("frame_{:04d}.png", f), grey_png(8000, 8000, 0));
  EXPECT_TRUE(throws_with<FormatError>([&] { read_png_frames(dir); }, {dir.string(), "pixels in all", "9 frames"}));
  const fs::path many = kTemp.make("_many");
  const std::string one = grey_png(1, 1, 1);
  for (int f = 0; f < 4097; ++f) write(many / fmt::format("frame_{:04d}.png", f), one);
  EXPECT_TRUE(throws_with<FormatError>([&] { read_png_frames(many); }, {many.string(), "at most 4096"}));
}

// A *.png that is a FIFO was silently left out of the video (and would block if opened).
TEST(PngFramesBadInput, APngThatIsNotARegularFileIsRefused) {
  const fs::path dir = kTemp.make();
  write(dir / "frame_0000.png", grey_png(2, 2, 2));
  ASSERT_EQ(::mkfifo((dir / "frame_0001.png").c_str(), 0600), 0);
  EXPECT_TRUE(throws_with<FormatError>([&] { read_png_frames(dir); }, {"frame_0001.png", "a FIFO"}));
  fs::remove(dir / "frame_0001.png");
  const Tensor video = read_png_frames(dir);
  EXPECT_EQ(video.shape(), (Shape{1, 3, 1, 2, 2}));
  EXPECT_EQ(video.to_vector()[0], -1.0);
}

// NaN pixels were cast to bytes (undefined); a video holding NaN is refused naming the frame and the count, and
// no frame is written.
TEST(PngFramesBadInput, NanVideoIsRefusedNamingTheFrame) {
  const fs::path dir = kTemp.make() / "frames";
  std::vector<double> values(3 * 3 * 2 * 2, 0.5);
  values[1 * 4 + 3] = std::nan("");        // channel 0, frame 1
  values[(2 * 3 + 1) * 4] = std::nan("");  // channel 2, frame 1
  const Tensor video = Tensor::from_vector(values, {1, 3, 3, 2, 2}, DType::f32);
  EXPECT_TRUE(throws_with<ValueError>([&] { write_png_frames(dir, video); }, {"2 NaN values in frame 1 of 3"}));
  EXPECT_FALSE(fs::exists(dir));
  // Infinities clamp to the range's ends, as diffusers clamps.
  values[1 * 4 + 3] = std::numeric_limits<double>::infinity();
  values[(2 * 3 + 1) * 4] = -std::numeric_limits<double>::infinity();
  write_png_frames(dir, Tensor::from_vector(values, {1, 3, 3, 2, 2}, DType::f32));
  const std::vector<double> back = read_png_frames(dir).to_vector();
  EXPECT_EQ(back[1 * 4 + 3], 1.0);
  EXPECT_EQ(back[(2 * 3 + 1) * 4], -1.0);
}

}  // namespace
}  // namespace fourfold::model
