// What a tier offers for each op: a kernel and the cases it covers. One table type, generated from the op list.
#pragma once

#include "backends/op_list.h"

namespace fourfold {

template <class Args>
struct Kernel {
  void (*run)(const Args&) = nullptr;       // null: this tier has no kernel for the op
  bool (*covers)(const Args&) = nullptr;    // null: covers every case the ops layer lets through
  const char* variant = "";                 // e.g. "avx512bf16"; shown in the dispatch log and manifests
};

struct KernelTable {
#define FOURFOLD_KERNEL_MEMBER(name, Args) Kernel<Args> name;
  FOURFOLD_OP_LIST(FOURFOLD_KERNEL_MEMBER)
#undef FOURFOLD_KERNEL_MEMBER
};

// Each tier's table, one folder each (reference/, generic/, cpu/). The reference table is complete by
// construction; the others fill in the ops they have (null entries fall through) or return null entirely.
const KernelTable& reference_kernels();
const KernelTable* generic_kernels();
const KernelTable* dedicated_kernels();

}  // namespace fourfold
