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

// The roofline's probe loops of one level, compiled with that level's flags like its kernels
// (backends/cpu/kernels/probe_loops.cpp). Each returns a value the caller keeps, so that it is not optimized away.
struct IsaProbeLoops {
  float (*read)(const float* p, int64_t n);
  void (*write)(float* p, int64_t n, float v);
  void (*copy)(float* dst, const float* src, int64_t n);
  bool streaming_stores;   // write and copy bypass the caches
  float (*fma)(int64_t iters, int64_t* flops_per_iter);
  float (*bf16_dot)(int64_t iters, int64_t* flops_per_iter);   // null below avx512bf16
  float (*amx_dot)(int64_t iters, int64_t* flops_per_iter);    // null below amx
};

// The loops of `isa`, a level of host_kernel_isas(); UnsupportedError naming `where` and the level otherwise.
IsaProbeLoops isa_probe_loops(const std::string& isa, const char* where);

}  // namespace fourfold
