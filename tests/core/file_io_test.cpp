// Outputs never replace what is not theirs: a symlink stays a link and its target gets the content, a device or
// FIFO is written in place (a FIFO nobody reads is an error, never a wait), a directory is refused, up front
// where check_output_path is asked; and temporaries or staging folders of a killed process are cleaned up by the
// next writer of the same name, and nothing else is.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/scratch_device.h"
#include "fourfold/errors.h"
#include "model/temp_dirs.h"
#include "support/dead_pid.h"

namespace fourfold {
namespace {

namespace fs = std::filesystem;

const model::testing::TempDirs kTemp("fourfold_file_io_test");

// The message of the exception `f` throws as E, or "" when it throws nothing.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

using fourfold::testing::dead_pid;

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

TEST(FileIo, ASymlinkStaysALinkAndItsTargetGetsTheContent) {
  const fs::path dir = kTemp.make();
  fs::create_directory(dir / "real");
  write_file_atomically(dir / "real" / "r.json", "old");
  fs::create_symlink("real/r.json", dir / "link.json");   // relative: taken from the link's folder
  write_file_atomically(dir / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(read_regular_file(dir / "real" / "r.json"), "new");
  // A dangling link names the file to create; the link stays.
  fs::create_symlink(dir / "real" / "later.json", dir / "dangling.json");
  write_file_atomically(dir / "dangling.json", "made");
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.json"));
  EXPECT_EQ(read_regular_file(dir / "real" / "later.json"), "made");
  // No temporary left in either folder.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator()), 2);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
}

TEST(FileIo, AFifoIsWrittenInPlaceOrRefusedButNeverReplaced) {
  const fs::path dir = kTemp.make();
  const fs::path fifo = dir / "out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Nothing reads it: an error naming it, at once.
  const std::string m = message_of<FormatError>([&] { write_file_atomically(fifo, "x"); });
  EXPECT_NE(m.find(fifo.string()), std::string::npos) << m;
  EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
  EXPECT_TRUE(fs::is_fifo(fifo));
  // With a reader it gets the bytes, and stays a FIFO.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo, "through");
  char buffer[16] = {};
  EXPECT_EQ(::read(reader, buffer, sizeof buffer), 7);
  EXPECT_EQ(std::string(buffer), "through");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(FileIo, ADeviceIsWrittenInPlaceAndStaysADevice) {
  const fs::path dir = kTemp.make();
  const fs::path device = fourfold::testing::scratch_null_device(dir);
  if (device.empty()) GTEST_SKIP() << "no device node that is safe to write to here";
  write_file_atomically(device, "discarded");
  EXPECT_TRUE(is_char_device(device));
  fs::create_symlink(device.filename(), dir / "sink");
  write_file_atomically(dir / "sink", "discarded");
  EXPECT_TRUE(fs::is_symlink(dir / "sink"));
  EXPECT_TRUE(is_char_device(device));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
  EXPECT_NO_THROW(check_output_path(device, "--json"));
  EXPECT_NO_THROW(check_output_path("/dev/null", "--json"));   // only looked at
}

TEST(FileIo, DirectoriesSocketsAndUnwritablePathsAreRefusedUpFrontNamingTheOption) {
  const fs::path dir = kTemp.make();
  std::string m = message_of<FormatError>([&] { check_output_path(dir, "--logits"); });
  EXPECT_NE(m.find("--logits"), std::string::npos) << m;
  EXPECT_NE(m.find("a directory"), std::string::npos) << m;
  EXPECT_NE(message_of<FormatError>([&] { AtomicFile f(dir); }).find("a directory"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir));
  m = message_of<FormatError>([&] { check_output_path(dir / "missing" / "r.json", "--json"); });
  EXPECT_NE(m.find("--json"), std::string::npos) << m;
  EXPECT_NE(m.find("existing folder"), std::string::npos) << m;
  EXPECT_NE(message_of<FormatError>([&] { check_output_path("", "--npy"); }).find("--npy"), std::string::npos);
  EXPECT_NE(message_of<FormatError>([&] { check_output_path(dir.string() + "/", "--npy"); }).find("ends in /"),
            std::string::npos);
  // A socket (a path bound by a Unix-domain socket) is no file to write.
  const fs::path socket_path = dir / "s";
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_NE(message_of<FormatError>([&] { check_output_path(socket_path, "--json"); }).find("a socket"),
            std::string::npos);
  EXPECT_NE(message_of<FormatError>([&] { write_file_atomically(socket_path, "x"); }).find("a socket"),
            std::string::npos);
  EXPECT_TRUE(fs::is_socket(socket_path));
  ::close(s);
  // Checking creates nothing.
  EXPECT_NO_THROW(check_output_path(dir / "new.json", "--json"));
  EXPECT_FALSE(fs::exists(dir / "new.json"));
}

TEST(FileIo, AReplacedFileKeepsItsPermissions) {
  const fs::path file = kTemp.make() / "secret.json";
  write_file_atomically(file, "old");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(file, "new");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST(FileIo, TemporariesOfADeadProcessAreRemovedAndNothingElse) {
  const fs::path dir = kTemp.make();
  const pid_t dead = dead_pid();
  const std::vector<std::string> kept = {
      "r.json.tmp-1-0",                                  // pid 1 runs
      "r.json.tmp-" + std::to_string(::getppid()) + "-3",  // so does our parent
      "r.json.tmp-x-0", "r.json.tmp-" + std::to_string(dead), "r.json.tmp-" + std::to_string(dead) + "-0.bak",
      "other.json.tmp-" + std::to_string(dead) + "-0",     // another name's
  };
  for (const std::string& name : kept) std::ofstream(dir / name) << "x";
  const std::string stale = "r.json.tmp-" + std::to_string(dead) + "-7";
  std::ofstream(dir / stale) << "half written";
  write_file_atomically(dir / "r.json", "new");
  EXPECT_FALSE(fs::exists(dir / stale));
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir / name)) << name;
  EXPECT_EQ(read_regular_file(dir / "r.json"), "new");
  EXPECT_FALSE(process_may_be_running(dead));
  EXPECT_TRUE(process_may_be_running(::getpid()));
}

TEST(FileIo, OutputFolderTakesAPredicateAndClearsTheLeftoversOfADeadRun) {
  const fs::path dir = kTemp.make();
  const fs::path out = dir / "frames";
  const OwnedNames frames([](const std::string& name) { return name.rfind("frame_", 0) == 0; });
  {
    OutputFolder first(out, frames, "--out");
    for (const char* f : {"frame_0000.png", "frame_0001.png", "frame_0002.png"})
      write_file_atomically(fs::path(first.staging()) / f, "1");
    first.commit();
  }
  {  // A shorter set replaces the longer one whole.
    OutputFolder second(out, frames, "--out");
    write_file_atomically(fs::path(second.staging()) / "frame_0000.png", "2");
    second.commit();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  EXPECT_EQ(read_regular_file(out / "frame_0000.png"), "2");
  // A killed run's staging folder goes; another process's (alive) stays.
  const pid_t dead = dead_pid();
  const fs::path stale = dir / ("frames.tmp-" + std::to_string(dead));
  const fs::path alive = dir / ("frames.tmp-" + std::to_string(::getppid()));
  fs::create_directory(stale);
  fs::create_directory(alive);
  { OutputFolder third(out, frames, "--out"); }
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(alive));
  fs::remove(alive);
  // Killed between moving the old set aside and moving the new one in: the old set comes back under the name.
  const fs::path aside = dir / ("frames.old-" + std::to_string(dead));
  fs::rename(out, aside);
  fs::create_directory(stale);
  { OutputFolder fourth(out, frames, "--out"); }
  EXPECT_FALSE(fs::exists(aside));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(read_regular_file(out / "frame_0000.png"), "2");
  // Files it did not write are refused, not removed.
  std::ofstream(out / "notes.txt") << "mine";
  const std::string m = message_of<FormatError>([&] { OutputFolder(out, frames, "--out"); });
  EXPECT_NE(m.find("notes.txt"), std::string::npos) << m;
  EXPECT_TRUE(fs::exists(out / "notes.txt"));
}

TEST(FileIo, OutputFolderFollowsASymlinkAndStagesBesideAFolderGivenWithASlash) {
  const fs::path dir = kTemp.make();
  fs::create_directory(dir / "real");
  fs::create_symlink("real", dir / "link");
  {
    OutputFolder out(dir / "link", {"a.json"}, "--out");
    write_file_atomically(fs::path(out.staging()) / "a.json", "1");
    out.commit();
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(read_regular_file(dir / "real" / "a.json"), "1");
  {
    OutputFolder out(dir.string() + "/real/", {"a.json"}, "--out");
    EXPECT_EQ(fs::path(out.staging()).parent_path(), dir);
    write_file_atomically(fs::path(out.staging()) / "a.json", "2");
    out.commit();
  }
  EXPECT_EQ(read_regular_file(dir / "real" / "a.json"), "2");
  EXPECT_NE(message_of<FormatError>([&] { OutputFolder("", {}, "--out"); }).find("--out"), std::string::npos);
}

}  // namespace
}  // namespace fourfold
