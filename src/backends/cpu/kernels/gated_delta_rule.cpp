// The gated delta rule of one (batch, value head), compiled once per ISA, f32 throughout.
//
// Token by token (delta_rule_columns): S' = e^g S + k delta^T with delta = beta (v - e^g S^T k), and the output
// S'^T q = e^g S^T q + delta (k . q), so one pass over S per token both writes S' and, for the next token,
// accumulates S'^T k and S'^T q. A column of S never meets another column, so a block of columns runs its whole
// sequence alone, its slice of S in L1.
//
// In chunks (delta_rule_chunks), transformers' chunked form: within a chunk the updates are condensed by the
// UT transform, (I + A) U = beta v and (I + A) W = beta e^G k with A[i][j] = beta_i (k_i . k_j) e^(G_i - G_j) for
// j < i (G the decay's cumulative sum inside the chunk), solved by forward substitution on the rows; then
//   v_new = U - W S,   o = (e^G q) S + P v_new  (P[i][j] = (q_i . k_j) e^(G_i - G_j), j <= i),
//   S = e^(G_last) S + (e^(G_last - G) k)^T v_new.
// G is summed in double and every decay is exp of a difference taken in double: transformers subtracts f32
// cumulative sums, which loses the decay's low bits once a chunk's sum reaches hundreds.
#include "backends/cpu/kernels/gated_delta_rule.h"

#include <algorithm>

#include "backends/cpu/kernels/vec.h"

namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE {
namespace {

constexpr int kMaxVectors = 4;   // vectors of columns per block: 8 accumulators in the recurrent pass

// A decay below e^-60 is taken as 0: what it scales is below f32's resolution of any sum it joins, and its
// products would be subnormal, which costs about a hundred cycles each on Intel cores (measured: the chunked
// form at a 512-token prefill of Qwen3.6's shape spent most of its time there).
constexpr float kLeastLogDecay = -60.0f;

inline vf decay_exp(vf x) { return x < splat(kLeastLogDecay) ? vf{} : vexp(x); }
inline float decay_exp(float x) { return x < kLeastLogDecay ? 0.0f : std::exp(x); }

float dot(const float* a, const float* b, int64_t n) {
  vf acc = vf{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) acc += load<RowType::f32>(a, i) * load<RowType::f32>(b, i);
  if (i < n) acc += load_tail<RowType::f32>(a, i, n - i, 0.0f) * load_tail<RowType::f32>(b, i, n - i, 0.0f);
  float sum = 0.0f;
  for (int j = 0; j < kLanes; ++j) sum += acc[j];
  return sum;
}

// Columns [c, c + V * kLanes) of the recurrence over every token.
template <int V, RowType TV, RowType TO>
void columns(const DeltaHeadPlan& p, int64_t c) {
  float* s = p.state + c;
  const int64_t dk = p.dk, dv = p.dv;
  vf mem[V], om[V];   // S^T k_t and S^T q_t of the state before token t's decay
  for (int v = 0; v < V; ++v) mem[v] = om[v] = vf{};
  for (int64_t i = 0; i < dk; ++i) {
    const vf ki = splat(p.k[i]), qi = splat(p.q[i]);
    for (int v = 0; v < V; ++v) {
      const vf row = load<RowType::f32>(s + i * dv, v * kLanes);
      mem[v] += row * ki;
      om[v] += row * qi;
    }
  }
  for (int64_t t = 0; t < p.tokens; ++t) {
    const float* k = p.k + t * p.qk_row;
    const float* q = p.q + t * p.qk_row;
    const vf decay = splat(decay_exp(p.g[t * p.gate_step])), beta = splat(p.beta[t * p.gate_step]);
    const vf kq = splat(dot(k, q, dk));
    const void* vrow = static_cast<const uint8_t*>(p.v) + t * p.v_row * (TV == RowType::f32 ? 4 : 2);
    void* orow = static_cast<uint8_t*>(p.out) + t * p.out_row * (TO == RowType::f32 ? 4 : 2);
    vf delta[V];
    for (int v = 0; v < V; ++v) {
      delta[v] = beta * (load<TV>(vrow, c + v * kLanes) - decay * mem[v]);
      store<TO>(orow, c + v * kLanes, decay * om[v] + delta[v] * kq);
      mem[v] = om[v] = vf{};
    }
    const bool next = t + 1 < p.tokens;
    const float* kn = next ? k + p.qk_row : k;
    const float* qn = next ? q + p.qk_row : q;
    for (int64_t i = 0; i < dk; ++i) {
      const vf ki = splat(k[i]), kni = splat(kn[i]), qni = splat(qn[i]);
      for (int v = 0; v < V; ++v) {
        const vf row = decay * load<RowType::f32>(s + i * dv, v * kLanes) + ki * delta[v];
        store<RowType::f32>(s + i * dv, v * kLanes, row);
        mem[v] += row * kni;
        om[v] += row * qni;
      }
    }
  }
}

// c[m, n] = (accumulate ? c : 0) + sign * sum_k a[m, k] b[k, n]: rows of a broadcast against rows of b, R rows by
// V vectors of columns in registers. n a multiple of kLanes.
template <int R, int V>
void product_block(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t k,
                   bool accumulate, float sign) {
  vf acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = vf{};
  for (int64_t kk = 0; kk < k; ++kk) {
    vf bv[V];
    for (int v = 0; v < V; ++v) bv[v] = load<RowType::f32>(b + kk * ldb, v * kLanes);
    for (int r = 0; r < R; ++r) {
      const vf ar = splat(a[r * lda + kk]);
      for (int v = 0; v < V; ++v) acc[r][v] += ar * bv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) {
      float* at = c + r * ldc + v * kLanes;
      const vf prev = accumulate ? load<RowType::f32>(at, 0) : vf{};
      store<RowType::f32>(at, 0, prev + splat(sign) * acc[r][v]);
    }
}

template <int R>
void product_rows(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t n,
                  int64_t k, bool accumulate, float sign) {
  int64_t col = 0;
  for (; col + kMaxVectors * kLanes <= n; col += kMaxVectors * kLanes)
    product_block<R, kMaxVectors>(a, lda, b + col, ldb, c + col, ldc, k, accumulate, sign);
  for (; col < n; col += kLanes) product_block<R, 1>(a, lda, b + col, ldb, c + col, ldc, k, accumulate, sign);
}

// C [m, n] (+)= sign * A [m, k] B [k, n], all row-major f32; n a multiple of kLanes.
void product(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
             int64_t k, bool accumulate, float sign = 1.0f) {
  int64_t row = 0;
  for (; row + 4 <= m; row += 4)
    product_rows<4>(a + row * lda, lda, b, ldb, c + row * ldc, ldc, n, k, accumulate, sign);
  for (; row < m; ++row) product_rows<1>(a + row * lda, lda, b, ldb, c + row * ldc, ldc, n, k, accumulate, sign);
}

// Rows x_i -= sum_{j < i} a[i][j] x_j, in order: x = (I + strictly_lower(a))^-1 x, rows of n floats.
void forward_substitute(const float* a, int64_t lda, float* x, int64_t ldx, int64_t rows, int64_t n) {
  for (int64_t i = 1; i < rows; ++i)
    for (int64_t j = 0; j < i; ++j) {
      const vf aij = splat(a[i * lda + j]);
      if (a[i * lda + j] == 0.0f) continue;
      int64_t col = 0;
      for (; col + kLanes <= n; col += kLanes)
        store<RowType::f32>(x + i * ldx, col, load<RowType::f32>(x + i * ldx, col) - aij * load<RowType::f32>(x + j * ldx, col));
      for (; col < n; ++col) x[i * ldx + col] -= a[i * lda + j] * x[j * ldx + col];
    }
}

// e^(x[i]) for i in [0, n), through the vector exp, the least decays 0.
void exps(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<RowType::f32>(y, i, decay_exp(load<RowType::f32>(x, i)));
  if (i < n) store_tail<RowType::f32>(y, i, n - i, decay_exp(load_tail<RowType::f32>(x, i, n - i, 0.0f)));
}

template <RowType TV, RowType TO>
void chunks(const DeltaHeadPlan& p, int64_t chunk, float* scratch) {
  const int64_t dk = p.dk, dv = p.dv, cc = chunk;
  double* cum = reinterpret_cast<double*>(scratch);   // [C] (2 floats each, first: the scratch is 8-byte aligned)
  float* a = scratch + 2 * cc;         // [C, C]: A, strictly lower
  float* pm = a + cc * cc;             // [C, C]: P, lower with the diagonal
  float* u = pm + cc * cc;             // [C, Dv]: beta v, then U, then v_new
  float* o = u + cc * dv;              // [C, Dv]
  float* w = o + cc * dv;              // [C, Dk]: beta e^G k, then W
  float* qg = w + cc * dk;             // [C, Dk]: e^G q
  float* kd = qg + cc * dk;            // [Dk, C]: (e^(G_last - G) k)^T
  float* row = kd + dk * cc;           // [C]: one row's decay exponents
  float* eg = row + cc;                // [C]: e^G
  for (int64_t t0 = 0; t0 < p.tokens; t0 += cc) {
    const int64_t n = std::min(cc, p.tokens - t0);
    const float* q = p.q + t0 * p.qk_row;
    const float* k = p.k + t0 * p.qk_row;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      sum += p.g[(t0 + i) * p.gate_step];
      cum[i] = sum;
      row[i] = static_cast<float>(sum);
    }
    exps(row, eg, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j <= i; ++j) row[j] = static_cast<float>(cum[i] - cum[j]);
      exps(row, row, i + 1);
      const float beta = p.beta[(t0 + i) * p.gate_step];
      for (int64_t j = 0; j < i; ++j) a[i * cc + j] = beta * dot(k + i * p.qk_row, k + j * p.qk_row, dk) * row[j];
      for (int64_t j = 0; j <= i; ++j) pm[i * cc + j] = dot(q + i * p.qk_row, k + j * p.qk_row, dk) * row[j];
      for (int64_t j = i + 1; j < n; ++j) pm[i * cc + j] = 0.0f;
      const void* vrow = static_cast<const uint8_t*>(p.v) + (t0 + i) * p.v_row * (TV == RowType::f32 ? 4 : 2);
      for (int64_t col = 0; col < dv; col += kLanes) store<RowType::f32>(u + i * dv, col, splat(beta) * load<TV>(vrow, col));
      const float decay_to_end = decay_exp(static_cast<float>(cum[n - 1] - cum[i]));
      for (int64_t d = 0; d < dk; ++d) {
        w[i * dk + d] = beta * eg[i] * k[i * p.qk_row + d];
        qg[i * dk + d] = eg[i] * q[i * p.qk_row + d];
        kd[d * cc + i] = decay_to_end * k[i * p.qk_row + d];
      }
    }
    forward_substitute(a, cc, u, dv, n, dv);   // U
    forward_substitute(a, cc, w, dk, n, dk);   // W
    product(w, dk, p.state, dv, u, dv, n, dv, dk, /*accumulate=*/true, -1.0f);   // v_new = U - W S
    product(qg, dk, p.state, dv, o, dv, n, dv, dk, /*accumulate=*/false);         // o = (e^G q) S
    product(pm, cc, u, dv, o, dv, n, dv, n, /*accumulate=*/true);                 //   + P v_new
    for (int64_t i = 0; i < n; ++i) {
      void* orow = static_cast<uint8_t*>(p.out) + (t0 + i) * p.out_row * (TO == RowType::f32 ? 4 : 2);
      for (int64_t col = 0; col < dv; col += kLanes) store<TO>(orow, col, load<RowType::f32>(o + i * dv, col));
    }
    const vf decay = splat(eg[n - 1]);
    for (int64_t d = 0; d < dk; ++d)
      for (int64_t col = 0; col < dv; col += kLanes)
        store<RowType::f32>(p.state + d * dv, col, decay * load<RowType::f32>(p.state + d * dv, col));
    product(kd, cc, u, dv, p.state, dv, dk, dv, n, /*accumulate=*/true);          // S += (e^(G_last - G) k)^T v_new
  }
}

template <class Fn>
void with_types(const DeltaHeadPlan& p, const Fn& fn) {
  with_type(p.v_type, [&]<RowType TV>() { with_type(p.out_type, [&]<RowType TO>() { fn.template operator()<TV, TO>(); }); });
}

}  // namespace

void delta_rule_columns(const DeltaHeadPlan& p, int64_t c0, int64_t c1) {
  with_types(p, [&]<RowType TV, RowType TO>() {
    int64_t c = c0;
    for (; c + kMaxVectors * kLanes <= c1; c += kMaxVectors * kLanes) columns<kMaxVectors, TV, TO>(p, c);
    for (; c < c1; c += kLanes) columns<1, TV, TO>(p, c);
  });
}

void delta_rule_chunks(const DeltaHeadPlan& p, int64_t chunk, float* scratch) {
  with_types(p, [&]<RowType TV, RowType TO>() { chunks<TV, TO>(p, chunk, scratch); });
}

void delta_rule_qk_row(const void* x, RowType type, int64_t d, bool l2norm, float scale, float* out) {
  with_type(type, [&]<RowType T>() {
    vf acc = vf{};
    int64_t i = 0;
    for (; i + kLanes <= d; i += kLanes) {
      const vf v = load<T>(x, i);
      store<RowType::f32>(out, i, v);
      acc += v * v;
    }
    if (i < d) {
      const vf v = load_tail<T>(x, i, d - i, 0.0f);
      store_tail<RowType::f32>(out, i, d - i, v);
      acc += v * v;
    }
    float sum = 0.0f;
    for (int j = 0; j < kLanes; ++j) sum += acc[j];
    const vf factor = splat(l2norm ? scale / std::sqrt(sum + 1e-6f) : scale);
    for (i = 0; i + kLanes <= d; i += kLanes) store<RowType::f32>(out, i, factor * load<RowType::f32>(out, i));
    for (; i < d; ++i) out[i] *= factor[0];
  });
}

}  // namespace fourfold::cpu::FOURFOLD_ISA_NAMESPACE
