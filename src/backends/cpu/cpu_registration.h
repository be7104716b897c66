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

// Defines fourfold::cpu::register_<file>(KernelTable& t, Isa level), which runs ENTRIES(<level>). A level of
// cpu::Isa missing here is a -Wswitch warning.
#define FOURFOLD_CPU_KERNELS(file, ENTRIES)                 \
  void register_##file(KernelTable& t, Isa level) {         \
    switch (level) {                                        \
      case Isa::scalar: { ENTRIES(scalar) } break;          \
      case Isa::avx2: { ENTRIES(avx2) } break;              \
      case Isa::avx512: { ENTRIES(avx512) } break;          \
      case Isa::avx512bf16: { ENTRIES(avx512bf16) } break;  \
      case Isa::amx: { ENTRIES(amx) } break;                \
    }                                                       \
  }
