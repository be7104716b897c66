// The Wan 2.1 VAE against diffusers on a folder diffusers wrote (tests/data/diffusers, made by
// scripts/make_diffusers_fixtures.py): encode, decode of the encoder's latents and of seeded latents.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "check/error_metrics.h"
#include "fourfold/errors.h"
#include "model/formats/safetensors.h"
#include "model/vae/wan_vae.h"
#include "model/temp_dirs.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
const fs::path kTiny = fs::path(FOURFOLD_TEST_DATA_DIR) / "diffusers" / "wan2.1_tiny";

std::map<std::string, Tensor> golden() {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : read_safetensors(kTiny / "golden.safetensors").tensors) out[name] = t;
  return out;
}

double psnr(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  const double db = compare_to_reference(got, want.to(DType::f64)).psnr_db;
  std::printf("PSNR against diffusers: %.1f dB\n", db);   // the figure the closing notes quote
  return db;
}

TEST(WanVae, ReadsTheConfigDiffusersWrote) {
  const WanVae vae = load_wan_vae(kTiny);
  EXPECT_EQ(vae.config().z_dim, 4);
  EXPECT_EQ(vae.config().dim_mult, (std::vector<int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(vae.config().decoder_base_dim, 4);   // null in the file: base_dim
  EXPECT_EQ(vae.config().latents_std.size(), 4u);
  EXPECT_EQ(vae.config().decoded_frames(3), 9);
}

TEST(WanVae, DecodesTheEncodersLatentsAsDiffusersDoes) {
  const auto g = golden();
  const WanVae vae = load_wan_vae(kTiny);
  const Tensor decoded = vae.decode(g.at("latent_mean"));
  EXPECT_GE(psnr(decoded, g.at("decoded")), 100.0);
}

TEST(WanVae, DecodesSeededLatentsFrameByFrameAsDiffusersDoes) {
  const auto g = golden();
  const WanVae vae = load_wan_vae(kTiny);
  int64_t frames_seen = 0;
  const Tensor decoded = vae.decode(g.at("z"), [&](int64_t i, int64_t n) {
    EXPECT_EQ(i, frames_seen++);
    EXPECT_EQ(n, 3);
  });
  EXPECT_EQ(frames_seen, 3);
  EXPECT_GE(psnr(decoded, g.at("z_decoded")), 100.0);
}

TEST(WanVae, EncodesAsDiffusersDoes) {
  const auto g = golden();
  const WanVae vae = load_wan_vae(kTiny);
  EXPECT_GE(psnr(vae.encode(g.at("video")), g.at("latent_mean")), 100.0);
}

TEST(WanVae, TiledDecodeAndEncodeBlendTheirTilesAsDiffusersDoes) {
  const auto g = golden();
  const WanVae vae = load_wan_vae(kTiny);
  const WanVae::Tiling tiling{32, 16};   // diffusers' enable_tiling(32, 32, 16, 16): a 2 x 2 grid here
  int64_t tiles = 0;
  const Tensor decoded = vae.decode_tiled(g.at("z"), tiling, [&](int64_t, int64_t n) {
    ++tiles;
    EXPECT_EQ(n, 6);   // latent 4 x 6 in tiles of 4 every 2: 2 rows, 3 columns
  });
  EXPECT_EQ(tiles, 6);
  EXPECT_GE(psnr(decoded, g.at("z_tiled_decoded")), 100.0);
  EXPECT_LT(psnr(decoded, g.at("z_decoded")), 80.0);   // tiling changes the output: the test above is not vacuous
  EXPECT_GE(psnr(vae.encode_tiled(g.at("video"), tiling), g.at("tiled_latent_mean")), 100.0);
  EXPECT_THROW(vae.decode_tiled(g.at("z"), {30, 16}), ValueError);   // not multiples of 8
}

// Wan 2.2 TI2V's layout: residual blocks with AvgDown3D / DupUp3D shortcuts, patch size 2, 12 channels.
const fs::path kTiny22 = fs::path(FOURFOLD_TEST_DATA_DIR) / "diffusers" / "wan2.2_tiny";

TEST(WanVae, Wan22ResidualVariantEncodesAndDecodesAsDiffusersDoes) {
  std::map<std::string, Tensor> g;
  for (auto& [name, t] : read_safetensors(kTiny22 / "golden.safetensors").tensors) g[name] = t;
  const WanVae vae = load_wan_vae(kTiny22);
  EXPECT_TRUE(vae.config().is_residual);
  EXPECT_EQ(vae.config().patch_size, 2);
  EXPECT_GE(psnr(vae.encode(g.at("video")), g.at("latent_mean")), 100.0);
  EXPECT_GE(psnr(vae.decode(g.at("latent_mean")), g.at("decoded")), 100.0);
  EXPECT_GE(psnr(vae.decode(g.at("z")), g.at("z_decoded")), 100.0);
  const WanVae::Tiling tiling{32, 16};
  EXPECT_GE(psnr(vae.decode_tiled(g.at("z"), tiling), g.at("z_tiled_decoded")), 100.0);
  EXPECT_GE(psnr(vae.encode_tiled(g.at("video"), tiling), g.at("tiled_latent_mean")), 100.0);
}

TEST(WanVae, BadFoldersAndInputsNameWhatIsWrong) {
  const testing::TempDirs dirs("wan_vae_test");
  EXPECT_THROW(load_wan_vae(dirs.make()), FormatError);
  // A patch size the channels do not divide into: refused by name, not misread.
  std::ifstream in(kTiny / "config.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Latent statistics come in pairs: a std without its mean is refused, not read past its end.
  std::string half = text;
  half.replace(half.find("\"latents_mean\""), 14, "\"unused_field\"");
  try {
    parse_wan_vae_config(half, "config.json");
    FAIL() << "latents_std without latents_mean accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'latents_mean'"), std::string::npos) << e.what();
  }
  const auto at = text.find("\"patch_size\": null");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "\"patch_size\": 2");
  try {
    parse_wan_vae_config(text, "config.json");
    FAIL() << "patch_size 2 with 3 channels accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'in_channels'"), std::string::npos) << e.what();
  }
  // A weight missing from the file.
  std::map<std::string, Tensor> weights;
  for (auto& [name, t] : read_safetensors(kTiny / "diffusion_pytorch_model.safetensors").tensors)
    if (name != "decoder.conv_out.weight") weights[name] = t;
  try {
    WanVae(load_wan_vae(kTiny).config(), weights, DType::f32);
    FAIL() << "missing weight accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("decoder.conv_out.weight"), std::string::npos) << e.what();
  }
  const WanVae vae = load_wan_vae(kTiny);
  EXPECT_THROW(vae.decode(Tensor::zeros({1, 5, 1, 4, 4}, DType::f32)), ShapeError);
  EXPECT_THROW(vae.encode(Tensor::zeros({1, 3, 4, 16, 16}, DType::f32)), ShapeError);   // not 1 + 4k frames
}

}  // namespace
}  // namespace fourfold::model
