// The include order of docs/architecture.md, checked over every file under src/ and tools/, and the checker
// itself on small in-memory examples.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "architecture/include_rules.h"

namespace fourfold::architecture {
namespace {

const std::filesystem::path kRoot = source_root(FOURFOLD_TEST_DATA_DIR);

std::vector<Violation> check(const std::string& path, const std::string& text) {
  return check_includes(path, text, [](const std::string& name) { return name == "beside.h"; });
}

TEST(Layers, TheTreeFollowsTheOrder) {
  const std::vector<Violation> found = check_tree(kRoot);
  std::string listing;
  for (const Violation& v : found) listing += v.describe() + "\n";
  EXPECT_TRUE(found.empty()) << found.size() << " include(s) against docs/architecture.md:\n" << listing;
}

TEST(Layers, ModelSourcesSitInItsSubfolders) {
  for (const auto& entry : std::filesystem::directory_iterator(kRoot / "src/model"))
    EXPECT_TRUE(entry.is_directory()) << entry.path() << ": src/model holds only formats/, tokenizer/, llm/, vae/";
}

TEST(Layers, DownwardIncludesPass) {
  EXPECT_TRUE(check("src/ops/softmax.cpp", "#include \"backends/kernel_table.h\"\n#include \"core/checked_math.h\"\n"
                                           "#include \"fourfold/tensor.h\"\n#include \"beside.h\"\n")
                  .empty());
  EXPECT_TRUE(check("tools/fourfold/main.cpp", "#include \"check/records.h\"\n#include \"model/llm/decoder.h\"\n").empty());
  EXPECT_TRUE(check("src/model/llm/decoder.cpp", "#include \"model/formats/safetensors.h\"\n").empty());
  EXPECT_TRUE(check("src/backends/generic/primitives.cpp", "#include \"backends/cpu/gemm.h\"\n").empty());
}

TEST(Layers, AnUpwardIncludeNamesTheFileTheLineAndBothLayers) {
  const auto found = check("src/core/tensor.cpp", "#include <vector>\n\n#include \"ops/dispatch.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].file, "src/core/tensor.cpp");
  EXPECT_EQ(found[0].line, 3);
  EXPECT_NE(found[0].message.find("core may not include ops"), std::string::npos) << found[0].message;
}

TEST(Layers, APublicHeaderCountsAsItsLayer) {
  const auto found = check("src/core/device.cpp", "#include \"fourfold/ops.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("core may not include ops"), std::string::npos) << found[0].message;
  const auto unknown = check("src/core/device.cpp", "#include \"fourfold/unheard_of.h\"\n");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].message.find("in no layer"), std::string::npos) << unknown[0].message;
}

TEST(Layers, OnlyOpsReachesTheBackends) {
  const auto found = check("src/check/roofline_probes.cpp", "#include \"backends/cpu/isa.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("reached only through ops"), std::string::npos) << found[0].message;
  EXPECT_EQ(check("tools/fourfold/run_command.cpp", "#include \"backends/cpu/isa.h\"\n").size(), 1u);
}

TEST(Layers, SiblingFoldersGoOneWay) {
  EXPECT_EQ(check("src/model/llm/decoder.cpp", "#include \"model/vae/wan_vae.h\"\n").size(), 1u);
  EXPECT_EQ(check("src/model/vae/wan_vae.cpp", "#include \"model/llm/decoder.h\"\n").size(), 1u);
  EXPECT_EQ(check("src/model/formats/npy.cpp", "#include \"model/tokenizer/tokenizer.h\"\n").size(), 1u);
  EXPECT_EQ(check("src/backends/cpu/gemm.cpp", "#include \"backends/generic/primitives.h\"\n").size(), 1u);
  EXPECT_EQ(check("src/backends/reference/softmax.cpp", "#include \"backends/cpu/isa.h\"\n").size(), 1u);
  EXPECT_EQ(check("src/backends/kernel_table.h", "#include \"backends/cpu/isa.h\"\n").size(), 1u);
  const auto found = check("src/backends/generic/softmax.cpp", "#include \"backends/cpu/cpu_ops.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("only through its shared headers"), std::string::npos) << found[0].message;
}

TEST(Layers, AFileAtModelsRootIsRefused) {
  EXPECT_EQ(check("src/model/decoder.cpp", "#include \"model/formats/safetensors.h\"\n").size(), 1u);
}

TEST(Layers, ABareIncludeMustBeBesideTheFile) {
  EXPECT_TRUE(check("src/ops/softmax.cpp", "#include \"beside.h\"\n").empty());
  EXPECT_EQ(check("src/ops/softmax.cpp", "#include \"elsewhere.h\"\n").size(), 1u);
}

}  // namespace
}  // namespace fourfold::architecture
