#include "core/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>   // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <regex>

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

bool written_in_place(mode_t mode) { return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode); }

// The name a chain of symlinks ends at, existing or not (a dangling link names the file to create). Relative
// link contents are taken from the link's own folder, as the kernel does.
std::filesystem::path final_target(const std::filesystem::path& path, std::string_view option) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    if (hops == 40) fail<FormatError>(path.string(), option, "a symlink chain that ends", "a loop of symlinks");
    std::error_code ec;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) fail<FormatError>(path.string(), option, "a readable symlink", ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
}

std::filesystem::path folder_of(const std::filesystem::path& file) {
  return file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
}

// `<base><tag><digits>[-<digits>]` (tag ".tmp-" or ".old-"): the pid it names, or 0 when the name is another.
int64_t leftover_pid(const std::string& name, const std::string& base, std::string_view tag, bool with_counter) {
  const std::string prefix = base + std::string(tag);
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  static const std::regex with(R"((\d{1,10})-\d{1,20})"), without(R"(\d{1,10})");
  std::smatch m;
  const std::string rest = name.substr(prefix.size());
  if (!std::regex_match(rest, m, with_counter ? with : without)) return 0;
  return std::stoll(with_counter ? m[1].str() : m[0].str());
}

bool leftover_of_dead_process(int64_t pid) { return pid > 0 && pid != ::getpid() && !process_may_be_running(pid); }

// AtomicFile's temporaries for `target` left by processes that are gone. Only the exact pattern for this name:
// another file that merely starts like it is never touched.
void remove_stale_temporaries(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  const std::string base = target.filename().string();
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder_of(target), ec)) {
    const std::string name = entry.path().filename().string();
    if (!leftover_of_dead_process(leftover_pid(name, base, ".tmp-", true))) continue;
    std::error_code ignored;
    if (entry.is_regular_file(ignored) && !entry.is_symlink(ignored)) fs::remove(entry.path(), ignored);
  }
}

}  // namespace

bool process_may_be_running(int64_t pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

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


namespace {

// How an output path is written: in place (a device or a FIFO), or through a temporary beside `target`.
struct OutputTarget {
  bool in_place = false;
  bool exists = false;
  mode_t mode = 0;
  std::filesystem::path target;
};

OutputTarget classify_output(const std::filesystem::path& path, std::string_view option) {
  if (path.empty()) fail<FormatError>("fourfold", option, "a file path", "an empty string");
  if (!path.has_filename()) fail<FormatError>(path.string(), option, "a file path", "a folder path (it ends in /)");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode))
      fail<FormatError>(path.string(), option, "a file to write (a new name, a regular file, a device or a FIFO)",
                        kind_of(st.st_mode));
    if (written_in_place(st.st_mode)) return {true, true, st.st_mode, path};
    return {false, true, st.st_mode, final_target(path, option)};
  }
  if (errno != ENOENT) fail<FormatError>(path.string(), option, "a path that can be written", std::strerror(errno));
  return {false, false, 0, final_target(path, option)};
}

}  // namespace

void check_output_path(const std::filesystem::path& path, std::string_view option) {
  const OutputTarget t = classify_output(path, option);
  if (t.in_place) {
    if (::access(path.c_str(), W_OK) != 0)
      fail<FormatError>(path.string(), option, "a writable " + kind_of(t.mode).substr(2), std::strerror(errno));
    return;
  }
  const std::filesystem::path folder = folder_of(t.target);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0)
    fail<FormatError>(path.string(), option, "a path in an existing folder",
                      fmt::format("{}: {}", folder.string(), std::strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    fail<FormatError>(path.string(), option, "a path in a folder", fmt::format("{} is {}", folder.string(), kind_of(st.st_mode)));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    fail<FormatError>(path.string(), option, "a path in a writable folder",
                      fmt::format("{}: {}", folder.string(), std::strerror(errno)));
}

AtomicFile::AtomicFile(const std::filesystem::path& path) : path_(path) {
  const OutputTarget t = classify_output(path, "file");
  target_ = t.target;
  if (t.in_place) {
    // O_NONBLOCK: a FIFO nothing reads from fails at once (ENXIO) instead of waiting for a reader forever.
    fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      io_fail(path, e == ENXIO ? "a FIFO that something reads from" : "a writable " + kind_of(t.mode).substr(2),
              std::strerror(e));
    }
    // From here writes wait as usual: a reader slower than this process is no error.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    return;
  }
  remove_stale_temporaries(target_);
  static std::atomic<uint64_t> counter{0};
  temp_ = target_.string() + fmt::format(".tmp-{}-{}", ::getpid(), counter++);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) io_fail(path, "a path that can be written (its folder exists and is writable)", std::strerror(errno));
  if (t.exists) ::fchmod(fd_, t.mode & 07777);   // the file keeps its permissions; a failure leaves 0644
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
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
  const int fd = fd_;
  if (temp_.empty()) {   // a device or a FIFO: nothing to flush to a disk, nothing to rename
    fd_ = -1;
    if (::close(fd) != 0) io_fail(path_, "every byte written", std::strerror(errno));
    return;
  }
  if (::fsync(fd) != 0) io_fail(path_, "written to disk", std::strerror(errno));
  fd_ = -1;
  if (::close(fd) != 0) {
    ::unlink(temp_.c_str());
    io_fail(path_, "written to disk", std::strerror(errno));
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
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

bool OwnedNames::operator()(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end() || (accepts_ && accepts_(name));
}

namespace {

// `<path>.tmp-<pid>` and `<path>.old-<pid>` folders of processes that are gone: a killed run's staging folder
// (removed), or the set it had moved aside (put back when it never moved its new set in, else removed).
void clear_leftover_sets(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const std::string base = path.filename().string();
  std::vector<fs::path> staging, moved_aside;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder_of(path), ec)) {
    std::error_code ignored;
    if (!entry.is_directory(ignored) || entry.is_symlink(ignored)) continue;
    const std::string name = entry.path().filename().string();
    if (leftover_of_dead_process(leftover_pid(name, base, ".tmp-", false))) staging.push_back(entry.path());
    if (leftover_of_dead_process(leftover_pid(name, base, ".old-", false))) moved_aside.push_back(entry.path());
  }
  for (const fs::path& old : moved_aside) {
    if (!fs::exists(fs::symlink_status(path, ec))) fs::rename(old, path, ec);
    fs::remove_all(old, ec);
  }
  for (const fs::path& p : staging) fs::remove_all(p, ec);
}

}  // namespace

OutputFolder::OutputFolder(const std::filesystem::path& given, OwnedNames owned, std::string_view option) {
  namespace fs = std::filesystem;
  if (given.empty()) fail<FormatError>("fourfold", option, "a folder path", "an empty string");
  // "out/" is the folder "out" (its staging folder goes beside it, not into it); a symlink to a folder is
  // followed, so the link stays a link and the folder it names gets the new set.
  path_ = final_target(given.has_filename() ? given : given.parent_path(), option);
  clear_leftover_sets(path_);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path_, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      fail<FormatError>(given.string(), option, "a folder (or a path to create one)", "an existing non-folder");
    for (const fs::directory_entry& entry : fs::directory_iterator(path_, ec)) {
      const std::string name = entry.path().filename().string();
      if (!owned(name))
        fail<FormatError>(given.string(), option, "a new folder, or one holding only an earlier run's files",
                          "another file in it: " + name);
    }
    if (ec) fail<FormatError>(given.string(), option, "a readable folder", ec.message());
  }
  fs::create_directories(folder_of(path_), ec);
  if (ec) fail<FormatError>(given.string(), option, "a folder that can be created", ec.message());
  staging_ = path_.string() + fmt::format(".tmp-{}", ::getpid());
  fs::remove_all(staging_, ec);
  fs::create_directory(staging_, ec);
  if (ec) fail<FormatError>(given.string(), option, "a folder that can be created", ec.message());
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
