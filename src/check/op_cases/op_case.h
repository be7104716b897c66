// One op's cases, all in one file: src/check/op_cases/<name>.cpp (docs/adding_an_op.md, step 7). The file says
// how a row_ops suite case of it is read and shown, or reads a suite format of its own; the call each op-time
// row times with its float64 oracle; the least bytes and flops of a row; and the op's correctness cases for
// `fourfold sweep`. Its registration line starts with FOURFOLD_OP_CASES(name); the build lists those names in
// "registry_op_cases.h", so adding a file edits no shared list.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json_fwd.hpp>

#include "check/bench_inputs.h"
#include "check/op_cost.h"
#include "check/bench_case.h"
#include "check/sweep_inputs.h"
#include "fourfold/errors.h"

namespace fourfold {

// A shape rule a row_ops case breaks: the field and what it should be ("a divisor of heads=32").
struct RowOpProblem {
  std::string field, expected;
};

// How a row_ops suite case of this entry is read (the fields of RowOpCase it gives) and shown.
struct RowOpFormat {
  std::vector<const char*> fields = {};                              // must be given; the others default
  std::string (*shape)(const RowOpCase&) = nullptr;                  // short shape text; null: "x[rows,cols]"
  std::optional<RowOpProblem> (*check)(const RowOpCase&) = nullptr;  // rules beyond positive sizes
};

class SuiteReader;

// A suite format of the op's own (the "op" of a suite file that is not row_ops): parse() adds the file's rows to
// suite.cases, given the file's dtypes, and refuses a bad field with r.bad (check/suite_reader.h).
struct SuiteFormat {
  std::string_view name = {};   // the suite files' "op": "linear", "conv", ...
  using Parse = void (*)(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes);
  Parse parse = nullptr;
};

// One correctness case of the reference sweep: run on inputs rounded to the run's dtype, and again on the same
// values in float64; the two must agree to 0 ULP (check/reference_sweep.h).
struct SweepCase {
  std::string shapes = {};   // the inputs in short
  std::function<Tensor(SweepInputs&)> run = {};
  // ULPs the run may differ by: 0 but for an op whose definition rounds inside (rms_norm_gated rounds where
  // transformers does), which the float64 run cannot.
  int64_t max_ulp = 0;
};

// An op's ULP bound when its case file states none, and for rows of ops without a case file (records of the
// PyTorch driver may name any op): its one rounding.
inline constexpr int64_t kDefaultUlpBound = 1;

struct OpCases {
  std::string_view name = {};   // the file's name, from FOURFOLD_OP_CASES(name): a row_ops case's "op"
  std::string_view op = {};     // the op-list op its rows time (add_rms_norm: rms_norm) and its sweep runs
  RowOpFormat row_op = {};      // no fields: not a row op
  SuiteFormat suite = {};       // a suite format this file reads; at most one file reads each
  // The op-time row's call on inputs made once (float64 oracle when in.oracle()); null: no row times it here.
  BenchCall (*call)(const BenchCase& c, const BenchInputs& in) = nullptr;
  OpCost (*cost)(const BenchCase& c) = nullptr;
  std::vector<SweepCase> sweep = {};   // only in the file named as the op: one file holds an op's correctness cases
  // How far a correct result of a bfloat16, float16 or fp8 row may be from the float64 reference, in ULPs of its
  // output against the reference rounded to it (compare's bound, docs/records_schema.md "Thresholds"): its one
  // rounding (an f32 intermediate a hair from a rounding boundary rounds to the neighbour) plus what the
  // summation orders its tiers may take can add. More than the default needs a line saying why. Read only in
  // the file named as the op, as the sweep.
  int64_t ulp_bound = kDefaultUlpBound;
  bool is_row_op() const { return !row_op.fields.empty(); }
};

// Defines the function the registry table calls: `FOURFOLD_OP_CASES(silu) { return {.op = "silu", ...}; }`,
// written at the start of a line (cmake/registry.cmake finds it there).
#define FOURFOLD_OP_CASES(name) OpCases op_cases_##name()

// Every file's entry, sorted by name.
const std::vector<OpCases>& all_op_cases();
// The entry named `name`; nullptr when no file has that name.
const OpCases* find_op_cases(std::string_view name);
// The ULP bound rows of `op` (an op-list name, as records spell it) are held to: the case file named `op`
// states it; kDefaultUlpBound when no file has that name.
int64_t ulp_bound_of(std::string_view op);
// The entry that builds a row: a row_ops case's own, else the one named as its op. ValueError when that entry
// has no op-time call.
const OpCases& op_cases_for(const BenchCase& c);

// ---- helpers of the case files

// A row's parameters of the kind its entry reads; ValueError when a hand-made case gives another kind.
template <class P>
const P& case_params(const BenchCase& c) {
  if (const P* p = std::get_if<P>(&c.params)) return *p;
  fail<ValueError>("bench", "case", fmt::format("the parameters {} takes", c.op), "another kind of case");
}

inline double element_size(const BenchCase& c) { return static_cast<double>(dtype_size(c.dtype)); }

inline double numel(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

inline double row_elements(const RowOpCase& o) { return static_cast<double>(o.rows) * static_cast<double>(o.cols); }

inline std::string dims(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// An explicit eps, as a decoder passes its config's rms_norm_eps (Llama 3.1's): the default is the dtype's
// epsilon, which differs between an f32 row and its float64 oracle and would skew the correctness record.
inline constexpr double kRowRmsEps = 1e-5;

}  // namespace fourfold
