// The command line's outputs never replace what is not theirs, and its options are checked before the work
// starts: a symlink stays a link, a FIFO or device is not replaced, a directory output is refused before the run,
// folder outputs (vae --out, quantize --out) are swapped in whole and refuse foreign files, empty values are
// refused naming the option, a huge prompt file is refused by its size, a model that cannot fit is refused
// naming its size and what is available, and running out of memory names the input.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/scratch_device.h"
#include "model/llm/model_folder.h"
#include "model/llm/model_maker.h"
#include "model/temp_dirs.h"
#include "support/dead_pid.h"
#include "tools/cli_runner.h"

namespace fourfold::model {
namespace {

namespace fs = std::filesystem;

const testing::TempDirs kTemp("fourfold_output_and_option_checks_test");
const fs::path kData = FOURFOLD_TEST_DATA_DIR;

using Result = fourfold::testing::CliResult;
using fourfold::testing::fourfold;
using fourfold::testing::shell;

::testing::AssertionResult refused(const Result& r, std::vector<std::string> fragments) {
  return fourfold::testing::refused_with(r, fragments);
}

using fourfold::testing::dead_pid;

size_t files_in(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// A tiny-moe folder (vocab 1024, max_position_embeddings 4096) with a tokenizer.
fs::path model_with_tokenizer() {
  const fs::path dir = kTemp.make("_model");
  make_model("tiny-moe", dir, "bf16", 7, std::nullopt);
  fs::copy_file(kData / "tokenizers" / "qwen2.json", dir / "tokenizer.json");
  return dir;
}

TEST(OutputAndOptionChecks, RunOutputsFollowSymlinksAndLeaveDevicesAndFifosInPlace) {
  const fs::path dir = kTemp.make();
  fs::create_symlink("record.json", dir / "link.json");
  ASSERT_EQ(::mkfifo((dir / "fifo.npy").c_str(), 0600), 0);
  const fs::path device = fourfold::testing::scratch_null_device(dir);
  const fs::path logits = device.empty() ? dir / "logits.npy" : device;
  const Result r = fourfold(fmt::format("run --gen 2 --json {} --logits {}", (dir / "link.json").string(),
                                        logits.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_GT(fs::file_size(dir / "record.json"), 100u);
  if (!device.empty()) EXPECT_TRUE(fs::is_character_file(device));
  // A FIFO nothing reads: an error naming it, and it stays a FIFO.
  EXPECT_TRUE(refused(fourfold("run --gen 2 --logits " + (dir / "fifo.npy").string()), {"fifo.npy", "FIFO"}));
  EXPECT_TRUE(fs::is_fifo(dir / "fifo.npy"));
  EXPECT_EQ(files_in(dir), 4u);   // no temporary left
}

TEST(OutputAndOptionChecks, OutputPathsThatCannotBeWrittenAreRefusedBeforeTheRun) {
  const fs::path dir = kTemp.make();
  for (const std::string& args : {"run --gen 2 --json " + dir.string(), "run --gen 2 --logits " + dir.string(),
                                  "run --gen 2 --logits " + (dir / "no" / "l.npy").string()}) {
    const Result r = fourfold(args);
    EXPECT_TRUE(refused(r, {args.find("--json") != std::string::npos ? "--json" : "--logits"})) << args;
    EXPECT_EQ(r.out.find("tokens:"), std::string::npos) << "the run went ahead: " << r.out;
  }
  const Result v = fourfold("vae decode --npy " + dir.string());
  EXPECT_TRUE(refused(v, {"--npy", "directory"}));
  EXPECT_EQ(v.out.find("throughput"), std::string::npos) << v.out;
  EXPECT_TRUE(fs::is_directory(dir));
}

TEST(OutputAndOptionChecks, EmptyValuesAreRefusedNamingTheOption) {
  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {"run --prompt ''", "--prompt"}, {"run --prompt-ids ''", "--prompt-ids"},
           {"run --prompt-file ''", "--prompt-file"}, {"run --logits ''", "--logits"}, {"run --json ''", "--json"},
           {"run --model ''", "--model"}, {"run --preset ''", "--preset"}, {"vae decode --out ''", "--out"},
           {"vae decode --latents ''", "--latents"}, {"quantize --model m --to fp8-row --out ''", "--out"},
           {"check --out ''", "--out"}, {"make-model --preset tiny-moe --out ''", "--out"}})
    EXPECT_TRUE(refused(fourfold(args), {option, "empty"})) << args;
}

TEST(OutputAndOptionChecks, APromptFileIsRefusedByItsSizeAndBadUtf8NamesWhereItCameFrom) {
  const fs::path model = model_with_tokenizer();
  const fs::path big = kTemp.make() / "prompt.txt";
  std::ofstream(big) << std::string((size_t(1) << 20) + 1, 'a');   // past the 1 MiB floor of a 4096 context
  EXPECT_TRUE(refused(fourfold(fmt::format("run --model {} --prompt-file {}", model.string(), big.string())),
                      {"--prompt-file", big.string(), "1048577 bytes", "at most 1048576 bytes"}));
  const fs::path bad = kTemp.make("_utf8") / "bad.txt";
  std::ofstream(bad) << "caf\xc3 au lait";
  EXPECT_TRUE(refused(fourfold(fmt::format("run --model {} --prompt-file {}", model.string(), bad.string())),
                      {"--prompt-file " + bad.string(), "UTF-8", "byte offset 3"}));
  EXPECT_TRUE(refused(fourfold(fmt::format("run --model {} --prompt \"$(printf 'caf\\303')\"", model.string())),
                      {"--prompt", "UTF-8"}));
}

// Under an address-space limit the room is known on any machine; AddressSanitizer's shadow memory cannot live
// under one, so that build skips these.
TEST(OutputAndOptionChecks, AModelThatCannotFitIsRefusedNamingItsSizeAndWhatIsAvailable) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit and AddressSanitizer do not mix";
#else
  const std::string cli = FOURFOLD_CLI;
  EXPECT_TRUE(refused(shell("ulimit -v 3000000; exec " + cli + " run --preset qwen3-30b-a3b"),
                      {"preset qwen3-30b-a3b", "56.87 GiB", "bfloat16 weights", "available", "ulimit -v", "--layers"}));
  EXPECT_TRUE(refused(shell("ulimit -v 3000000; exec " + cli + " make-model --preset qwen3-30b-a3b --out " +
                            (kTemp.make() / "m").string()),
                      {"preset qwen3-30b-a3b", "available"}));
  // --weights copy: the safetensors bytes (a sparse file: no disk used).
  const fs::path folder = kTemp.make("_folder");
  fs::copy_file(kData / "transformers" / "qwen3" / "config.json", folder / "config.json");
  { std::ofstream(folder / "model.safetensors"); }
  fs::resize_file(folder / "model.safetensors", uint64_t(8) << 30);
  EXPECT_TRUE(refused(shell("ulimit -v 3000000; exec " + cli + " run --model " + folder.string()),
                      {folder.string(), "8.00 GiB", "--weights copy", "available"}));
  // Out of memory on the way names what was being worked on.
  EXPECT_TRUE(refused(shell("ulimit -v 700000; exec " + cli +
                            " vae decode --latent-height 256 --latent-width 256 --latent-frames 2"),
                      {"out of memory while working on VAE preset wan2.1-vae-tiny, latents seeded 2x256x256"}));
#endif
}

TEST(OutputAndOptionChecks, VaeOutHoldsOneRunsFramesAndRefusesForeignFiles) {
  const fs::path out = kTemp.make() / "frames";
  ASSERT_EQ(fourfold("vae decode --latent-frames 3 --latent-height 2 --latent-width 2 --out " + out.string()).status, 0);
  EXPECT_EQ(files_in(out), 9u);
  const Result r = fourfold("vae decode --latent-frames 1 --latent-height 2 --latent-width 2 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(files_in(out), 1u);   // the longer run's frame_0001..0008 are gone
  EXPECT_TRUE(fs::exists(out / "frame_0000.png"));
  // A killed run's staging folder goes with the next run.
  const fs::path stale = out.string() + ".tmp-" + std::to_string(dead_pid());
  fs::create_directory(stale);
  std::ofstream(stale / "frame_0000.png") << "trunc";
  ASSERT_EQ(fourfold("vae roundtrip --frames 1 --height 16 --width 16 --out " + out.string()).status, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(files_in(out), 2u);   // decoded_0000.png, input_0000.png
  std::ofstream(out / "holiday.png") << "mine";
  EXPECT_TRUE(refused(fourfold("vae decode --latent-frames 1 --latent-height 2 --latent-width 2 --out " + out.string()),
                      {"--out", "holiday.png"}));
  EXPECT_TRUE(fs::exists(out / "holiday.png"));
}

TEST(OutputAndOptionChecks, QuantizeOutKeepsTheOldCheckpointUntilTheNewOneIsWhole) {
  const fs::path model = kTemp.make("_model");
  make_model("tiny-moe", model, "bf16", 3, std::nullopt);
  std::ofstream(model / "generation_config.json") << R"({"eos_token_id": 1})";
  const fs::path out = kTemp.make("_out") / "fp8";
  const std::string quantize = fmt::format("quantize --model {} --to fp8-block --out {}", model.string(), out.string());
  // Sharded first, then one file: nothing of the sharded checkpoint is left beside the new one.
  ASSERT_EQ(fourfold(quantize + " --max-shard-mib 0.1").status, 0);
  ASSERT_GT(files_in(out), 4u);
  ASSERT_EQ(fourfold(quantize).status, 0);
  EXPECT_EQ(files_in(out), 3u);   // config.json, model.safetensors, generation_config.json
  EXPECT_NO_THROW(load_model_folder(out));
  // Killed at any moment, the folder loads: the previous checkpoint or the new one, never a removed one.
  for (int delay_ms : {2, 10, 30, 80, 200}) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + std::string(FOURFOLD_CLI) + " " + quantize + " >/dev/null 2>&1").c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_NO_THROW(load_model_folder(out)) << "killed after " << delay_ms << " ms";
  }
  // The next run removes what the killed ones left beside it.
  ASSERT_EQ(fourfold(quantize).status, 0);
  for (const fs::directory_entry& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename(), "fp8") << "left behind: " << e.path();
  // Foreign files are refused, not removed; --out naming --model (here through a symlink) is refused.
  std::ofstream(out / "notes.txt") << "mine";
  EXPECT_TRUE(refused(fourfold(quantize), {"--out", "notes.txt"}));
  EXPECT_TRUE(fs::exists(out / "notes.txt"));
  fs::create_directory_symlink(model, out.parent_path() / "same");
  EXPECT_TRUE(refused(fourfold(fmt::format("quantize --model {} --to fp8-row --out {}", model.string(),
                                           (out.parent_path() / "same").string())),
                      {"--out", "--model"}));
  EXPECT_NO_THROW(load_model_folder(model));
}

TEST(OutputAndOptionChecks, AGenerationConfigOutOfRangeNamesTheFileNotTheSampler) {
  const fs::path model = kTemp.make("_model");
  make_model("tiny-moe", model, "bf16", 3, std::nullopt);
  std::ofstream(model / "generation_config.json") << R"({"do_sample": true, "top_p": 5})";
  const Result r = fourfold("run --gen 2 --model " + model.string());
  EXPECT_TRUE(refused(r, {"generation_config.json", "top_p", "(0, 1]"}));
  EXPECT_EQ(r.out.find("sampler"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fourfold::model
