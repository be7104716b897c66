// The roofline's AMX peak loop, next to the AMX GEMM whose tile layout it shares (kernels/amx_tile_config.h).
#pragma once

#include <cstdint>

namespace fourfold::cpu {

// Needs a host that runs the amx level (host_isas().front() == Isa::amx).
float amx_dot_loop(int64_t iters, int64_t* flops_per_iter);

}  // namespace fourfold::cpu
