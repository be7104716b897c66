// The generic tier's kernel table: none yet (issue 4), so every call falls through to the reference tier.
#include "backends/kernel_table.h"

namespace fourfold {

const KernelTable* generic_kernels() { return nullptr; }

}  // namespace fourfold
