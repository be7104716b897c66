#include "check/op_bench.h"

#include "core/counter_rng.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "fourfold/allocator.h"
#include "fourfold/errors.h"
#include "fourfold/moe.h"
#include "fourfold/ops.h"
#include "fourfold/parallel.h"
#include "ops/dispatch.h"

namespace fourfold {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

double numel(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

Shape padded_shape(const PadCase& p) {
  Shape out = p.shape;
  for (size_t k = 0; k < p.pads.size(); ++k) out[out.size() - 1 - k / 2] += p.pads[k];
  return out;
}

// Scale tensors of a scaled_mm recipe, in a's and b's orientation (see ops.h).
Shape scale_a_shape(const Fp8LinearCase& f) {
  switch (f.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {f.m, 1};
    case Fp8Recipe::block_128x128: return {f.m, (f.k + 127) / 128};
  }
  return {1};
}
Shape scale_b_shape(const Fp8LinearCase& f) {
  switch (f.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {1, f.n};
    case Fp8Recipe::block_128x128: return {(f.k + 127) / 128, (f.n + 127) / 128};
  }
  return {1};
}

// scaled_linear's weight scale for an fp8 weight [n, k]: [1] tensorwise, [n, 1] rowwise, [n/128, k/128] blocks.
Shape weight_scale_shape(const LinearCase& l) {
  switch (l.recipe) {
    case Fp8Recipe::tensorwise: return {1};
    case Fp8Recipe::rowwise: return {l.n, 1};
    case Fp8Recipe::block_128x128: return {(l.n + 127) / 128, (l.k + 127) / 128};
  }
  return {1};
}

// Attended (query, key) pairs of one head.
double attended_pairs(const AttentionCase& a) {
  const int64_t L = a.q_len, S = a.kv_len;
  double pairs = 0;
  for (int64_t i = 0; i < L; ++i) {
    int64_t keys = S;
    if (a.causal == CausalMode::top_left) keys = std::min(S, i + 1);
    if (a.causal == CausalMode::lower_right) keys = std::clamp<int64_t>(i + S - L + 1, 0, S);
    pairs += static_cast<double>(keys);
  }
  return pairs;
}

// ---------------------------------------------------------------- inputs
// Uniform values in [-scale, scale), from (seed, element index), written in parallel: a 2 GB weight must not
// take a minute to make. Benchmark inputs only need to be seeded, finite and free of denormals.
void fill_bench(Tensor& t, uint64_t seed, double scale) {
  const DType dtype = t.dtype();
  const size_t es = dtype_size(dtype);
  char* base = static_cast<char*>(t.data());
  parallel_for(0, t.numel(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double u = counter_uniform(seed, static_cast<uint64_t>(i));
      const float v = static_cast<float>((2.0 * u - 1.0) * scale);
      switch (dtype) {
        case DType::f32: reinterpret_cast<float*>(base)[i] = v; break;
        case DType::bf16: reinterpret_cast<uint16_t*>(base)[i] = f32_to_bf16(v); break;
        case DType::f16: reinterpret_cast<uint16_t*>(base)[i] = f32_to_f16(v); break;
        default: store_from_double(dtype, base + static_cast<size_t>(i) * es, v); break;
      }
    }
  });
}

}  // namespace

Tensor bench_tensor(const Shape& shape, DType dtype, uint64_t seed, double scale) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_bench(t, seed, scale);
  return t;
}

namespace {

// The pad input in the case's layout; the logical shape is always p.shape.
Tensor pad_input(const PadCase& p, DType dtype, uint64_t seed) {
  const int rank = static_cast<int>(p.shape.size());
  if (p.layout == PadLayout::channels_last) {
    if (rank == 2) return bench_tensor({p.shape[1], p.shape[0]}, dtype, seed).transpose(0, 1);
    Shape stored = {p.shape[0]};
    for (int d = 2; d < rank; ++d) stored.push_back(p.shape[d]);
    stored.push_back(p.shape[1]);
    std::vector<int> perm = {0, rank - 1};
    for (int d = 1; d < rank - 1; ++d) perm.push_back(d);
    return bench_tensor(stored, dtype, seed).permute(perm);
  }
  if (p.layout == PadLayout::sliced) {
    Shape wide = p.shape;
    wide.back() += 2;
    return bench_tensor(wide, dtype, seed).narrow(rank - 1, 1, p.shape.back());
  }
  return bench_tensor(p.shape, dtype, seed);
}

using Call = std::function<void()>;

// moe_experts on a MoeCase (n = I, k = H): rows sorted by expert, tokens taken round-robin (each expert's rows
// are distinct tokens while it has at most `tokens` rows), routing weights 1 / top_k.
BenchCall moe_experts_call(const MoeCase& m, const std::vector<int64_t>& sizes, DType dt, uint64_t seed,
                           const std::function<Tensor(const Tensor&)>& wide) {
  std::vector<double> ends(sizes.size()), token;
  int64_t total = 0;
  for (size_t e = 0; e < sizes.size(); ++e) ends[e] = static_cast<double>(total += sizes[e]);
  for (int64_t r = 0; r < total; ++r) token.push_back(static_cast<double>(r % std::max<int64_t>(m.tokens, 1)));
  const double in_scale = 1.0 / std::sqrt(static_cast<double>(m.k)), mid_scale = 1.0 / std::sqrt(static_cast<double>(m.n));
  Tensor x = wide(bench_tensor({m.tokens, m.k}, dt, seed));
  MoeExpertWeights w;
  w.gate = wide(bench_tensor({m.experts, m.n, m.k}, dt, seed + 1, in_scale));
  w.up = wide(bench_tensor({m.experts, m.n, m.k}, dt, seed + 2, in_scale));
  w.down = wide(bench_tensor({m.experts, m.k, m.n}, dt, seed + 3, mid_scale));
  Tensor rows = Tensor::from_vector(token, {total}, DType::i32);
  Tensor weights = Tensor::full({total}, 1.0 / static_cast<double>(m.top_k), DType::f32);
  Tensor offs = Tensor::from_vector(ends, {m.experts}, DType::i32);
  return [x, w, rows, weights, offs] { return moe_experts(x, w, rows, weights, offs); };
}

// The decoder helpers, backward passes and complex matmul (RowOpCase).
BenchCall row_op_call(const RowOpCase& o, DType dt, uint64_t seed, const std::function<Tensor(const Tensor&)>& wide_f) {
  // complex64 stays complex64 for the oracle (the reference tier computes it in double).
  const auto wide = [&](const Tensor& t) { return dt == DType::complex64 ? t : wide_f(t); };
  const auto t = [&](const Shape& shape, uint64_t s, double scale = 1.0) { return wide(bench_tensor(shape, dt, seed + s, scale)); };
  // An explicit eps, as a decoder passes its config's rms_norm_eps (Llama 3.1's): the default is the dtype's
  // epsilon, which differs between an f32 row and its float64 reference and would skew the correctness record.
  static constexpr double kRmsEps = 1e-5;
  switch (o.kind) {
    case RowOpKind::rms_norm: {
      Tensor x = t({o.rows, o.cols}, 0), w = t({o.cols}, 1);
      const int64_t d = o.cols;
      return [x, w, d] { return rms_norm(x, {d}, w, kRmsEps); };
    }
    case RowOpKind::add_rms_norm: {
      Tensor x = t({o.rows, o.cols}, 0), r = t({o.rows, o.cols}, 1), w = t({o.cols}, 2);
      const int64_t d = o.cols;
      return [x, r, w, d] { return add_rms_norm(x, r, {d}, w, kRmsEps).first; };
    }
    case RowOpKind::rotary: {
      Tensor x = t({o.rows, o.heads, o.cols}, 0), c = t({o.rows, 1, o.cols / 2}, 1), s = t({o.rows, 1, o.cols / 2}, 2);
      return [x, c, s] { return rotary_embedding(x, c, s); };
    }
    case RowOpKind::silu_mul: {
      Tensor g = t({o.rows, o.cols}, 0, 4.0), u = t({o.rows, o.cols}, 1);
      return [g, u] { return silu_mul(g, u); };
    }
    case RowOpKind::softmax_backward: {
      Tensor g = t({o.rows, o.cols}, 0), y = t({o.rows, o.cols}, 1, 1.0 / static_cast<double>(o.cols));
      return [g, y] { return softmax_backward(g, y, -1); };
    }
    case RowOpKind::pad_backward: {
      Tensor g = t({o.rows + 2, o.cols + 2}, 0);
      return [g] { return constant_pad_nd_backward(g, {1, 1, 1, 1}); };
    }
    case RowOpKind::linear_backward: {
      Tensor g = t({o.m, o.n}, 0), x = t({o.m, o.k}, 1), w = t({o.n, o.k}, 2, 1.0 / std::sqrt(static_cast<double>(o.k)));
      return [g, x, w] { return linear_backward(g, x, w, true).grad_weight; };
    }
    case RowOpKind::complex_matmul: {
      Tensor a = t({o.m, o.k}, 0), b = t({o.k, o.n}, 1, 1.0 / std::sqrt(static_cast<double>(o.k)));
      return [a, b] { return matmul(a, b); };
    }
    case RowOpKind::log_softmax: {
      Tensor x = t({o.rows, o.cols}, 0, 8.0);
      return [x] { return log_softmax(x, -1); };
    }
    case RowOpKind::log_softmax_backward: {
      Tensor g = t({o.rows, o.cols}, 0), y = t({o.rows, o.cols}, 1, 4.0);
      return [g, y] { return log_softmax_backward(g, y, -1); };
    }
    case RowOpKind::rms_norm_backward: {
      Tensor g = t({o.rows, o.cols}, 0), x = t({o.rows, o.cols}, 1), w = t({o.cols}, 2);
      const int64_t d = o.cols;
      return [g, x, w, d] { return rms_norm_backward(g, x, {d}, w, kRmsEps).grad_x; };
    }
    case RowOpKind::attention_backward: {
      Tensor q = t({1, o.heads, o.rows, o.cols}, 0), k = t({1, o.kv_heads, o.rows, o.cols}, 1);
      Tensor v = t({1, o.kv_heads, o.rows, o.cols}, 2), g = t({1, o.heads, o.rows, o.cols}, 3);
      AttentionOptions options;
      options.causal = CausalMode::top_left;
      options.enable_gqa = o.heads != o.kv_heads;
      return [g, q, k, v, options] { return scaled_dot_product_attention_backward(g, q, k, v, options).grad_q; };
    }
    case RowOpKind::layer_norm: {
      Tensor x = t({o.rows, o.cols}, 0), w = t({o.cols}, 1), b = t({o.cols}, 2);
      const int64_t d = o.cols;
      return [x, w, b, d] { return layer_norm(x, {d}, w, b); };
    }
    case RowOpKind::group_norm: {
      Tensor x = t(o.x, 0), w = t({o.x[1]}, 1), b = t({o.x[1]}, 2);
      const int64_t groups = o.groups;
      return [x, w, b, groups] { return group_norm(x, groups, w, b); };
    }
    case RowOpKind::channel_rms_norm: {
      Tensor x = t(o.x, 0), w = t({o.x[1]}, 1);
      return [x, w] { return channel_rms_norm(x, w, kRmsEps, true); };
    }
    case RowOpKind::silu: {
      Tensor x = t({o.rows, o.cols}, 0, 4.0);
      return [x] { return silu(x); };
    }
    case RowOpKind::gelu: {
      Tensor x = t({o.rows, o.cols}, 0, 4.0);
      return [x] { return gelu(x, GeluApproximate::tanh); };
    }
    case RowOpKind::add: {
      Tensor a = t({o.rows, o.cols}, 0), b = t({o.rows, o.cols}, 1);
      return [a, b] { return add(a, b); };
    }
    case RowOpKind::mul: {
      Tensor a = t({o.rows, o.cols}, 0), b = t({o.rows, o.cols}, 1);
      return [a, b] { return mul(a, b); };
    }
    case RowOpKind::embedding: {
      // Token ids uniform over the vocabulary, the same in the row and its oracle (only the table widens).
      Tensor table = t({o.n, o.cols}, 0);
      Tensor ids = Tensor::empty({o.rows}, DType::f64);
      ids.fill_uniform(seed + 1, 0.0, static_cast<double>(o.n) - 1e-9);
      ids = ids.to(DType::i64);
      return [table, ids] { return embedding(table, ids); };
    }
    case RowOpKind::topk: {
      Tensor x = t({o.rows, o.cols}, 0, 8.0);
      const int64_t k = o.k;
      return [x, k] { return topk(x, k).first; };
    }
    case RowOpKind::argmax: {
      Tensor x = t({o.rows, o.cols}, 0, 8.0);
      return [x] { return argmax(x, -1); };
    }
    case RowOpKind::upsample_nearest: {
      Tensor x = t(o.x, 0);
      const std::vector<int64_t> size = o.size;
      return [x, size] { return upsample_nearest(x, size); };
    }
  }
  throw ValueError(fmt::format("bench: unknown row op {}", static_cast<int>(o.kind)));
}

}  // namespace

BenchCall make_bench_call(const BenchCase& c, uint64_t seed, bool float64_oracle) {
  const DType dt = c.dtype;
  // The oracle sees the same values widened to float64 (FP8 operands stay FP8: only their output widens).
  const auto wide = [float64_oracle](const Tensor& t) { return float64_oracle ? t.to(DType::f64) : t; };
  return std::visit(
      Overloaded{
          [&](const LinearCase& l) -> BenchCall {
            Tensor x = wide(bench_tensor({l.m, l.k}, dt, seed));
            const DType wdt = l.weight_dtype.value_or(dt);
            const double w_scale = 1.0 / std::sqrt(static_cast<double>(l.k));
            OptTensor b;
            if (l.bias) b = wide(bench_tensor({l.n}, dt, seed + 2));
            if (is_fp8(wdt)) {
              // FP8 weights stay FP8 for the oracle too; values of a few units, the scale brings them back.
              Tensor w = bench_tensor({l.n, l.k}, wdt, seed + 1, 64.0);
              Tensor s = Tensor::empty(weight_scale_shape(l), DType::f32);
              s.fill_uniform(seed + 3, 0.5 / 64 * w_scale, 1.5 / 64 * w_scale);
              return [x, w, s, b] { return scaled_linear(x, w, s, b); };
            }
            Tensor w = wide(bench_tensor({l.n, l.k}, wdt, seed + 1, w_scale));   // the oracle: same values in f64
            return [x, w, b] { return linear(x, w, b); };
          },
          [&](const SoftmaxCase& s) -> BenchCall {
            Tensor x = wide(bench_tensor({s.rows, s.cols}, dt, seed, 8.0));
            const int dim = s.dim;
            return [x, dim] { return softmax(x, dim); };
          },
          [&](const PadCase& p) -> BenchCall {
            Tensor x = wide(pad_input(p, dt, seed));
            const std::vector<int64_t> pads = p.pads;
            const double value = p.value;
            return [x, pads, value] { return constant_pad_nd(x, pads, value); };
          },
          [&](const MoeCase& m) -> BenchCall {
            const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
            std::vector<double> ends(sizes.size());
            int64_t total = 0;
            for (size_t e = 0; e < sizes.size(); ++e) ends[e] = static_cast<double>(total += sizes[e]);
            if (c.op == "moe_experts") return moe_experts_call(m, sizes, dt, seed, wide);
            Tensor a = wide(bench_tensor({total, m.k}, dt, seed));
            // Stored [E, N, K] like nn.Linear weights; grouped_mm takes [E, K, N]: the transposed view.
            Tensor w = wide(bench_tensor({m.experts, m.n, m.k}, dt, seed + 1, 1.0 / std::sqrt(static_cast<double>(m.k))));
            Tensor b = w.transpose(1, 2);
            Tensor offs = Tensor::from_vector(ends, {m.experts}, DType::i32);
            return [a, b, offs] { return grouped_mm(a, b, offs); };
          },
          [&](const AttentionCase& a) -> BenchCall {
            Tensor q = wide(bench_tensor({a.batch, a.q_heads, a.q_len, a.head_dim}, dt, seed));
            Tensor k = wide(bench_tensor({a.batch, a.kv_heads, a.kv_len, a.head_dim}, dt, seed + 1));
            Tensor v = wide(bench_tensor({a.batch, a.kv_heads, a.kv_len, a.head_dim}, dt, seed + 2));
            AttentionOptions options;
            options.causal = a.causal;
            options.enable_gqa = a.q_heads != a.kv_heads;
            return [q, k, v, options] { return scaled_dot_product_attention(q, k, v, options); };
          },
          [&](const Fp8LinearCase& f) -> BenchCall {
            Tensor a = bench_tensor({f.m, f.k}, dt, seed, 64.0);
            Tensor w = bench_tensor({f.n, f.k}, dt, seed + 1, 64.0);
            Tensor b = w.transpose(0, 1);
            Tensor sa = Tensor::empty(scale_a_shape(f), DType::f32);
            sa.fill_uniform(seed + 2, 0.5 / 64, 1.5 / 64);
            Tensor sb;
            if (f.recipe == Fp8Recipe::block_128x128) {
              // A checkpoint's weight_scale_inv [N/128, K/128], passed transposed as ops.h says.
              const Shape s = scale_b_shape(f);
              Tensor inv = Tensor::empty({s[1], s[0]}, DType::f32);
              inv.fill_uniform(seed + 3, 0.5 / 64, 1.5 / 64);
              sb = inv.transpose(0, 1);
            } else {
              sb = Tensor::empty(scale_b_shape(f), DType::f32);
              sb.fill_uniform(seed + 3, 0.5 / 64, 1.5 / 64);
            }
            const DType out = float64_oracle ? DType::f64 : f.out_dtype;
            return [a, b, sa, sb, out] { return scaled_mm(a, b, sa, sb, std::nullopt, out); };
          },
          [&](const RowOpCase& o) -> BenchCall { return row_op_call(o, dt, seed, wide); },
          [&](const ConvCase& v) -> BenchCall {
            Tensor x = wide(bench_tensor(v.x, dt, seed));
            const double fan_in = numel(v.weight) / static_cast<double>(v.weight[0]);
            Tensor w = wide(bench_tensor(v.weight, dt, seed + 1, 1.0 / std::sqrt(fan_in)));
            OptTensor b;
            if (v.bias) b = wide(bench_tensor({v.weight[0]}, dt, seed + 2));
            if (v.x.size() == 4)
              return [x, w, b, v] { return conv2d(x, w, b, v.stride, v.padding, v.dilation, v.groups); };
            return [x, w, b, v] { return conv3d(x, w, b, v.stride, v.padding, v.dilation, v.groups); };
          },
      },
      c.params);
}

namespace {

Call build_call(const BenchCase& c, uint64_t seed) {
  BenchCall produce = make_bench_call(c, seed);
  return [produce] { produce(); };
}

bool tier_has_kernel(Tier tier, std::string_view op) {
  const KernelTable* table = kernel_table(tier);
  if (table == nullptr) return false;
#define FOURFOLD_HAS_KERNEL(name, Args) \
  if (op == #name) return table->name.run != nullptr;
  FOURFOLD_OP_LIST(FOURFOLD_HAS_KERNEL)
#undef FOURFOLD_HAS_KERNEL
  return false;
}

}  // namespace

OpCost op_cost(const BenchCase& c) {
  const double s = static_cast<double>(dtype_size(c.dtype));
  return std::visit(
      Overloaded{
          [&](const LinearCase& l) {
            const double m = l.m, n = l.n, k = l.k;
            const DType wdt = l.weight_dtype.value_or(c.dtype);
            const double ws = static_cast<double>(dtype_size(wdt));
            const double scales = is_fp8(wdt) ? 4.0 * numel(weight_scale_shape(l)) : 0.0;
            return OpCost{(m * k + (l.bias ? n : 0.0)) * s + n * k * ws + scales, m * n * s, 2.0 * m * n * k};
          },
          [&](const SoftmaxCase& x) {
            const double e = static_cast<double>(x.rows) * static_cast<double>(x.cols);
            return OpCost{e * s, e * s, 0.0};
          },
          [&](const PadCase& p) { return OpCost{numel(p.shape) * s, numel(padded_shape(p)) * s, 0.0}; },
          [&](const MoeCase& m) {
            const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
            const double active = static_cast<double>(std::count_if(sizes.begin(), sizes.end(), [](int64_t v) { return v > 0; }));
            const double rows = static_cast<double>(m.tokens * m.top_k), n = m.n, k = m.k;
            if (c.op == "moe_experts")   // x once, gate + up + down of each active expert once, out once
              return OpCost{(static_cast<double>(m.tokens) * k + 3.0 * active * k * n) * s + 4.0 * (2.0 * rows + static_cast<double>(m.experts)),
                            static_cast<double>(m.tokens) * k * s, 6.0 * rows * n * k};
            return OpCost{(rows * k + active * k * n) * s + 4.0 * static_cast<double>(m.experts), rows * n * s,
                          2.0 * rows * n * k};
          },
          [&](const AttentionCase& a) {
            const double b = a.batch, hq = a.q_heads, hk = a.kv_heads, e = a.head_dim;
            const double q = b * hq * a.q_len * e, kv = 2.0 * b * hk * a.kv_len * e;
            return OpCost{(q + kv) * s, q * s, 2.0 * b * hq * attended_pairs(a) * (e + e)};
          },
          [&](const Fp8LinearCase& f) {
            const double m = f.m, n = f.n, k = f.k;
            const double scales = numel(scale_a_shape(f)) + numel(scale_b_shape(f));
            return OpCost{(m * k + n * k) * s + 4.0 * scales, m * n * static_cast<double>(dtype_size(f.out_dtype)),
                          2.0 * m * n * k};
          },
          [&](const RowOpCase& o) {
            const double e = static_cast<double>(o.rows) * static_cast<double>(o.cols);
            const double m = o.m, n = o.n, k = o.k;
            switch (o.kind) {
              case RowOpKind::rms_norm: return OpCost{(e + o.cols) * s, e * s, 0.0};
              case RowOpKind::add_rms_norm: return OpCost{(2 * e + o.cols) * s, 2 * e * s, 0.0};   // out and the sum
              case RowOpKind::rotary: return OpCost{(e * o.heads + e) * s, e * o.heads * s, 0.0};
              case RowOpKind::silu_mul: return OpCost{2 * e * s, e * s, 0.0};
              case RowOpKind::softmax_backward: return OpCost{2 * e * s, e * s, 0.0};
              case RowOpKind::pad_backward: return OpCost{e * s, e * s, 0.0};   // the interior is read, the rim is not
              case RowOpKind::linear_backward:   // grad_x, grad_weight, grad_bias
                return OpCost{(m * n + m * k + n * k) * s, (m * k + n * k + n) * s, 4.0 * m * n * k};
              case RowOpKind::complex_matmul: return OpCost{(m * k + k * n) * s, m * n * s, 8.0 * m * n * k};
              case RowOpKind::log_softmax:
              case RowOpKind::silu:
              case RowOpKind::gelu: return OpCost{e * s, e * s, 0.0};
              case RowOpKind::log_softmax_backward:
              case RowOpKind::add:
              case RowOpKind::mul: return OpCost{2 * e * s, e * s, 0.0};
              case RowOpKind::rms_norm_backward:   // grad_x and grad_weight
                return OpCost{(2 * e + o.cols) * s, (e + o.cols) * s, 0.0};
              case RowOpKind::attention_backward: {
                // grad_out, q, k, v in; grad_q, grad_k, grad_v out. Five products over the attended pairs:
                // the scores recomputed, grad_v, grad of the probabilities, grad_q and grad_k.
                const AttentionCase a{1, o.heads, o.kv_heads, o.cols, o.rows, o.rows, CausalMode::top_left};
                const double q = static_cast<double>(o.heads * o.rows * o.cols), kv = static_cast<double>(o.kv_heads * o.rows * o.cols);
                return OpCost{(2 * q + 2 * kv) * s, (q + 2 * kv) * s, 10.0 * static_cast<double>(o.heads) * attended_pairs(a) * static_cast<double>(o.cols)};
              }
              case RowOpKind::layer_norm: return OpCost{(e + 2.0 * o.cols) * s, e * s, 0.0};
              case RowOpKind::group_norm: return OpCost{(numel(o.x) + 2.0 * o.x[1]) * s, numel(o.x) * s, 0.0};
              case RowOpKind::channel_rms_norm: return OpCost{(numel(o.x) + o.x[1]) * s, numel(o.x) * s, 0.0};
              case RowOpKind::embedding: {   // the picked rows and the ids in; the table is made in full
                OpCost cost{e * s + 8.0 * o.rows, e * s, 0.0};
                cost.bytes_made = std::max(o.n - o.rows, int64_t{0}) * static_cast<double>(o.cols) * s;
                return cost;
              }
              case RowOpKind::topk: return OpCost{e * s, static_cast<double>(o.rows * o.k) * (s + 8.0), 0.0};
              case RowOpKind::argmax: return OpCost{e * s, 8.0 * o.rows, 0.0};
              case RowOpKind::upsample_nearest: {
                Shape out = {o.x[0], o.x[1]};
                out.insert(out.end(), o.size.begin(), o.size.end());
                return OpCost{numel(o.x) * s, numel(out) * s, 0.0};
              }
            }
            return OpCost{};
          },
          [&](const ConvCase& v) {
            // flops = 2 N O out_spatial (C / groups) prod(kernel): out elements times the weight's fan-in.
            const double out = numel(v.out_shape()), fan_in = numel(v.weight) / static_cast<double>(v.weight[0]);
            return OpCost{(numel(v.x) + numel(v.weight) + (v.bias ? static_cast<double>(v.weight[0]) : 0.0)) * s,
                          out * s, 2.0 * out * fan_in};
          },
      },
      c.params);
}

double case_work(const BenchCase& c) {
  const OpCost cost = op_cost(c);
  return cost.flops / 2.0 + (cost.bytes() + cost.bytes_made) / static_cast<double>(dtype_size(c.dtype));
}

RooflinePoint roofline_point(const OpCost& cost, double seconds, const RooflineProbe& probe) {
  RooflinePoint r;
  if (!(seconds > 0)) return r;
  r.gbs = cost.bytes() / seconds / 1e9;
  r.gflops = cost.flops / seconds / 1e9;
  const double t_memory = cost.bytes_read / (probe.read_gbs.median * 1e9) + cost.bytes_written / (probe.write_gbs.median * 1e9);
  const double t_compute = cost.flops / (probe.fma_gflops.median * 1e9);
  r.bandwidth_gbs = t_memory > 0 ? cost.bytes() / t_memory / 1e9 : 0.0;
  r.compute_bound = t_compute > t_memory;
  const double floor = std::max(t_memory, t_compute);
  r.floor_us = floor * 1e6;
  r.fraction = floor / seconds;
  return r;
}

Tier expected_tier(std::string_view op) {
  const std::optional<Tier> forced = current_policy().forced_for(op);
  for (int t = static_cast<int>(forced.value_or(Tier::dedicated)); t > 0; --t)
    if (tier_has_kernel(static_cast<Tier>(t), op)) return static_cast<Tier>(t);
  return Tier::reference;
}

std::optional<TierRan> tier_that_ran(std::string_view op) {
  for (const DispatchCount& d : dispatch_counts()) {
    if (d.op != op) continue;
    const int most = static_cast<int>(std::max_element(std::begin(d.calls), std::end(d.calls)) - std::begin(d.calls));
    return TierRan{std::string(tier_name(static_cast<Tier>(most))), d.last_variant};
  }
  return std::nullopt;
}

int rotation_copies(const OpCost& cost, size_t rotate_bytes, int max_copies) {
  if (rotate_bytes == 0) return 1;
  const double input_bytes = std::max(cost.bytes_read + cost.bytes_made, 1.0);
  return static_cast<int>(std::clamp(std::ceil(static_cast<double>(rotate_bytes) / input_bytes), 1.0,
                                     static_cast<double>(std::max(max_copies, 1))));
}

BenchRow run_bench_case(const BenchCase& c, const RooflineProbe& probe, const BenchOptions& options) {
  BenchRow row;
  row.bench_case = c;
  row.cost = op_cost(c);
  const double work = case_work(c);
  const bool on_reference = expected_tier(c.op) == Tier::reference;
  if (options.reference_work_cap > 0 && work > options.reference_work_cap && on_reference) {
    row.skipped = fmt::format("reference tier: work {:.2g} > cap {:.2g}", work, options.reference_work_cap);
    return row;
  }
  try {
    std::vector<Call> calls;
    calls.push_back(build_call(c, options.seed));
    const int copies = on_reference ? 1 : rotation_copies(row.cost, options.rotate_bytes, options.max_copies);
    for (int i = 1; i < copies; ++i) calls.push_back(build_call(c, rotation_seed(options.seed, i)));
    row.copies = copies;
    size_t next = 0;
    reset_dispatch_counts();
    row.timing = time_op([&] {
      calls[next]();
      next = next + 1 == calls.size() ? 0 : next + 1;
    }, options.timer);
    if (const std::optional<TierRan> ran = tier_that_ran(c.op)) {
      row.tier = ran->tier;
      row.variant = ran->variant;
    }
    row.roof = roofline_point(row.cost, row.timing.median_us * 1e-6, probe);
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  cpu_allocator().empty_cache();
  return row;
}

}  // namespace fourfold
