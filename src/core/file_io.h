// Every file fourfold reads or writes goes through here: reads refuse what is not a regular file (a FIFO as
// config.json would block forever, a device would never end), and writes land whole or not at all (a temporary
// file in the same folder, flushed to disk, then renamed over the name), so a run killed mid-write never leaves
// an empty or truncated record, config or checkpoint behind.
//
// An output never replaces what is not a file of its own: a symlink is followed (the temporary lands beside the
// link's final target and is renamed onto that target, so the link stays a link), a character or block device
// or a FIFO is written in place (/dev/null and /dev/stdout work; /dev/full says it is full), a directory or a
// socket is refused. Nothing but a regular file or a new name is ever renamed over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace fourfold {

// FormatError naming the path when it is missing, not a regular file, larger than max_bytes or unreadable.
std::string read_regular_file(const std::filesystem::path& path, uint64_t max_bytes = uint64_t(1) << 32);
// FormatError naming the path unless it exists and is a regular file (stat, without opening it).
void require_regular_file(const std::filesystem::path& path);

// What a command checks before its run starts for every output file it will write at the end, so that minutes
// of work are not thrown away on a path that was never writable: FormatError naming `option` and the path when
// it is empty, a directory or a socket, when its folder is missing or not writable, or when it is a device or a
// FIFO that cannot be written. Creates nothing.
void check_output_path(const std::filesystem::path& path, std::string_view option);

// A file written under a temporary name next to `path` and renamed onto it by commit(); destroyed uncommitted
// (an exception on the way), the temporary is removed and `path` is untouched. A device or FIFO is written in
// place instead (see above); a FIFO with nothing reading it is an error, never a wait. FormatError naming the
// path on any failure. The temporary is `<name>.tmp-<pid>-<n>`: one left by a killed process (its pid no longer
// running) is removed by the next AtomicFile for the same name.
class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();   // fsync, close, rename (in place: close)

 private:
  std::filesystem::path path_;     // as given: what messages name
  std::filesystem::path target_;   // the name the temporary is renamed onto (links followed)
  std::filesystem::path temp_;     // empty when written in place
  int fd_ = -1;
};

// write_file_atomically(path, text): AtomicFile, one write, commit.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The file names an output folder's command writes (and may therefore replace): a list, a predicate, or both.
// Default: none, so only a new or empty folder is accepted.
class OwnedNames {
 public:
  OwnedNames() = default;
  OwnedNames(std::initializer_list<std::string> names) : names_(names) {}
  OwnedNames(std::vector<std::string> names) : names_(std::move(names)) {}
  explicit OwnedNames(std::function<bool(const std::string&)> accepts) : accepts_(std::move(accepts)) {}
  bool operator()(const std::string& name) const;

 private:
  std::vector<std::string> names_;
  std::function<bool(const std::string&)> accepts_;
};

// A set of files that must be seen together (a check's records and reports, a video's frames, a checkpoint):
// written into a staging folder beside `path`, then swapped in by commit() (the previous set moved aside and
// removed), so a reader sees the old set, the new set, or none, never a mix, and a shorter set leaves none of
// the longer one's files behind. `path` may be new, or a folder holding only files `owned` accepts (a previous
// run's); anything else there is refused rather than removed. A symlink to a folder is followed. The staging
// folder is `<path>.tmp-<pid>`, the set moved aside `<path>.old-<pid>`: those of a killed process are removed
// by the next OutputFolder for the same path (an `.old` one put back first when `path` itself is missing: it is
// the last complete set). FormatError naming `option`.
class OutputFolder {
 public:
  OutputFolder(const std::filesystem::path& path, OwnedNames owned, std::string_view option);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  std::string staging() const { return staging_.string(); }
  void commit();

 private:
  std::filesystem::path path_, staging_;
  bool committed_ = false;
};

// Whether `pid` names a process that may still be running: false only when the kernel says there is none
// (a process of another user counts as running), so a leftover is removed only when its writer is surely gone.
bool process_may_be_running(int64_t pid);

}  // namespace fourfold
