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

#define FOURFOLD_ISA_NAME_(level) #level,
constexpr const char* kNames[kIsaCount] = {FOURFOLD_ISA_LEVELS(FOURFOLD_ISA_NAME_)};
#undef FOURFOLD_ISA_NAME_

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

// What CPUID and XGETBV say, as the levels' tests need it.
struct CpuFeatures {
  bool avx2 = false;     // AVX2, FMA and F16C, with the OS saving ymm
  bool avx512 = false;   // AVX-512 F, BW, VL and DQ, with the OS saving zmm
  bool bf16 = false;     // AVX512_BF16 and VBMI (the fp8 GEMV's byte lookups: every AVX512_BF16 CPU has it but
                         // Cooper Lake, which gets the avx512 level)
  bool amx = false;      // AMX-TILE and AMX-BF16, the tile state granted by the OS
};

CpuFeatures read_features() {
  CpuFeatures f;
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = c & bit_FMA, f16c = c & bit_F16C, osxsave = c & bit_OSXSAVE;
  if (!osxsave) return f;
  const uint64_t xcr0 = xgetbv0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool amx_bits = (d & (1u << 24)) && (d & (1u << 22));
  f.avx2 = (b & bit_AVX2) && fma && f16c && ymm_state;
  f.avx512 = (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512VL) && (b & bit_AVX512DQ) && zmm_state;
  const bool vbmi = c & bit_AVX512VBMI;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.bf16 = (a & (1u << 5)) && vbmi;
  f.amx = amx_bits && f.avx512 && f.bf16 && amx_state_granted(xcr0);
#endif
  return f;
}

// Whether the host runs a level: every instruction its kernels are compiled with (CMakeLists.txt's
// FOURFOLD_ISA_FLAGS_<level>) and the OS saving the registers it uses, the levels below it included.
bool host_has(Isa level, const CpuFeatures& f) {
  switch (level) {
    case Isa::scalar: return true;
    case Isa::avx2: return f.avx2;
    case Isa::avx512: return f.avx2 && f.avx512;
    case Isa::avx512bf16: return f.avx2 && f.avx512 && f.bf16;
    case Isa::amx: return f.avx2 && f.avx512 && f.bf16 && f.amx;
  }
  return false;
}

// The best level: the most capable one the host has (each implies those below it).
Isa detect_best() {
  const CpuFeatures f = read_features();
  Isa best = Isa::scalar;
  for (int i = 0; i < kIsaCount; ++i)
    if (host_has(static_cast<Isa>(i), f)) best = static_cast<Isa>(i);
  return best;
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
  std::vector<Isa> every;
  for (int i = kIsaCount - 1; i >= 0; --i) {
    every.push_back(static_cast<Isa>(i));
    known = known || v == kNames[i];
  }
  fail<ValueError>("FOURFOLD_ISA", "FOURFOLD_ISA",
                   fmt::format("one of the levels this host supports ({})", names_of(host)),
                   fmt::format("'{}' ({})", v, known ? "a level this host lacks" : "not a level: " + names_of(every)));
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
