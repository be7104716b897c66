// Dedicated gated_delta_rule: the gates and the normalized q and k made once per call in f32, then one work item
// per (batch, value head) through kernels/gated_delta_rule.cpp: a block of state columns token by token
// (recurrent), or a whole head chunk by chunk (chunked), over the threads.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/kernel_types.h"
#include "backends/cpu/kernels/gated_delta_rule.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

constexpr int64_t kColumnBlock = 64;   // state columns per recurrent work item: a multiple of every vector width

bool float_type(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }
bool unit_inner(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1; }

bool gated_delta_rule_covers(const GatedDeltaRuleArgs& a) {
  const bool state_ok = a.state == nullptr || (a.state->dtype() == DType::f32 && a.state->is_contiguous());
  return float_type(a.q.dtype()) && float_type(a.g.dtype()) && float_type(a.beta.dtype()) && unit_inner(a.q) &&
         unit_inner(a.k) && unit_inner(a.v) && a.v.size(3) % 16 == 0 && a.out.is_contiguous() && state_ok;
}

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// The log decays and write strengths as f32 [B, T, Hv], from the fused form's raw a and b when a_log is given.
void gates(const GatedDeltaRuleArgs& a, std::vector<float>& g, std::vector<float>& beta) {
  const std::vector<double> g_in = a.g.to_vector(), beta_in = a.beta.to_vector();
  const int64_t hv = a.v.size(2);
  std::vector<double> neg_a(static_cast<size_t>(hv)), dt(static_cast<size_t>(hv));
  if (a.a_log != nullptr) {
    const std::vector<double> a_log = a.a_log->to_vector(), dt_bias = a.dt_bias->to_vector();
    for (int64_t h = 0; h < hv; ++h) {
      neg_a[h] = -std::exp(static_cast<double>(static_cast<float>(a_log[h])));
      dt[h] = dt_bias[h];
    }
  }
  g.resize(g_in.size());
  beta.resize(beta_in.size());
  for (size_t i = 0; i < g_in.size(); ++i) {
    if (a.a_log == nullptr) {
      g[i] = static_cast<float>(g_in[i]);
      beta[i] = static_cast<float>(beta_in[i]);
    } else {
      const int64_t h = static_cast<int64_t>(i) % hv;
      g[i] = static_cast<float>(neg_a[h] * softplus(g_in[i] + dt[h]));
      beta[i] = static_cast<float>(1.0 / (1.0 + std::exp(-beta_in[i])));
    }
  }
}

// q or k [B, T, Hk, Dk] as contiguous f32 rows, each normalized (and scaled) by the level's row loop.
std::vector<float> qk_rows(const Tensor& x, bool l2norm, float scale, const DeltaRuleLoops& loops) {
  const int64_t b = x.size(0), t = x.size(1), h = x.size(2), d = x.size(3);
  std::vector<float> out(static_cast<size_t>(b * t * h * d));
  const RowType type = row_type(x.dtype(), "gated_delta_rule", "q");
  const int64_t es = static_cast<int64_t>(dtype_size(x.dtype()));
  parallel_for(0, b * t, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, h * d)), [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt)
      for (int64_t hh = 0; hh < h; ++hh) {
        const auto* row = static_cast<const uint8_t*>(x.data()) +
                          ((bt / t) * x.stride(0) + (bt % t) * x.stride(1) + hh * x.stride(2)) * es;
        loops.qk_row(row, type, d, l2norm, scale, out.data() + (bt * h + hh) * d);
      }
  });
  return out;
}

void gated_delta_rule(const GatedDeltaRuleArgs& a, const DeltaRuleLoops& loops) {
  const int64_t batch = a.q.size(0), tokens = a.q.size(1), hk = a.q.size(2), dk = a.q.size(3);
  const int64_t hv = a.v.size(2), dv = a.v.size(3), group = hv / hk;
  if (batch == 0 || hv == 0) return;
  std::vector<float> g, beta;
  gates(a, g, beta);
  const std::vector<float> q = qk_rows(a.q, a.qk_l2norm, static_cast<float>(a.scale), loops);
  const std::vector<float> k = qk_rows(a.k, a.qk_l2norm, 1.0f, loops);
  std::vector<float> zeros;
  float* state = a.state != nullptr ? a.state->data_as<float>() : nullptr;
  if (state == nullptr) {
    zeros.assign(static_cast<size_t>(batch * hv * dk * dv), 0.0f);
    state = zeros.data();
  }
  const int64_t ves = static_cast<int64_t>(dtype_size(a.v.dtype())), oes = static_cast<int64_t>(dtype_size(a.out.dtype()));
  const RowType vt = row_type(a.v.dtype(), "gated_delta_rule", "v"), ot = row_type(a.out.dtype(), "gated_delta_rule", "out");
  const auto plan_of = [&](int64_t b, int64_t h) {
    const int64_t first = b * tokens;
    return DeltaHeadPlan{q.data() + (first * hk + h / group) * dk,
                         k.data() + (first * hk + h / group) * dk,
                         hk * dk,
                         static_cast<const uint8_t*>(a.v.data()) + (b * a.v.stride(0) + h * a.v.stride(2)) * ves,
                         a.v.stride(1),
                         vt,
                         g.data() + first * hv + h,
                         beta.data() + first * hv + h,
                         hv,
                         state + (b * hv + h) * dk * dv,
                         static_cast<uint8_t*>(a.out.data()) + (b * a.out.stride(0) + h * a.out.stride(2)) * oes,
                         a.out.stride(1),
                         ot,
                         tokens,
                         dk,
                         dv};
  };
  if (tokens == 0) return;
  // auto: token by token, the faster order on a CPU (docs/hybrid.md).
  if (a.mode != GatedDeltaMode::chunked) {
    const int64_t blocks = (dv + kColumnBlock - 1) / kColumnBlock;
    parallel_for(0, batch * hv * blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t head = item / blocks, c0 = item % blocks * kColumnBlock;
        loops.columns(plan_of(head / hv, head % hv), c0, std::min(dv, c0 + kColumnBlock));
      }
    });
    return;
  }
  const int64_t chunk = std::min(a.chunk_size, tokens);
  parallel_for(0, batch * hv, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(delta_rule_chunk_scratch(chunk, dk, dv)));
    for (int64_t head = begin; head < end; ++head) loops.chunks(plan_of(head / hv, head % hv), chunk, scratch.data());
  });
}

}  // namespace

#define ENTRIES(isa)                                                                                        \
  t.gated_delta_rule = {[](const GatedDeltaRuleArgs& a) {                                                 \
                          static constexpr DeltaRuleLoops loops{&isa::delta_rule_columns,                  \
                                                                &isa::delta_rule_chunks,                   \
                                                                &isa::delta_rule_qk_row};                  \
                          gated_delta_rule(a, loops);                                                       \
                        },                                                                                  \
                        &gated_delta_rule_covers};
FOURFOLD_CPU_KERNELS(gated_delta_rule, ENTRIES)

}  // namespace fourfold::cpu
