// The generic tier's kernel table: every generic op file's entries (generic_registration.h); a null entry falls
// through to the reference tier.
#include "backends/generic/generic_registration.h"
#include "registry_generic.h"

namespace fourfold {
namespace generic {

#define FOURFOLD_GENERIC_DECLARE(file) void register_##file(KernelTable& t);
FOURFOLD_REGISTRY_GENERIC(FOURFOLD_GENERIC_DECLARE)
#undef FOURFOLD_GENERIC_DECLARE

}  // namespace generic

const KernelTable* generic_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
#define FOURFOLD_GENERIC_REGISTER(file) generic::register_##file(t);
    FOURFOLD_REGISTRY_GENERIC(FOURFOLD_GENERIC_REGISTER)
#undef FOURFOLD_GENERIC_REGISTER
    return t;
  }();
  return &table;
}

}  // namespace fourfold
