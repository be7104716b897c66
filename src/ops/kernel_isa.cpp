#include "ops/kernel_isa.h"

#include "backends/cpu/amx_peak_loop.h"
#include "backends/cpu/isa.h"

namespace fourfold {

KernelIsa active_kernel_isa() {
  const cpu::Isa isa = cpu::active_isa();
  return {std::string(cpu::isa_name(isa)), isa >= cpu::Isa::avx512bf16, isa == cpu::Isa::amx};
}

std::vector<std::string> host_kernel_isas() {
  std::vector<std::string> names;
  for (cpu::Isa isa : cpu::host_isas()) names.emplace_back(cpu::isa_name(isa));
  return names;
}

bool host_runs_amx() { return cpu::host_isas().front() == cpu::Isa::amx; }

float amx_dot_loop(int64_t iters, int64_t* flops_per_iter) { return cpu::amx_dot_loop(iters, flops_per_iter); }

}  // namespace fourfold
