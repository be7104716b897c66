// The dedicated CPU tier's kernel tables, one per ISA level; the active level's table is the tier's
// (backends/cpu/isa.h), and its name is every entry's variant.
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/isa.h"
#include "backends/kernel_table.h"

namespace fourfold {
namespace {

#define FOURFOLD_CPU_TABLE(isa)                                                                                   \
  KernelTable isa##_table() {                                                                                     \
    static constexpr cpu::SoftmaxPieces pieces{&cpu::isa::softmax_stats, &cpu::isa::softmax_write,                 \
                                               &cpu::isa::softmax_write_kept};                                    \
    static constexpr cpu::GemmPieces gemm = FOURFOLD_GEMM_PIECES(isa);                                            \
    static constexpr cpu::AttentionPieces attention{&cpu::isa::attention_tile};                                  \
    static constexpr cpu::GemvPieces gemv{&cpu::isa::gemv_rows, &cpu::isa::gemv_pairs_fast};                     \
    static constexpr cpu::GroupedPieces grouped{&cpu::isa::dot_tile, gemv, gemm, &cpu::isa::silu_mul};            \
    KernelTable t;                                                                                                \
    /* linear: the decode GEMV up to kLinearDecodeMaxRows rows (and every scaled_linear it covers), else the  \
       packed prefill GEMM. */                                                                                    \
    t.linear = {[](const LinearArgs& a) {                                                                         \
                  if (cpu::linear_decode_covers(a)) cpu::linear_decode(a, gemv);                                   \
                  else cpu::linear_prefill(a, gemm);                                                              \
                },                                                                                                \
                [](const LinearArgs& a) { return cpu::linear_decode_covers(a) || cpu::linear_prefill_covers(a); }, \
                #isa};                                                                                            \
    t.matmul = {[](const MatmulArgs& a) { cpu::matmul(a, gemm, &cpu::isa::matmul_rows); }, &cpu::matmul_covers,    \
                #isa};                                                                                            \
    t.linear_backward = {[](const LinearBackwardArgs& a) { cpu::linear_backward(a, gemm); },                        \
                         &cpu::linear_backward_covers, #isa};                                                     \
    t.constant_pad_nd = {[](const PadArgs& a) { cpu::constant_pad_nd(a, &cpu::isa::pad_rows); }, nullptr, #isa};   \
    t.constant_pad_nd_backward = {[](const PadArgs& a) { cpu::constant_pad_nd(a, &cpu::isa::pad_rows); }, nullptr, \
                                  #isa};                                                                          \
    t.softmax = {[](const SoftmaxArgs& a) { cpu::softmax(a, false, pieces); }, &cpu::softmax_covers, #isa};        \
    t.log_softmax = {[](const SoftmaxArgs& a) { cpu::softmax(a, true, pieces); }, &cpu::softmax_covers, #isa};     \
    t.scaled_dot_product_attention = {[](const AttentionArgs& a) { cpu::scaled_dot_product_attention(a, attention); }, \
                                      &cpu::attention_covers, #isa};                                              \
    /* fused decoder helpers and softmax backward */                                                             \
    static constexpr cpu::SoftmaxBackwardPieces back{&cpu::isa::softmax_backward_dot,                              \
                                                     &cpu::isa::softmax_backward_write};                           \
    t.softmax_backward = {[](const SoftmaxBackwardArgs& a) { cpu::softmax_backward(a, false, back); },             \
                          &cpu::softmax_backward_covers, #isa};                                                    \
    t.log_softmax_backward = {[](const SoftmaxBackwardArgs& a) { cpu::softmax_backward(a, true, back); },          \
                              &cpu::softmax_backward_covers, #isa};                                                \
    t.rms_norm = {[](const RmsNormArgs& a) { cpu::rms_norm(a, &cpu::isa::rms_norm_row); }, &cpu::rms_norm_covers,   \
                  #isa};                                                                                          \
    t.channel_rms_norm = {[](const ChannelNormArgs& a) { cpu::channel_rms_norm(a, &cpu::isa::channel_rms_norm_run); }, \
                          &cpu::channel_rms_norm_covers, #isa};                                                  \
    t.rotary_embedding = {[](const RotaryArgs& a) { cpu::rotary_embedding(a, &cpu::isa::rotary_row); },            \
                          &cpu::rotary_embedding_covers, #isa};                                                    \
    t.silu_mul = {[](const BinaryArgs& a) { cpu::silu_mul(a, &cpu::isa::silu_mul); }, &cpu::silu_mul_covers, #isa}; \
    static constexpr cpu::ConvPieces conv{gemm, &cpu::isa::conv_pack_b, &cpu::isa::conv_pack_b_pairs};          \
    t.conv2d = {[](const ConvArgs& a) { cpu::conv(a, conv); }, &cpu::conv_covers, #isa};                          \
    t.conv3d = {[](const ConvArgs& a) { cpu::conv(a, conv); }, &cpu::conv_covers, #isa};                          \
    t.topk = {&cpu::topk, &cpu::topk_covers, #isa};                                                               \
    t.argmax = {&cpu::argmax, &cpu::argmax_covers, #isa};                                                         \
    t.embedding = {&cpu::embedding, &cpu::embedding_covers, #isa};                                                \
    t.upsample_nearest = {&cpu::upsample_nearest, &cpu::upsample_nearest_covers, #isa};                           \
    t.grouped_mm = {[](const GroupedMmArgs& a) { cpu::grouped_mm(a, grouped); },    \
                    &cpu::grouped_mm_covers,                                                                      \
                    #isa};                                                                                        \
    t.moe_experts = {[](const MoeExpertsArgs& a) { cpu::moe_experts(a, grouped); },                   \
                     &cpu::moe_experts_covers, #isa};                                                             \
    /* scaled_mm: the decode GEMV for the few-row b = W^T calls it covers, else the packed GEMM. */               \
    t.scaled_mm = {[](const ScaledMmArgs& a) {                                                                    \
                     if (cpu::scaled_mm_decode_covers(a)) cpu::scaled_mm_decode(a, gemv);                          \
                     else cpu::scaled_mm_prefill(a, gemm);                                                        \
                   },                                                                                             \
                   [](const ScaledMmArgs& a) {                                                                    \
                     return cpu::scaled_mm_decode_covers(a) || cpu::scaled_mm_prefill_covers(a);                  \
                   },                                                                                             \
                   #isa};                                                                                         \
    return t;                                                                                                     \
  }
FOURFOLD_CPU_ISA_LIST(FOURFOLD_CPU_TABLE)
#undef FOURFOLD_CPU_TABLE

}  // namespace

const KernelTable* dedicated_kernels() {
  // Indexed by cpu::Isa.
  static const KernelTable tables[cpu::kIsaCount] = {scalar_table(), avx2_table(), avx512_table(), avx512bf16_table(),
                                                     amx_table()};
  return &tables[static_cast<int>(cpu::active_isa())];
}

}  // namespace fourfold
