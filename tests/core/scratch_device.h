// A character device for output tests to write to, that no test can ever replace for the rest of the system:
// as root, a private null device node made in the scratch folder (root could rename over /dev/null itself); as
// another user, a symlink to /dev/null (the kernel refuses anyone but root a rename in /dev).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

namespace fourfold::testing {

inline std::filesystem::path scratch_null_device(const std::filesystem::path& dir) {
  const std::filesystem::path node = dir / "null_device";
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    const int fd = ::open(node.c_str(), O_WRONLY);
    if (fd >= 0) {
      ::close(fd);
      return node;
    }
    ::unlink(node.c_str());   // a nodev mount: fall back to the link
  }
  if (::geteuid() == 0) return {};   // root without a usable private node: no device is safe to test with
  std::filesystem::create_symlink("/dev/null", node);
  return node;
}

}  // namespace fourfold::testing
