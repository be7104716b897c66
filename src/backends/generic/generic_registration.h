// How a generic op file offers its kernels: inside namespace fourfold::generic, at the start of a line,
//   FOURFOLD_GENERIC_KERNELS(<file basename>) {
//     t.my_op = entry(&my_op, &my_op_covers);
//   }
// The build lists every file with such a line in registry_generic.h (cmake/registry.cmake) and
// generic_table.cpp calls each register_<file>: a static library would drop a self-registering object that
// nothing references. The op's functions stay file-local.
#pragma once

#include "backends/kernel_table.h"

namespace fourfold::generic {

// A generic entry; covers null: every case the ops layer lets through.
template <class Args>
Kernel<Args> entry(void (*run)(const Args&), bool (*covers)(const Args&) = nullptr) {
  return {run, covers, "generic"};
}

}  // namespace fourfold::generic

// Defines fourfold::generic::register_<file>(KernelTable& t), which fills t's entries for the file's ops.
#define FOURFOLD_GENERIC_KERNELS(file) void register_##file(KernelTable& t)
