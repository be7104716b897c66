#include "core/file_io.h"

#include <fcntl.h>
#include <stdio.h>   // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "fourfold/errors.h"

namespace fourfold {
namespace {

[[noreturn]] void io_fail(const std::filesystem::path& path, std::string_view expected, std::string_view found) {
  fail<FormatError>(path.string(), "file", expected, found);
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void require_regular_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) io_fail(path, "a readable regular file", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) io_fail(path, "a regular file", kind_of(st.st_mode));
}

std::string read_regular_file(const std::filesystem::path& path, uint64_t max_bytes) {
  require_regular_file(path);
  // O_NONBLOCK: should the path turn into a FIFO between stat and open, open must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) io_fail(path, "a readable regular file", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    io_fail(path, "a regular file", kind_of(st.st_mode));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    io_fail(path, fmt::format("at most {} bytes", max_bytes), fmt::format("{} bytes", st.st_size));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);   // a file that shrank while being read
  return text;
}

AtomicFile::AtomicFile(const std::filesystem::path& path) : path_(path) {
  static std::atomic<uint64_t> counter{0};
  temp_ = path.string() + fmt::format(".tmp-{}-{}", ::getpid(), counter++);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) io_fail(path, "a path that can be written (its folder exists and is writable)", std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_fail(path_, "every byte written", n < 0 ? std::strerror(errno) : "a short write");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) io_fail(path_, "written to disk", std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    ::unlink(temp_.c_str());
    io_fail(path_, "written to disk", std::strerror(errno));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp_.c_str());
    io_fail(path_, "a name the temporary file can be renamed to", std::strerror(e));
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

OutputFolder::OutputFolder(const std::filesystem::path& path, const std::vector<std::string>& owned,
                           std::string_view option)
    : path_(path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      fail<FormatError>(path.string(), option, "a folder (or a path to create one)", "an existing non-folder");
    for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (std::find(owned.begin(), owned.end(), name) == owned.end())
        fail<FormatError>(path.string(), option, "a new folder, or one holding only an earlier run's files",
                          "another file in it: " + name);
    }
  }
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) fail<FormatError>(path.string(), option, "a folder that can be created", ec.message());
  staging_ = path.string() + fmt::format(".tmp-{}", ::getpid());
  fs::remove_all(staging_, ec);
  fs::create_directory(staging_, ec);
  if (ec) fail<FormatError>(path.string(), option, "a folder that can be created", ec.message());
}

OutputFolder::~OutputFolder() {
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove_all(staging_, ec);
}

void OutputFolder::commit() {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Where the kernel offers it, one atomic exchange: no moment without a complete set under the name.
  if (fs::exists(path_, ec) &&
      ::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    fs::remove_all(staging_, ec);   // now the earlier set
    return;
  }
  const fs::path old = path_.string() + fmt::format(".old-{}", ::getpid());
  if (fs::exists(path_, ec)) {
    fs::remove_all(old, ec);
    fs::rename(path_, old, ec);
    if (ec) fail<FormatError>(path_.string(), "folder", "a folder that can be replaced", ec.message());
  }
  fs::rename(staging_, path_, ec);
  if (ec) fail<FormatError>(path_.string(), "folder", "a name the staged folder can take", ec.message());
  committed_ = true;
  fs::remove_all(old, ec);
}

}  // namespace fourfold
