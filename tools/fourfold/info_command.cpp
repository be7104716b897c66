// fourfold info: the build, the host, the thread count, the ops and the tiers that exist.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "core/build_info.h"
#include "fourfold/allocator.h"
#include "fourfold/memory_probe.h"
#include "fourfold/parallel.h"
#include "fourfold/policy.h"
#include "ops/kernel_isa.h"

namespace fourfold::cli {

void register_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "print the build, the host CPU and ISA, threads, ops and tiers");
  static int threads = 0;
  add_threads_option(*cmd, threads);
  cmd->callback([] {
    apply_threads(threads);
    const BuildInfo b = build_info();
    const HostInfo h = host_info();
    fmt::print("fourfold {} (commit {}), {} build, {}{}\n", b.version, b.git_commit, b.build_type, b.compiler,
               b.sanitizers ? ", ASan+UBSan" : "");
    fmt::print("cpu: {} ({} logical CPUs)\n", h.cpu_model, h.logical_cpus);
    fmt::print("isa: avx2 {} fma {} f16c {} avx512f {} avx512bw {} avx512vl {} avx512_bf16 {} amx {}\n", h.avx2, h.fma,
               h.f16c, h.avx512f, h.avx512bw, h.avx512vl, h.avx512_bf16, h.amx);
    // One line a script can read to run each level in turn (scripts/test.sh).
    fmt::print("isa levels: {}\n", fmt::join(host_kernel_isas(), " "));
    fmt::print("isa in use: {}\n", active_kernel_isa().name);
    fmt::print("threads: {}\n", num_threads());
    fmt::print("policy: '{}'\n", current_policy().to_string());
    fmt::print("tiers: reference yes, generic {}, dedicated {}\n", tier_built(Tier::generic) ? "yes" : "not built yet",
               tier_built(Tier::dedicated) ? "yes" : "not built yet");
    const auto names = op_names();
    fmt::print("ops ({}):", names.size());
    for (const auto& n : names) fmt::print(" {}", n);
    fmt::print("\n");
    const ProcessMemory m = read_process_memory();
    fmt::print("process: rss {} KiB (anon {} KiB, file {} KiB), peak {} KiB\n", m.rss_bytes >> 10,
               m.rss_anon_bytes >> 10, m.rss_file_bytes >> 10, m.rss_peak_bytes >> 10);
  });
}

}  // namespace fourfold::cli
