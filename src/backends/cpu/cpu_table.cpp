// The dedicated CPU tier's kernel tables, one per ISA level; the active level's table is the tier's
// (backends/cpu/isa.h), and its name is every entry's variant.
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/isa.h"
#include "backends/kernel_table.h"

namespace fourfold {
namespace {

#define FOURFOLD_CPU_TABLE(isa)                                                                                   \
  KernelTable isa##_table() {                                                                                     \
    static constexpr cpu::SoftmaxPieces pieces{&cpu::isa::softmax_stats, &cpu::isa::softmax_write};                      \
    KernelTable t;                                                                                                \
    t.constant_pad_nd = {[](const PadArgs& a) { cpu::constant_pad_nd(a, &cpu::isa::pad_rows); }, nullptr, #isa};   \
    t.constant_pad_nd_backward = {[](const PadArgs& a) { cpu::constant_pad_nd(a, &cpu::isa::pad_rows); }, nullptr, \
                                  #isa};                                                                          \
    t.softmax = {[](const SoftmaxArgs& a) { cpu::softmax(a, false, pieces); }, &cpu::softmax_covers, #isa};        \
    t.log_softmax = {[](const SoftmaxArgs& a) { cpu::softmax(a, true, pieces); }, &cpu::softmax_covers, #isa};     \
    t.linear = {[](const LinearArgs& a) { cpu::linear_decode(a, &cpu::isa::gemv_rows); }, &cpu::linear_decode_covers, \
                #isa};                                                                                            \
    t.scaled_mm = {[](const ScaledMmArgs& a) { cpu::scaled_mm_decode(a, &cpu::isa::gemv_rows); },                 \
                   &cpu::scaled_mm_decode_covers, #isa};                                                          \
    return t;                                                                                                     \
  }
FOURFOLD_CPU_ISA_LIST(FOURFOLD_CPU_TABLE)
#undef FOURFOLD_CPU_TABLE

}  // namespace

const KernelTable* dedicated_kernels() {
  // Indexed by cpu::Isa.
  static const KernelTable tables[cpu::kIsaCount] = {scalar_table(), avx2_table(), avx512_table(), avx512bf16_table()};
  return &tables[static_cast<int>(cpu::active_isa())];
}

}  // namespace fourfold
