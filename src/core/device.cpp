#include "fourfold/device.h"

#include <fmt/format.h>

namespace fourfold {

std::string device_name(Device device) {
  return device.type == DeviceType::cpu ? std::string("cpu") : fmt::format("cuda:{}", device.index);
}

}  // namespace fourfold
