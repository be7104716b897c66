// constant_pad_nd from the pad suite (read here; constant_pad_nd_params.h): x in the case's memory layout, padded (or
// cropped) by the case's pads.
#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_pad(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "value", "cases"});
  const double value = r.has(j, "value") ? r.number(j["value"], "value") : 0.0;
  const nlohmann::json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = SuiteReader::at("cases", i);
    const nlohmann::json& e = cases[i];
    r.only_keys(e, path, {"name", "shape", "pads", "layout"});
    PadCase p;
    p.value = value;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    p.shape = r.integers(r.need(e, path, "shape"), path + ".shape");
    if (p.shape.size() > static_cast<size_t>(kMaxRank))
      r.bad(path + ".shape", fmt::format("at most {} dims", kMaxRank), e["shape"]);
    const nlohmann::json& pads_json = r.array(r.need(e, path, "pads"), path + ".pads");
    for (size_t k = 0; k < pads_json.size(); ++k) {
      if (!pads_json[k].is_number_integer()) r.bad(SuiteReader::at(path + ".pads", k), "an integer", pads_json[k]);
      p.pads.push_back(pads_json[k].get<int64_t>());
    }
    if (p.pads.size() % 2 != 0 || p.pads.size() > 2 * p.shape.size())
      r.bad(path + ".pads", fmt::format("(before, after) pairs, at most {} entries for a rank-{} shape",
                                        2 * p.shape.size(), p.shape.size()), pads_json);
    for (size_t k = 0; k < p.pads.size(); ++k) {
      const int64_t size = p.shape[p.shape.size() - 1 - k / 2];
      if (p.pads[k] < -size) r.bad(SuiteReader::at(path + ".pads", k), "a crop no larger than the dim", pads_json[k]);
    }
    p.layout = r.has(e, "layout")
                   ? r.choice<PadLayout>(e["layout"], path + ".layout",
                                         {{"contiguous", PadLayout::contiguous},
                                          {"channels_last", PadLayout::channels_last},
                                          {"sliced", PadLayout::sliced}})
                   : PadLayout::contiguous;
    if (p.layout == PadLayout::channels_last && p.shape.size() < 2)
      r.bad(path + ".layout", "contiguous or sliced for a 1-D shape", e["layout"]);
    for (DType dtype : dtypes) {
      BenchCase c;
      c.name = name;
      c.shape = fmt::format("x[{}] pads ({}){}{}", dims(p.shape), dims(p.pads),
                            p.layout == PadLayout::contiguous ? "" : " ",
                            p.layout == PadLayout::contiguous ? "" : pad_layout_name(p.layout));
      c.dtype = dtype;
      c.params = p;
      suite.cases.push_back(std::move(c));
    }
  }
}

Shape padded_shape(const PadCase& p) {
  Shape out = p.shape;
  for (size_t k = 0; k < p.pads.size(); ++k) out[out.size() - 1 - k / 2] += p.pads[k];
  return out;
}

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

}  // namespace

std::string_view pad_layout_name(PadLayout layout) {
  switch (layout) {
    case PadLayout::contiguous: return "contiguous";
    case PadLayout::channels_last: return "channels_last";
    case PadLayout::sliced: return "sliced";
  }
  return "?";
}

void to_json(nlohmann::ordered_json& j, const PadCase& c) {
  j = {{"shape", c.shape}, {"pads", c.pads}, {"layout", pad_layout_name(c.layout)}, {"value", c.value}};
}

FOURFOLD_OP_CASES(constant_pad_nd) {
  return {
      .op = "constant_pad_nd",
      .suite = {"constant_pad_nd", parse_pad},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const PadCase& p = case_params<PadCase>(c);
        Tensor x = in.wide(pad_input(p, in.dtype(), in.seed()));
        const std::vector<int64_t> pads = p.pads;
        const double value = p.value;
        return [x, pads, value] { return constant_pad_nd(x, pads, value); };
      },
      .cost = [](const BenchCase& c) {   // read numel(x) * s, write numel(out) * s
        const PadCase& p = case_params<PadCase>(c);
        const double s = element_size(c);
        return OpCost{numel(p.shape) * s, numel(padded_shape(p)) * s, 0.0};
      },
      .sweep = {{"x[1,3,4,8,8] pads (1,1,1,1,2,0)", [](SweepInputs& in) {
                   return constant_pad_nd(in.randn({1, 3, 4, 8, 8}), {1, 1, 1, 1, 2, 0}, 0.5);
                 }}},
      .ulp_bound = 0,   // a copy and the pad value, rounded once as the reference rounds it: nothing else is rounded
  };
}

}  // namespace fourfold
