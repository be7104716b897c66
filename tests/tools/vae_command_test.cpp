// `fourfold vae decode | roundtrip` and `make-model --preset wan2.1-vae-tiny` as a user calls them: PNG frames
// written and read back, the records printed, the diffusers folder made by make-model loaded, bad input named.
#include <filesystem>

#include <gtest/gtest.h>

#include "model/temp_dirs.h"
#include "model/formats/png_frames.h"
#include "model/vae/wan_vae.h"
#include "tools/cli_runner.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;
using fourfold::testing::fourfold;

const testing::TempDirs kTemp("fourfold_vae_command_test");
const fs::path kTiny = fs::path(FOURFOLD_TEST_DATA_DIR) / "diffusers" / "wan2.1_tiny";

TEST(VaeCommand, DecodeWritesOnePngPerFrameAndPrintsTheRecords) {
  const fs::path out = kTemp.make();
  const auto r = fourfold("vae decode --model " + kTiny.string() +
                          " --latent-frames 2 --latent-height 2 --latent-width 3 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* line : {"throughput: 5 frames of 24x16", "op time", "conv3d", "memory (outside the allocator)",
                           "pad calls: ", "wrote 5 PNG frames"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  const Tensor frames = read_png_frames(out);
  EXPECT_EQ(frames.shape(), (Shape{1, 3, 5, 16, 24}));
}

TEST(VaeCommand, RoundTripReadsPngFramesAndComparesAgainstThem) {
  const fs::path in = kTemp.make("_in"), out = kTemp.make("_out");
  ASSERT_EQ(fourfold("vae decode --model " + kTiny.string() +
                     " --latent-frames 2 --latent-height 2 --latent-width 2 --out " + in.string()).status, 0);
  const auto r = fourfold("vae roundtrip --model " + kTiny.string() + " --frames-dir " + in.string() +
                          " --against-reference --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("latents [1, 4, 2, 2, 2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correctness: round trip PSNR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correctness: decode against the reference tier: PSNR"), std::string::npos) << r.out;
  EXPECT_EQ(read_png_frames(out).size(2), 10);   // decoded_* and input_* frames, 5 each
}

TEST(VaeCommand, TiledDecodePrintsAProgressLineWithTheReservedBytesPerTile) {
  const auto r = fourfold("vae decode --model " + kTiny.string() +
                          " --latent-frames 1 --latent-height 4 --latent-width 6 --tile 32 --tile-stride 16");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("decode: tile 6/6 done, allocator reserved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory (allocator) per tile: reserved after tile 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("growth from tile 2 on"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("throughput: 1 frames of 48x32"), std::string::npos) << r.out;
}

TEST(VaeCommand, MakeModelWritesADiffusersFolderTheLoaderReads) {
  const fs::path dir = kTemp.make();
  const auto r = fourfold("make-model --preset wan2.1-vae-tiny --dtype f32 --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const WanVae vae = load_wan_vae(dir);
  EXPECT_EQ(vae.config().base_dim, 8);
  EXPECT_EQ(vae.config().z_dim, 4);
  EXPECT_EQ(fourfold("make-model --preset wan2.1-vae-tiny --dtype fp8 --out " + dir.string()).status, 2);
}

TEST(VaeCommand, Wan22PresetRoundTripsThroughPatches) {
  const auto r = fourfold("vae roundtrip --preset wan2.2-vae-tiny --frames 5 --height 32 --width 32");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Wan 2.2 residual, patch size 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("latents [1, 8, 2, 2, 2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("throughput: 5 frames of 32x32"), std::string::npos) << r.out;
}

TEST(VaeCommand, BadInputIsNamed) {
  auto r = fourfold("vae decode --model /nonexistent/vae");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/vae/config.json"), std::string::npos) << r.out;
  r = fourfold("vae roundtrip --preset wan2.1-vae-tiny --frames 4 --height 16 --width 16");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("1 + 4 k frames"), std::string::npos) << r.out;
  r = fourfold("vae decode --preset nope");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("wan2.1-vae-tiny"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fourfold::model
