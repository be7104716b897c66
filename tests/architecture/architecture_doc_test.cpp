// docs/architecture.md (with the README's Architecture section) names every folder under src/ and every page
// under docs/, so that a new folder or page cannot leave the map silently out of date.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "architecture/include_rules.h"

namespace fourfold::architecture {
namespace {

const std::filesystem::path kRoot = source_root(FOURFOLD_TEST_DATA_DIR);

// The README from "## Architecture" to the next section.
std::string readme_architecture_section() {
  const std::string readme = read_text(kRoot / "README.md");
  const auto start = readme.find("\n## Architecture");
  if (start == std::string::npos) return "";
  const auto end = readme.find("\n## ", start + 1);
  return readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string architecture_text() { return read_text(kRoot / "docs/architecture.md") + readme_architecture_section(); }

TEST(ArchitectureDoc, TheReadmeHasAnArchitectureSection) { EXPECT_FALSE(readme_architecture_section().empty()); }

TEST(ArchitectureDoc, NamesEverySourceFolder) {
  const std::string text = architecture_text();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot / "src")) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().lexically_relative(kRoot).generic_string() + "/";
    EXPECT_NE(text.find(folder), std::string::npos)
        << folder << " is named neither in docs/architecture.md nor in README.md's Architecture section";
  }
}

// tests/ mirrors src/: a folder of tests is named after the source folder it tests (tests/model/llm/ tests
// src/model/llm/), except the harness's own folders (support, data, architecture, tools: the command's tests).
TEST(ArchitectureDoc, TestsMirrorTheSourceFolders) {
  const std::filesystem::path tests = kRoot / "tests";
  for (auto it = std::filesystem::recursive_directory_iterator(tests); it != std::filesystem::recursive_directory_iterator(); ++it) {
    if (!it->is_directory()) continue;
    const std::filesystem::path rel = it->path().lexically_relative(tests);
    const std::string top = rel.begin()->string();
    if (top == "support" || top == "data" || top == "architecture" || top == "tools") {
      it.disable_recursion_pending();
      continue;
    }
    EXPECT_TRUE(std::filesystem::is_directory(kRoot / "src" / rel))
        << "tests/" << rel.generic_string() << "/ has no src/" << rel.generic_string() << "/ to mirror";
  }
}

TEST(ArchitectureDoc, NamesEveryPageOfDocs) {
  const std::string text = architecture_text();
  for (const auto& entry : std::filesystem::directory_iterator(kRoot / "docs")) {
    if (entry.path().extension() != ".md") continue;
    const std::string page = "docs/" + entry.path().filename().string();
    EXPECT_NE(text.find(page), std::string::npos)
        << page << " is named neither in docs/architecture.md nor in README.md's Architecture section";
  }
}

}  // namespace
}  // namespace fourfold::architecture
