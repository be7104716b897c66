// collect_manifest: the build, the host, the ISA level, the threads, the policy and the tier of every op of
// the running process.
#include "check/manifest.h"
#include "core/build_info.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"
#include "ops/kernel_isa.h"

namespace fourfold {

Manifest collect_manifest(const Workload& workload, std::vector<std::string> dtypes, std::string device) {
  Manifest m;
  const BuildInfo b = build_info();
  m.fourfold_version = b.version;
  m.git_commit = b.git_commit;
  m.compiler = b.compiler;
  m.cxx_flags = b.cxx_flags;
  m.build_type = b.build_type;
  m.sanitizers = b.sanitizers;
  const HostInfo h = host_info();
  m.cpu_model = h.cpu_model;
  const std::pair<bool, const char*> flags[] = {{h.avx2, "avx2"},         {h.fma, "fma"},
                                                {h.f16c, "f16c"},         {h.avx512f, "avx512f"},
                                                {h.avx512bw, "avx512bw"}, {h.avx512vl, "avx512vl"},
                                                {h.avx512_bf16, "avx512_bf16"}, {h.amx, "amx"}};
  for (const auto& [has, name] : flags)
    if (has) m.isa_flags.emplace_back(name);
  m.isa_variant = active_kernel_isa().name;   // the dedicated CPU tier's level (CPUID or FOURFOLD_ISA)
  m.threads = num_threads();
  m.device = std::move(device);
  m.dtypes = std::move(dtypes);
  m.policy = current_policy().to_string();
  for (const DispatchCount& c : dispatch_counts()) {
    m.op_tiers.push_back({c.op, c.calls[0], c.calls[1], c.calls[2], c.last_variant});
  }
  m.workload = workload;
  return m;
}

}  // namespace fourfold
