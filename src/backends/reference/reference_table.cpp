// The reference tier's kernel table, generated from the op list: an op without a ref:: function fails to link.
#include "backends/kernel_table.h"
#include "backends/reference/reference.h"

namespace fourfold {

const KernelTable& reference_kernels() {
  static const KernelTable table = {
#define FOURFOLD_REF_ENTRY(name, Args) .name = {&ref::name, nullptr, "reference"},
      FOURFOLD_OP_LIST(FOURFOLD_REF_ENTRY)
#undef FOURFOLD_REF_ENTRY
  };
  return table;
}

}  // namespace fourfold
