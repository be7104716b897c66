// conv2d from the conv suite's 4-D cases: x [N, C, H, W], weight [O, C / groups, kH, kW], bias [O].
#include "check/op_cases/conv_case.h"
#include "check/suite_reader.h"

namespace fourfold {
namespace {

// conv2d / conv3d rows: each case lists x and weight shapes (the rank picks the op) and the conv parameters.
void parse_conv(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  for_each_case(r, j, suite, [&](const std::string& path, const nlohmann::json& e) {
    r.only_keys(e, path, {"name", "x", "weight", "stride", "padding", "dilation", "groups", "bias"});
    ConvCase c;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    c.x = r.integers(r.need(e, path, "x"), path + ".x");
    if (c.x.size() != 4 && c.x.size() != 5)
      r.bad(path + ".x", "[N, C, H, W] (conv2d) or [N, C, T, H, W] (conv3d)", e["x"]);
    c.weight = r.integers(r.need(e, path, "weight"), path + ".weight");
    if (c.weight.size() != c.x.size()) r.bad(path + ".weight", fmt::format("{} dims, as x", c.x.size()), e["weight"]);
    const size_t spatial = c.x.size() - 2;
    const auto param = [&](const char* key, int64_t min, int64_t fallback) {
      std::vector<int64_t> v = r.has(e, key) ? r.integers(e[key], path + "." + key, min) : std::vector<int64_t>{fallback};
      if (v.size() == 1) v.assign(spatial, v[0]);
      if (v.size() != spatial) r.bad(path + "." + key, fmt::format("1 or {} values", spatial), e[key]);
      return v;
    };
    c.stride = param("stride", 1, 1);
    c.padding = param("padding", 0, 0);
    c.dilation = param("dilation", 1, 1);
    c.groups = r.has(e, "groups") ? r.integer(e["groups"], path + ".groups") : 1;
    c.bias = r.has(e, "bias") ? r.boolean(e["bias"], path + ".bias") : true;
    if (c.weight[0] % c.groups != 0 || c.x[1] != c.weight[1] * c.groups)
      r.bad(path + ".weight", fmt::format("[O, C / groups, ...] with O a multiple of groups={} and C = {}", c.groups, c.x[1]),
            e["weight"]);
    for (size_t d = 0; d < spatial; ++d)
      if (c.x[2 + d] + 2 * c.padding[d] < c.dilation[d] * (c.weight[2 + d] - 1) + 1)
        r.bad(path + ".x", fmt::format("a padded size at dim {} that holds the dilated kernel", 2 + d), e["x"]);
    for (DType dtype : dtypes) {
      BenchCase b;
      b.name = name;
      b.op = c.x.size() == 4 ? "conv2d" : "conv3d";
      b.shape = fmt::format("x[{}] w[{}]{}{}{}{}{}", dims(c.x), dims(c.weight), c.bias ? " +bias" : "",
                            c.stride == std::vector<int64_t>(spatial, 1) ? "" : " stride " + dims(c.stride),
                            c.padding == std::vector<int64_t>(spatial, 0) ? "" : " pad " + dims(c.padding),
                            c.dilation == std::vector<int64_t>(spatial, 1) ? "" : " dil " + dims(c.dilation),
                            c.groups == 1 ? "" : fmt::format(" groups {}", c.groups));
      b.dtype = dtype;
      b.params = c;
      suite.cases.push_back(std::move(b));
    }
  });
}

}  // namespace

Shape ConvCase::out_shape() const {
  Shape out = {x[0], weight[0]};
  for (size_t d = 0; d + 2 < x.size(); ++d)
    out.push_back((x[2 + d] + 2 * padding[d] - dilation[d] * (weight[2 + d] - 1) - 1) / stride[d] + 1);
  return out;
}

void to_json(nlohmann::ordered_json& j, const ConvCase& c) {
  j = {{"x", c.x}, {"weight", c.weight}, {"stride", c.stride}, {"padding", c.padding}, {"dilation", c.dilation},
       {"groups", c.groups}, {"bias", c.bias}};
}

FOURFOLD_OP_CASES(conv2d) {
  return {
      .op = "conv2d",
      .suite = {"conv", parse_conv},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const ConvCase& v = case_params<ConvCase>(c);
        const ConvInputs t = conv_inputs(v, in);
        return [t, v] { return conv2d(t.x, t.weight, t.bias, v.stride, v.padding, v.dilation, v.groups); };
      },
      .cost = conv_cost,
      .sweep = {{"x[1,4,9,9] w[6,2,3,3] groups 2 stride 2 pad 1", [](SweepInputs& in) {
                   return conv2d(in.randn({1, 4, 9, 9}), in.randn({6, 2, 3, 3}, 0.3), in.randn({6}), {2, 2}, {1, 1},
                                 {1, 1}, 2);
                 }}},
  };
}

}  // namespace fourfold
