#include "ops/kernel_isa.h"

#include "backends/cpu/isa.h"
#include "backends/cpu/kernels/probe_loops.h"
#include "fourfold/errors.h"

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

IsaProbeLoops isa_probe_loops(const std::string& isa, const char* where) {
  std::string levels;
  for (cpu::Isa level : cpu::host_isas()) {
    levels += (levels.empty() ? "" : ", ") + std::string(cpu::isa_name(level));
    if (cpu::isa_name(level) != isa) continue;
#define FOURFOLD_PROBE_LOOPS_CASE_(name) \
  case cpu::Isa::name: l = cpu::name::probe_loops(); break;
    cpu::ProbeLoops l{};
    switch (level) { FOURFOLD_ISA_LEVELS(FOURFOLD_PROBE_LOOPS_CASE_) }
#undef FOURFOLD_PROBE_LOOPS_CASE_
    return {l.read, l.write, l.copy, l.streaming_stores, l.fma, l.bf16_dot, l.amx_dot};
  }
  fail<UnsupportedError>(where, "isa", "a level this host runs (" + levels + ")", "'" + isa + "'");
}

}  // namespace fourfold
