// CPUID (and the OS's register-state support, XGETBV) to ISA levels, and the FOURFOLD_ISA override.
#include "backends/cpu/isa.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "fourfold/errors.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace fourfold::cpu {
namespace {

constexpr const char* kNames[kIsaCount] = {"scalar", "avx2", "avx512", "avx512bf16", "amx"};

#if defined(__x86_64__)
uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

// AMX's tile data is a dynamically enabled register state on Linux: a process must ask for it (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA) before its first tile instruction, which otherwise faults.
// Granted once for the whole process, every thread included.
bool amx_state_granted(uint64_t xcr0) {
  if ((xcr0 & (3ull << 17)) != (3ull << 17)) return false;   // XTILECFG and XTILEDATA enabled by the OS
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

// The best level: each one needs every instruction its kernels are compiled with (CMakeLists.txt, the -m
// flags of fourfold_cpu_isa) and the OS saving the registers it uses.
Isa detect_best() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return Isa::scalar;
  const bool fma = c & bit_FMA, f16c = c & bit_F16C, osxsave = c & bit_OSXSAVE;
  if (!osxsave) return Isa::scalar;
  const uint64_t xcr0 = xgetbv0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return Isa::scalar;
  const bool amx_bits = (d & (1u << 24)) && (d & (1u << 22));   // AMX-TILE and AMX-BF16
  const bool avx2 = b & bit_AVX2;
  const bool avx512 = (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512VL) && (b & bit_AVX512DQ);
  // The bf16 level also takes VBMI (the fp8 GEMV's byte lookups): every AVX512_BF16 CPU has it but Cooper Lake,
  // which gets the avx512 level.
  const bool vbmi = c & bit_AVX512VBMI;
  bool bf16 = false;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) bf16 = (a & (1u << 5)) && vbmi;
  if (!(avx2 && fma && f16c && ymm_state)) return Isa::scalar;
  if (!(avx512 && zmm_state)) return Isa::avx2;
  if (!bf16) return Isa::avx512;
  return amx_bits && amx_state_granted(xcr0) ? Isa::amx : Isa::avx512bf16;
#else
  return Isa::scalar;
#endif
}

Isa host_best() {
  static const Isa best = detect_best();
  return best;
}

std::string names_of(const std::vector<Isa>& isas) {
  std::string s;
  for (Isa i : isas) s += (s.empty() ? "" : ", ") + std::string(isa_name(i));
  return s;
}

// -1 until first use, then the level's number.
std::atomic<int>& active_slot() {
  static std::atomic<int> slot{-1};
  return slot;
}

}  // namespace

std::string_view isa_name(Isa isa) { return kNames[static_cast<int>(isa)]; }

std::vector<Isa> host_isas() {
  std::vector<Isa> out;
  for (int i = static_cast<int>(host_best()); i >= 0; --i) out.push_back(static_cast<Isa>(i));
  return out;
}

Isa parse_isa_setting(const char* value, const std::vector<Isa>& host) {
  if (value == nullptr || *value == '\0') return host.front();
  const std::string_view v(value);
  for (Isa i : host)
    if (isa_name(i) == v) return i;
  bool known = false;
  for (const char* n : kNames) known = known || v == n;
  fail<ValueError>("FOURFOLD_ISA", "FOURFOLD_ISA",
                   fmt::format("one of the levels this host supports ({})", names_of(host)),
                   fmt::format("'{}'{}", v, known ? " (a level this host lacks)" : " (not a level: amx, avx512bf16, avx512, avx2, scalar)"));
}

Isa active_isa() {
  int v = active_slot().load(std::memory_order_acquire);
  if (v < 0) {
    v = static_cast<int>(parse_isa_setting(std::getenv("FOURFOLD_ISA"), host_isas()));
    int expected = -1;
    if (!active_slot().compare_exchange_strong(expected, v)) v = expected;
  }
  return static_cast<Isa>(v);
}

void set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(host_best()))
    fail<ValueError>("set_active_isa", "isa", fmt::format("one of the levels this host supports ({})", names_of(host_isas())),
                     std::string(isa_name(isa)));
  active_slot().store(static_cast<int>(isa), std::memory_order_release);
}

}  // namespace fourfold::cpu
