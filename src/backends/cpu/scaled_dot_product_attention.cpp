// Dedicated scaled_dot_product_attention: the planning, the Tensor access and the threading (baseline ISA); the
// per-ISA attention_tile (kernels/attention.cpp) does the arithmetic.
//
// The query rows of one (batch, KV head) are the group's q heads times the L positions, ordered position-major,
// so that a tile of kAttnMaxRows rows holds every q head reading that KV head (GQA by index mapping: K and V are
// read once per tile, never copied per q head). Work items are (batch, KV head, tile, key chunk): keys are split
// into chunks only when there are too few tiles to occupy the threads (decode), each chunk keeping its own
// running max, sum and output, merged by rescaling by whichever item finishes a tile last. Causal keys past a
// tile's last attended key are never visited. One parallel region; threads pull items from a shared counter,
// largest (latest causal) tiles first.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_registration.h"
#include "backends/cpu/float_rows.h"
#include "backends/cpu/kernel_types.h"
#include "fourfold/dtype.h"
#include "fourfold/parallel.h"

namespace fourfold::cpu {
namespace {

// The level's attention tile (kernels/kernels.h).
struct AttentionPieces {
  void (*tile)(const AttnTile&);
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kMinChunkKeys = 512;   // keys below which a chunk's merge costs more than its parallelism gains
constexpr int kTile = kAttnMaxRows;
constexpr double kMinParallelWork = 1e5;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

bool computes(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

struct Plan {
  int64_t batch, hq, hk, l, e, ev, s, group;
  int64_t e_pad, ev_pad;
  int64_t rows;         // query rows per (batch, KV head): group * l
  int64_t tiles;        // per (batch, KV head)
  int64_t chunks, chunk_len;
  int64_t state;        // floats of one row's state: m, l, acc[ev_pad]
};

Plan make_plan(const AttentionArgs& a) {
  Plan p{};
  p.batch = a.q.size(0), p.hq = a.q.size(1), p.l = a.q.size(2), p.e = a.q.size(3);
  p.hk = a.k.size(1), p.s = a.k.size(2), p.ev = a.v.size(3), p.group = a.group;
  p.e_pad = round_up(p.e, kAttnPad), p.ev_pad = round_up(p.ev, kAttnPad);
  p.rows = p.group * p.l;
  p.tiles = (p.rows + kTile - 1) / kTile;
  const int64_t items = p.batch * p.hk * p.tiles;
  const int64_t threads = num_threads();
  p.chunks = 1;
  if (items < 2 * threads && p.s >= 2 * kMinChunkKeys)
    p.chunks = std::min((p.s + kMinChunkKeys - 1) / kMinChunkKeys, (4 * threads + items - 1) / items);
  p.chunk_len = round_up((p.s + p.chunks - 1) / p.chunks, kAttnKeyBlock);
  p.chunks = p.s == 0 ? 1 : (p.s + p.chunk_len - 1) / p.chunk_len;
  p.state = 2 + p.ev_pad;
  return p;
}

// The keys query row i may attend are [0, limit).
int64_t key_limit(CausalMode mode, int64_t i, int64_t l, int64_t s) {
  switch (mode) {
    case CausalMode::top_left: return std::min(s, i + 1);
    case CausalMode::lower_right: return std::clamp<int64_t>(i + s - l + 1, 0, s);
    case CausalMode::none: break;
  }
  return s;
}

// One thread's buffers for a tile: the rows' widened queries, limits, mask rows and running state.
struct Worker {
  std::vector<float> q, scratch;
  std::vector<int64_t> limit;
  std::vector<const uint8_t*> mask_row;
  std::vector<float> m, l, acc;
  explicit Worker(const Plan& p)
      : q(kTile * p.e_pad), scratch(attn_scratch_floats(p.e_pad, p.ev_pad)), limit(kTile), mask_row(kTile),
        m(kTile), l(kTile), acc(kTile * p.ev_pad) {}
};

class Attention {
 public:
  Attention(const AttentionArgs& a, const AttentionPieces& k) : a_(a), k_(k), p_(make_plan(a)) {}

  void run() {
    const int64_t tile_count = p_.batch * p_.hk * p_.tiles;
    const int64_t items = tile_count * p_.chunks;
    if (p_.chunks > 1) {
      partial_.assign(static_cast<size_t>(items * kTile * p_.state), 0.0f);
      remaining_ = std::make_unique<std::atomic<int64_t>[]>(static_cast<size_t>(tile_count));
      for (int64_t t = 0; t < tile_count; ++t) remaining_[t].store(p_.chunks, std::memory_order_relaxed);
    }
    std::atomic<int64_t> next{0};
    // Below ~100K multiply-adds a fork costs more than the second thread saves.
    const double work = static_cast<double>(p_.batch * p_.hq * p_.l) * static_cast<double>(p_.s) * (p_.e + p_.ev);
    const int64_t workers = work < kMinParallelWork ? 1 : std::min<int64_t>(num_threads(), items);
    parallel_for(0, workers, 1, [&](int64_t, int64_t) {
      Worker w(p_);
      for (int64_t it = next.fetch_add(1); it < items; it = next.fetch_add(1)) run_item(it, w);
    });
  }

 private:
  struct Rows {
    int64_t b, kv, tile, first, count;   // rows [first, first + count) of (b, kv)
  };

  // Item order: key chunks of one tile together, tiles from the last (most causal keys) to the first.
  void run_item(int64_t it, Worker& w) {
    const int64_t chunk = it % p_.chunks;
    const int64_t rest = it / p_.chunks;
    const int64_t tile = p_.tiles - 1 - rest % p_.tiles;
    const int64_t bk = rest / p_.tiles;
    Rows rows{bk / p_.hk, bk % p_.hk, tile, tile * kTile, std::min<int64_t>(kTile, p_.rows - tile * kTile)};
    const int64_t tile_id = bk * p_.tiles + tile;

    int64_t last_key = 0;
    for (int r = 0; r < rows.count; ++r) {
      load_row(rows, r, w);
      last_key = std::max(last_key, w.limit[r]);
    }
    std::fill(w.m.begin(), w.m.end(), -kInf);
    std::fill(w.l.begin(), w.l.end(), 0.0f);
    std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    const int64_t begin = chunk * p_.chunk_len;
    const int64_t end = std::min({p_.s, begin + p_.chunk_len, last_key});
    if (begin < end) k_.tile(tile_args(rows, begin, end, w));

    if (p_.chunks == 1) {
      for (int r = 0; r < rows.count; ++r) write_row(rows, r, w.l[r], w.acc.data() + r * p_.ev_pad);
      return;
    }
    float* mine = partial_.data() + (tile_id * p_.chunks + chunk) * kTile * p_.state;
    for (int r = 0; r < rows.count; ++r) {
      float* st = mine + r * p_.state;
      st[0] = w.m[r];
      st[1] = w.l[r];
      std::memcpy(st + 2, w.acc.data() + r * p_.ev_pad, static_cast<size_t>(p_.ev_pad) * 4);
    }
    // The item finishing a tile's last chunk merges them all (acq_rel: it sees every other chunk's state).
    if (remaining_[tile_id].fetch_sub(1, std::memory_order_acq_rel) == 1) merge(rows, tile_id, w);
  }

  // Row r of the tile: its widened, zero-padded query, causal limit and mask row.
  void load_row(const Rows& rows, int r, Worker& w) const {
    const int64_t row = rows.first + r;
    const int64_t i = row / p_.group, h = rows.kv * p_.group + row % p_.group;
    const DType t = a_.q.dtype();
    const int64_t es = static_cast<int64_t>(dtype_size(t));
    const uint8_t* q = static_cast<const uint8_t*>(a_.q.data()) +
                       (rows.b * a_.q.stride(0) + h * a_.q.stride(1) + i * a_.q.stride(2)) * es;
    float* dst = w.q.data() + r * p_.e_pad;
    widen_row(t, q, a_.q.stride(3), p_.e, dst);
    std::fill(dst + p_.e, dst + p_.e_pad, 0.0f);
    w.limit[r] = key_limit(a_.causal, i, p_.l, p_.s);
    if (a_.mask != nullptr) {
      const Tensor& m = *a_.mask;
      const int64_t ms = static_cast<int64_t>(dtype_size(m.dtype()));
      w.mask_row[r] = static_cast<const uint8_t*>(m.data()) +
                      (rows.b * m.stride(0) + h * m.stride(1) + i * m.stride(2)) * ms;
    }
  }

  AttnTile tile_args(const Rows& rows, int64_t begin, int64_t end, Worker& w) const {
    const int64_t es = static_cast<int64_t>(dtype_size(a_.k.dtype()));
    AttnTile t{};
    t.rows = static_cast<int>(rows.count);
    t.e = p_.e, t.ev = p_.ev, t.e_pad = p_.e_pad, t.ev_pad = p_.ev_pad;
    // PyTorch scales q and k before the product, so E = 0 gives zero scores whatever the scale.
    t.scale = p_.e == 0 ? 0.0f : static_cast<float>(a_.scale);
    t.q = w.q.data();
    t.kv_type = row_type(a_.k.dtype(), "scaled_dot_product_attention", "k");
    t.k = static_cast<const uint8_t*>(a_.k.data()) + (rows.b * a_.k.stride(0) + rows.kv * a_.k.stride(1)) * es;
    t.k_stride = a_.k.stride(2) * es;
    t.v = static_cast<const uint8_t*>(a_.v.data()) + (rows.b * a_.v.stride(0) + rows.kv * a_.v.stride(1)) * es;
    t.v_stride = a_.v.stride(2) * es;
    t.key_begin = begin, t.key_end = end;
    t.key_limit = w.limit.data();
    t.mask = AttnMask::none;
    if (a_.mask != nullptr) {
      const bool boolean = a_.mask->dtype() == DType::boolean;
      t.mask = boolean ? AttnMask::boolean : AttnMask::additive;
      t.mask_type = boolean ? RowType::f32 : row_type(a_.mask->dtype(), "scaled_dot_product_attention", "attn_mask");
      t.mask_row = w.mask_row.data();
      t.mask_stride = a_.mask->stride(3) * static_cast<int64_t>(dtype_size(a_.mask->dtype()));
    }
    t.m = w.m.data(), t.l = w.l.data(), t.acc = w.acc.data();
    t.scratch = w.scratch.data();
    return t;
  }

  // out = acc / l; a row that attended nothing (l = 0, acc = 0) gives zeros, a NaN anywhere stays NaN.
  void write_row(const Rows& rows, int r, float l, const float* acc) const {
    const int64_t row = rows.first + r;
    const int64_t i = row / p_.group, h = rows.kv * p_.group + row % p_.group;
    const DType t = a_.out.dtype();
    const int64_t es = static_cast<int64_t>(dtype_size(t));
    uint8_t* out = static_cast<uint8_t*>(a_.out.data()) +
                   (rows.b * a_.out.stride(0) + h * a_.out.stride(1) + i * a_.out.stride(2)) * es;
    if (l == 0.0f) {   // zero bits are +0 in every dtype
      for (int64_t c = 0; c < p_.ev; ++c) std::memset(out + c * a_.out.stride(3) * es, 0, static_cast<size_t>(es));
      return;
    }
    narrow_row(t, acc, 1.0f / l, p_.ev, out, a_.out.stride(3));
  }

  // The chunks' states of one tile rescaled to their common max and summed, in chunk order (deterministic).
  void merge(const Rows& rows, int64_t tile_id, Worker& w) const {
    const float* base = partial_.data() + tile_id * p_.chunks * kTile * p_.state;
    for (int r = 0; r < rows.count; ++r) {
      float max = -kInf;
      for (int64_t c = 0; c < p_.chunks; ++c) max = std::max(max, base[(c * kTile + r) * p_.state]);
      float l = 0.0f;
      float* acc = w.acc.data();
      std::fill(acc, acc + p_.ev, 0.0f);
      for (int64_t c = 0; c < p_.chunks; ++c) {
        const float* st = base + (c * kTile + r) * p_.state;
        // Every chunk at -inf: their sums are 0 (or NaN), added as they are.
        const float f = max == -kInf ? 1.0f : std::exp(st[0] - max);
        l += f * st[1];
        for (int64_t j = 0; j < p_.ev; ++j) acc[j] += f * st[2 + j];
      }
      write_row(rows, r, l, acc);
    }
  }

  const AttentionArgs& a_;
  const AttentionPieces& k_;
  const Plan p_;
  std::vector<float> partial_;                          // [tile, chunk, row, state] when chunks > 1
  std::unique_ptr<std::atomic<int64_t>[]> remaining_;   // chunks left per tile
};

// f32, bf16 or f16 throughout; K and V rows with contiguous elements (any row, head and batch strides: a
// narrowed cache qualifies). Anything else falls to the generic tier.
bool attention_covers(const AttentionArgs& a) {
  const DType t = a.q.dtype();
  auto rows_contiguous = [](const Tensor& x) { return x.size(3) <= 1 || x.stride(3) == 1; };
  return computes(t) && a.out.dtype() == t && rows_contiguous(a.k) && rows_contiguous(a.v) &&
         (a.mask == nullptr || a.mask->dtype() == DType::boolean || a.mask->dtype() == t);
}

void scaled_dot_product_attention(const AttentionArgs& a, const AttentionPieces& pieces) {
  if (a.out.numel() == 0) return;
  Attention(a, pieces).run();
}

}  // namespace

#define ENTRIES(isa)                                                                                         \
  static constexpr AttentionPieces pieces{&isa::attention_tile};                                             \
  t.scaled_dot_product_attention = {[](const AttentionArgs& a) { scaled_dot_product_attention(a, pieces); }, \
                                    &attention_covers};
FOURFOLD_CPU_KERNELS(scaled_dot_product_attention, ENTRIES)

}  // namespace fourfold::cpu
