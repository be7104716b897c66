// The dedicated CPU tier's kernel table: none yet (issue 4), so every call falls through to the next tier.
#include "backends/kernel_table.h"

namespace fourfold {

const KernelTable* dedicated_kernels() { return nullptr; }

}  // namespace fourfold
