// One row of the op-time suites, as the suite files are read into them (check/suites.h): which op, which shape,
// which dtype, and the parameters of its suite's format. Each format's parameters and reader are in the case
// file of the op that reads it (check/op_cases/<op>_params.h and <op>.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "check/op_cases/attention_params.h"
#include "check/op_cases/constant_pad_nd_params.h"
#include "check/op_cases/conv_params.h"
#include "check/op_cases/linear_params.h"
#include "check/op_cases/moe_params.h"
#include "check/op_cases/row_op_params.h"
#include "check/op_cases/scaled_mm_params.h"
#include "check/op_cases/softmax_params.h"
#include "fourfold/dtype.h"

namespace fourfold {

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

// A row's parameters as JSON, in the keys of its suite format (the rows file Python reads, check/suite_rows.h).
nlohmann::ordered_json case_params_json(const CaseParams& params);

struct Suite {
  std::string name;            // the file's "suite" field, equal to its file name without .json
  std::string op;              // the suite's format; a case may name another op (moe's "experts" rows: moe_experts)
  std::string description;
  std::string path;            // the file it came from ("" when parsed from text)
  int64_t entries = 0;         // shapes (or cases) listed in the file, before the product with m, dtypes, ...
  std::vector<BenchCase> cases;
};

}  // namespace fourfold
