// How a dedicated op file offers its kernels at every ISA level. Inside namespace fourfold::cpu it defines a
// macro that fills `t` (one level's KernelTable) with its entries, naming that level's loops isa::<loop>, and
// registers it with a line that starts with FOURFOLD_CPU_KERNELS:
//   #define ENTRIES(isa) t.silu_mul = {[](const BinaryArgs& a) { silu_mul(a, &isa::silu_mul); }, &silu_mul_covers};
//   FOURFOLD_CPU_KERNELS(silu_mul, ENTRIES)
// Kernel::run is a plain function pointer, so an entry is a captureless lambda; the pieces it hands on (the
// GEMM's, FOURFOLD_GEMM_PIECES) are static constexpr locals of the macro. The build lists every file with such
// a line in registry_cpu.h (cmake/registry.cmake): a static library would drop a self-registering object that
// nothing references. cpu_table.cpp calls each register_<file> once per level and names every entry's variant
// after the level.
#pragma once

#include "backends/cpu/isa.h"
#include "backends/kernel_table.h"

// Defines fourfold::cpu::register_<file>(KernelTable& t, Isa level), which runs ENTRIES(<level>): one case per
// level of isa_levels.h's list.
#define FOURFOLD_CPU_KERNELS_CASE_(level, ENTRIES) \
  case Isa::level: { ENTRIES(level) } break;
#define FOURFOLD_CPU_KERNELS(file, ENTRIES)                                  \
  void register_##file(KernelTable& t, Isa level) {                          \
    switch (level) { FOURFOLD_ISA_LEVELS_WITH(FOURFOLD_CPU_KERNELS_CASE_, ENTRIES) } \
  }
