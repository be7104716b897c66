// The dedicated CPU tier's kernel tables, one per ISA level, each filled by every dedicated op file
// (cpu_registration.h); the active level's table is the tier's (backends/cpu/isa.h).
#include <array>

#include "backends/cpu/cpu_registration.h"
#include "registry_cpu.h"

namespace fourfold {
namespace cpu {

#define FOURFOLD_CPU_DECLARE_REGISTER(file) void register_##file(KernelTable& t, Isa level);
FOURFOLD_REGISTRY_CPU(FOURFOLD_CPU_DECLARE_REGISTER)
#undef FOURFOLD_CPU_DECLARE_REGISTER

namespace {

KernelTable level_table(Isa level) {
  KernelTable t;
#define FOURFOLD_CPU_REGISTER(file) register_##file(t, level);
  FOURFOLD_REGISTRY_CPU(FOURFOLD_CPU_REGISTER)
#undef FOURFOLD_CPU_REGISTER
  // Every entry's variant is the level's name (isa_name views a string literal, so data() ends in a NUL).
  const char* variant = isa_name(level).data();
#define FOURFOLD_CPU_VARIANT(name, Args) \
  if (t.name.run != nullptr) t.name.variant = variant;
  FOURFOLD_OP_LIST(FOURFOLD_CPU_VARIANT)
#undef FOURFOLD_CPU_VARIANT
  return t;
}

}  // namespace
}  // namespace cpu

const KernelTable* dedicated_kernels() {
  // Indexed by cpu::Isa.
  static const std::array<KernelTable, cpu::kIsaCount> tables = [] {
    std::array<KernelTable, cpu::kIsaCount> all;
    for (int i = 0; i < cpu::kIsaCount; ++i) all[i] = cpu::level_table(static_cast<cpu::Isa>(i));
    return all;
  }();
  return &tables[static_cast<int>(cpu::active_isa())];
}

}  // namespace fourfold
