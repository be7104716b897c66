// softmax over the last of [rows, cols] from the softmax suite (read here; softmax_params.h).
#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_softmax(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "rows", "dim", "vocabularies"});
  const std::vector<int64_t> rows = r.integers(r.need(j, "", "rows"), "rows");
  const int dim = r.has(j, "dim") ? static_cast<int>(r.integer(j["dim"], "dim", -2)) : -1;
  if (dim > 1) r.bad("dim", "-2, -1, 0 or 1 (inputs are [rows, vocab])", j["dim"]);
  const nlohmann::json& vocabs = r.array(r.need(j, "", "vocabularies"), "vocabularies");
  suite.entries = static_cast<int64_t>(vocabs.size());
  for (size_t i = 0; i < vocabs.size(); ++i) {
    const std::string path = SuiteReader::at("vocabularies", i);
    const nlohmann::json& v = vocabs[i];
    r.only_keys(v, path, {"size", "models"});
    const int64_t cols = r.integer(r.need(v, path, "size"), path + ".size");
    std::vector<std::string> models;
    if (r.has(v, "models")) {
      const nlohmann::json& list = r.array(v["models"], path + ".models", false);
      for (size_t m = 0; m < list.size(); ++m) models.push_back(r.string(list[m], SuiteReader::at(path + ".models", m)));
    }
    for (DType dtype : dtypes)
      for (int64_t n_rows : rows) {
        BenchCase c;
        c.name = models.empty() ? fmt::format("vocab {}", cols) : fmt::format("vocab {} ({})", cols, fmt::join(models, ", "));
        c.shape = fmt::format("x[{},{}] dim {}", n_rows, cols, dim);
        c.dtype = dtype;
        c.params = SoftmaxCase{n_rows, cols, dim};
        suite.cases.push_back(std::move(c));
      }
  }
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const SoftmaxCase& c) {
  j = {{"rows", c.rows}, {"cols", c.cols}, {"dim", c.dim}};
}

FOURFOLD_OP_CASES(softmax) {
  return {
      .op = "softmax",
      .suite = {"softmax", parse_softmax},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const SoftmaxCase& sm = case_params<SoftmaxCase>(c);
        Tensor x = in({sm.rows, sm.cols}, 0, 8.0);
        const int dim = sm.dim;
        return [x, dim] { return softmax(x, dim); };
      },
      .cost = [](const BenchCase& c) {   // x in, out
        const SoftmaxCase& sm = case_params<SoftmaxCase>(c);
        const double e = static_cast<double>(sm.rows) * static_cast<double>(sm.cols), s = element_size(c);
        return OpCost{e * s, e * s, 0.0};
      },
      .sweep = {{"x[4,1000] dim -1", [](SweepInputs& in) { return softmax(in.randn({4, 1000}, 3.0), -1); }},
                {"x[3,7] dim -1 (shorter than a vector)", [](SweepInputs& in) { return softmax(in.randn({3, 7}, 3.0), -1); }},
                {"x[5,33] dim 0", [](SweepInputs& in) { return softmax(in.randn({5, 33}, 3.0), 0); }},
                {"x = [33,5] transposed, dim -1 (a strided input)",
                 [](SweepInputs& in) { return softmax(in.randn({33, 5}, 3.0).transpose(0, 1), -1); }}},
  };
}

}  // namespace fourfold
