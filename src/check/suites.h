// The op-time suites: data files (data/suites/<name>.json) listing the shapes each op is timed on, read
// into concrete cases. The file format follows the op named in the file; scripts/make_suites.py writes the
// shipped files from the model configs they come from, and docs/records.md describes each format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fourfold/dtype.h"
#include "fourfold/ops.h"
#include "fourfold/tensor.h"

namespace fourfold {

// linear: x [m, k] @ weight [n, k]^T (+ bias [n]).
// scaled_mm's and scaled_linear's scale recipes.
// The scales of a quantized weight: FP8's three recipes, and FP4's two formats (nvfp4: e4m3 per 16 values and an f32
// global scale; mxfp4: e8m0 per 32), which only the linear suites' float4_e2m1fn_x2 weights take.
enum class Fp8Recipe { tensorwise, rowwise, block_128x128, nvfp4, mxfp4 };
std::string_view fp8_recipe_name(Fp8Recipe recipe);

// linear: x [m, k] in the row's dtype, W [n, k] in weight_dtype (null: x's dtype); an fp8 or fp4 weight goes
// through scaled_linear with a weight scale of `recipe` (weight-only low precision).
struct LinearCase {
  int64_t m = 1, n = 1, k = 1;
  bool bias = false;
  std::optional<DType> weight_dtype = std::nullopt;
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
};

// softmax over the last of [rows, cols] (dim as in the file, normally -1).
struct SoftmaxCase {
  int64_t rows = 1, cols = 1;
  int dim = -1;
};

// How a pad input is laid out in memory (the logical shape is always the case's shape).
enum class PadLayout {
  contiguous,
  channels_last,   // stored [N, *spatial, C], viewed as [N, C, *spatial] (2-D: stored transposed)
  sliced,          // innermost dim is x[..., 1:W+1] of a buffer W + 2 wide
};
std::string_view pad_layout_name(PadLayout layout);

struct PadCase {
  Shape shape;
  std::vector<int64_t> pads;
  PadLayout layout = PadLayout::contiguous;
  double value = 0.0;
};

enum class MoeRouting { even, skewed, empty };
std::string_view moe_routing_name(MoeRouting routing);

// grouped_mm 2-D x 3-D: a [tokens * top_k, k], b [experts, k, n] (the transposed view of [experts, n, k]
// weights), offs from moe_group_sizes().
struct MoeCase {
  int64_t tokens = 1, experts = 1, top_k = 1, n = 1, k = 1;
  std::string projection;
  MoeRouting routing = MoeRouting::even;
};

// scaled_dot_product_attention: q [batch, q_heads, q_len, head_dim], k and v [batch, kv_heads, kv_len,
// head_dim], enable_gqa when the head counts differ.
struct AttentionCase {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, head_dim = 1, q_len = 1, kv_len = 1;
  CausalMode causal = CausalMode::none;
  double attended_pairs() const;   // (query, key) pairs of one head that the mask keeps
};

// scaled_mm: a [m, k] fp8, b = W^T with W [n, k] fp8, scales per recipe, out_dtype output.

struct Fp8LinearCase {
  int64_t m = 1, n = 1, k = 1;
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  DType out_dtype = DType::bf16;
};

// The row_ops suites (decoder-fused, backward, complex-matmul, decode-ops, diffusion-ops): one case per line,
// `op` naming its case file (src/check/op_cases/<op>.cpp), which says the fields it needs and what they mean,
// the op it times (the op-list name of the file, but add_rms_norm and complex_matmul time rms_norm and
// matmul) and its call. The fields: rows, cols, heads, kv_heads (default: heads), m, n, k, groups (default 1)
// and the shapes x and size.
struct OpCases;
struct RowOpCase {
  const OpCases* cases = nullptr;   // the case file's entry (check/op_cases/op_case.h)
  int64_t rows = 1, cols = 1, heads = 1;
  int64_t m = 1, n = 1, k = 1;
  int64_t kv_heads = 1;
  Shape x = {};
  std::vector<int64_t> size = {};
  int64_t groups = 1;
};

// conv2d (x [N, C, H, W]) or conv3d (x [N, C, T, H, W]) by x's rank: weight [O, C / groups, *kernel], bias
// [O] when `bias`; stride, padding and dilation one value per spatial dim.
struct ConvCase {
  Shape x, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  bool bias = true;
  Shape out_shape() const;   // [N, O, *out_spatial]
};

using CaseParams =
    std::variant<LinearCase, SoftmaxCase, PadCase, MoeCase, AttentionCase, Fp8LinearCase, RowOpCase, ConvCase>;

// One row of the op-time record: one op, one shape, one dtype.
struct BenchCase {
  std::string suite;     // "decode-linear"
  std::string op;        // the op's name in the op list: "linear", "constant_pad_nd", ...
  std::string name;      // where the shape comes from: "llama-3.1-8b q_proj", "causal-vae tile 64"
  std::string shape;     // the inputs in short: "x[1,4096] w[4096,4096] +bias"
  DType dtype = DType::f32;   // the inputs' dtype (fp8: the weights' and activations')
  CaseParams params;
};

struct Suite {
  std::string name;            // the file's "suite" field, equal to its file name without .json
  std::string op;              // the suite's op; a case may name another (moe: its "experts" rows are moe_experts)
  std::string description;
  std::string path;            // the file it came from ("" when parsed from text)
  int64_t entries = 0;         // shapes (or cases) listed in the file, before the product with m, dtypes, ...
  std::vector<BenchCase> cases;
};

// Where the shipped suites are: $FOURFOLD_SUITES_DIR if set; else the first of <executable>/../../data/suites
// (a build tree), <executable>/../share/fourfold/suites (an install) and the source tree's data/suites
// that exists. ValueError naming the places tried when none does.
std::string default_suites_dir();

// Suite names (file names without .json) in `dir`, sorted. ValueError when dir is not a directory.
std::vector<std::string> list_suites(const std::string& dir);

// Loads <dir>/<name>.json. An unknown name is a ValueError that lists the known ones; a bad file is a
// FormatError naming the file and the field (both are usage errors: exit code 2).
Suite load_suite(std::string_view name, const std::string& dir);
Suite load_suite_file(const std::string& path);
// The same from text; `source` names it in messages.
Suite parse_suite(std::string_view text, const std::string& source);

// Rows per expert (group sizes, in expert order) for `tokens` tokens routed to `top_k` distinct experts each:
//   even:   the tokens * top_k assignments dealt round-robin over all experts;
//   skewed: proportional to 1 / (e + 1) (Zipf, s = 1) by the D'Hondt rule, at most `tokens` per expert;
//   empty:  every token picks the same top_k experts, e = j * experts / top_k; the others get none.
// Sums to tokens * top_k; every size <= tokens.
std::vector<int64_t> moe_group_sizes(int64_t tokens, int64_t experts, int64_t top_k, MoeRouting routing);

}  // namespace fourfold
