// Where a tensor's bytes live. Only the CPU exists today; the CUDA entry is there so that the allocator,
// the memory probes and the dispatcher already carry a device through every call.
#pragma once

#include <string>

namespace fourfold {

enum class DeviceType { cpu, cuda };

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;
  bool operator==(const Device&) const = default;
};

inline constexpr Device kCpu{};
std::string device_name(Device device);   // "cpu", "cuda:0"

}  // namespace fourfold
