// Every file fourfold reads or writes goes through here: reads refuse what is not a regular file (a FIFO as
// config.json would block forever, a device would never end), and writes land whole or not at all (a temporary
// file in the same folder, flushed to disk, then renamed over the name), so a run killed mid-write never leaves
// an empty or truncated record, config or checkpoint behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold {

// FormatError naming the path when it is missing, not a regular file, larger than max_bytes or unreadable.
std::string read_regular_file(const std::filesystem::path& path, uint64_t max_bytes = uint64_t(1) << 32);
// FormatError naming the path unless it exists and is a regular file (stat, without opening it).
void require_regular_file(const std::filesystem::path& path);

// A file written under a temporary name next to `path` and renamed onto it by commit(); destroyed uncommitted
// (an exception on the way), the temporary is removed and `path` is untouched. FormatError naming the path on
// any failure.
class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();   // fsync, close, rename

 private:
  std::filesystem::path path_, temp_;
  int fd_ = -1;
};

// write_file_atomically(path, text): AtomicFile, one write, commit.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// A set of files that must be seen together (a check's records and reports): written into a staging folder
// beside `path`, then swapped in by commit() (the previous set moved aside and removed), so a reader sees the
// old set, the new set, or none, never a mix. `path` may be new, or a folder holding only files named in
// `owned` (a previous run's); anything else there is refused rather than removed. FormatError naming `option`.
class OutputFolder {
 public:
  OutputFolder(const std::filesystem::path& path, const std::vector<std::string>& owned, std::string_view option);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  std::string staging() const { return staging_.string(); }
  void commit();

 private:
  std::filesystem::path path_, staging_;
  bool committed_ = false;
};

}  // namespace fourfold
