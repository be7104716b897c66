// The bad-input classes at the command line: each exits 2 with a message naming the file or option, never an
// abort, a hang or a silently different run; and a killed check never leaves a mixed or truncated record set.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check/records.h"
#include "model/llm/model_maker.h"
#include "model/temp_dirs.h"
#include "tools/cli_runner.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

const testing::TempDirs kTemp("fourfold_bad_input_command_test");
const fs::path kData = FOURFOLD_TEST_DATA_DIR;

using Result = fourfold::testing::CliResult;
using fourfold::testing::fourfold;
using fourfold::testing::shell;

::testing::AssertionResult refused(const std::string& args, std::vector<std::string> fragments) {
  return fourfold::testing::refused_with(fourfold(args), fragments) << " (for " << args << ")";
}

const std::string kQuickCheck = "check --suite softmax --rows-per-suite 1 --repeats 1 --no-end-to-end";

TEST(BadInputCommand, OptionsThatWouldChangeOrDisableARuleAreRefused) {
  EXPECT_TRUE(refused("compare a.json b.json --psnr-drop-db nan", {"--psnr-drop-db"}));
  EXPECT_TRUE(refused("check --rows-per-suite -1", {"--rows-per-suite"}));
  EXPECT_TRUE(refused("check --reference-cap -5", {"--reference-cap"}));
  EXPECT_TRUE(refused("check --e2e-contexts 512,-3", {"--e2e-contexts"}));
  EXPECT_TRUE(refused("run --temperature nan", {"--temperature"}));
  EXPECT_TRUE(refused("bench ops --min-sample-ms nan", {"--min-sample-ms"}));
  EXPECT_TRUE(refused("run --model " + (kData / "transformers" / "qwen3").string() + " --layers 1", {"--layers"}));
}

TEST(BadInputCommand, OutputPathsThatCannotBeFoldersOrFilesAreErrors) {
  const fs::path dir = kTemp.make();
  std::ofstream(dir / "a_file") << "x";
  EXPECT_TRUE(refused(kQuickCheck + " --out " + (dir / "a_file").string(), {"--out", "a_file"}));
  EXPECT_TRUE(refused("run --gen 2 --json " + (dir / "missing" / "r.json").string(), {"r.json"}));
  EXPECT_TRUE(refused("compare /dev/zero /dev/zero", {"/dev/zero", "character device"}));
}

// Threads that cannot start (here: an address-space limit too small for their stacks) are an error naming
// --threads, not an abort. ASan's shadow memory cannot live under such a limit, so that build skips it.
TEST(BadInputCommand, ThreadsThatCannotStartAreAnErrorNamingTheOption) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit and AddressSanitizer do not mix";
#else
  const Result r = shell("ulimit -v 400000; exec " + std::string(FOURFOLD_CLI) + " run --threads 200 --gen 2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--threads"), std::string::npos) << r.out;
#endif
}

TEST(BadInputCommand, ContextsPastTheTrainedLengthNeedTheFlagAndSayIt) {
  const std::string model = (kData / "transformers" / "qwen3").string();   // max_position_embeddings 256
  EXPECT_TRUE(refused("run --model " + model + " --prompt-tokens 250 --gen 10", {"max_position_embeddings 256"}));
  const Result r = fourfold("run --model " + model + " --prompt-tokens 250 --gen 10 --ignore-eos --allow-past-max-position");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning: 260 positions run past max_position_embeddings 256"), std::string::npos) << r.out;
  EXPECT_TRUE(refused("check --suite softmax --rows-per-suite 1 --repeats 1 --model " + model + " --e2e-contexts 512",
                      {"max_position_embeddings 256"}));
}

TEST(BadInputCommand, RunsOfDifferentWorkDoNotCompare) {
  const fs::path dir = kTemp.make();
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  ASSERT_EQ(fourfold("run --gen 3 --json " + a).status, 0);
  ASSERT_EQ(fourfold("run --gen 5 --json " + b).status, 0);
  EXPECT_TRUE(refused("compare " + a + " " + b, {"workload.parameters", "gen=3", "gen=5"}));
  const std::string c = (dir / "c.json").string();
  ASSERT_EQ(fourfold("run --gen 3 --temperature 0.7 --json " + c).status, 0);
  EXPECT_TRUE(refused("compare " + a + " " + c, {"workload.parameters", "sampling"}));
  const std::string d = (dir / "d.json").string();
  ASSERT_EQ(fourfold("run --gen 3 --json " + d).status, 0);
  EXPECT_NE(fourfold("compare " + a + " " + d).status, 2);   // the same work compares
}

// kill -9 at any moment of `check --out D`: D holds the earlier run's complete set, or the new complete set.
TEST(BadInputCommand, AKilledCheckLeavesACompleteSet) {
  const fs::path out = kTemp.make() / "out";
  ASSERT_EQ(fourfold(kQuickCheck + " --out " + out.string()).status, 0);
  const auto consistent = [&] {
    for (const char* f : {"records.json", "baseline.json", "candidate.json", "report.md", "report.html"})
      if (!fs::exists(out / f)) return ::testing::AssertionFailure() << f << " missing";
    read_check_result((out / "records.json").string());
    read_record_set((out / "baseline.json").string());
    read_record_set((out / "candidate.json").string());
    return ::testing::AssertionSuccess();
  };
  ASSERT_TRUE(consistent());
  for (int delay_ms : {50, 300, 700, 1200}) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string args = kQuickCheck + " --out " + out.string();
      execl("/bin/sh", "sh", "-c", ("exec " + std::string(FOURFOLD_CLI) + " " + args + " >/dev/null 2>&1").c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(consistent()) << "killed after " << delay_ms << " ms";
  }
}

}  // namespace
}  // namespace fourfold::model
