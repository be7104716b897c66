// Per-test scratch folders under the temp directory for the model file tests: one name prefix per test file,
// the process id and the test's name; everything the process made is removed when the tests end.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

namespace fourfold::model::testing {

class TempDirs {
 public:
  explicit TempDirs(std::string prefix) : prefix_(std::move(prefix) + "_" + std::to_string(::getpid()) + "_") {}
  ~TempDirs() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec))
      if (entry.path().filename().string().rfind(prefix_, 0) == 0) std::filesystem::remove_all(entry.path(), ec);
  }
  TempDirs(const TempDirs&) = delete;
  TempDirs& operator=(const TempDirs&) = delete;

  // A fresh, empty folder named after the running test (plus `suffix`).
  std::filesystem::path make(const std::string& suffix = "") const {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        (prefix_ + ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
  }

 private:
  std::string prefix_;
};

}  // namespace fourfold::model::testing
