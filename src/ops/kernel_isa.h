// The dedicated CPU tier's instruction-set level as the records and the command see it. Layers above ops read
// ISA facts here, never from the backend's own headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fourfold {

struct KernelIsa {
  std::string name;               // "scalar", "avx2", "avx512", "avx512bf16", "amx": also the kernels' variant
  bool bf16_dot_product = false;  // bf16 pairs multiply with vdpbf16ps (avx512bf16 and above)
  bool amx_tiles = false;         // the bf16 GEMM runs on AMX tiles
};

// The level the dedicated tier runs now (CPUID, or FOURFOLD_ISA).
KernelIsa active_kernel_isa();

// The levels this host can run, best first: what FOURFOLD_ISA accepts.
std::vector<std::string> host_kernel_isas();

// Whether this host can run the amx level: AMX-TILE and AMX-BF16 present and granted by the OS.
bool host_runs_amx();

// TDPBF16PS on the AMX GEMM's tile layout, `iters` times over four C tiles; the roofline's bf16 peak probe.
// Only where host_runs_amx(). Returns a value the caller keeps so that the loop is not optimized away.
float amx_dot_loop(int64_t iters, int64_t* flops_per_iter);

}  // namespace fourfold
