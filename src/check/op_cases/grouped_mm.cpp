// grouped_mm 2-D x 3-D from the moe suite (read here; moe_params.h): a [tokens * top_k, k] @ b [experts, k, n]
// (the transposed view of [experts, n, k] weights), rows per expert by the case's routing.
#include <cmath>

#include "check/op_cases/moe_case.h"
#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_moe(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "model", "experts", "top_k",
                      "hidden_size", "moe_intermediate_size", "tokens", "routing", "projections"});
  const std::string model = r.has(j, "model") ? r.string(j["model"], "model") : std::string();
  const int64_t experts = r.integer(r.need(j, "", "experts"), "experts");
  const int64_t top_k = r.integer(r.need(j, "", "top_k"), "top_k");
  if (top_k > experts) r.bad("top_k", fmt::format("at most experts ({})", experts), j["top_k"]);
  if (r.has(j, "hidden_size")) r.integer(j["hidden_size"], "hidden_size");
  if (r.has(j, "moe_intermediate_size")) r.integer(j["moe_intermediate_size"], "moe_intermediate_size");
  const std::vector<int64_t> tokens = r.integers(r.need(j, "", "tokens"), "tokens");
  const nlohmann::json& routing_json = r.array(r.need(j, "", "routing"), "routing");
  std::vector<MoeRouting> routings;
  for (size_t i = 0; i < routing_json.size(); ++i)
    routings.push_back(r.choice<MoeRouting>(routing_json[i], SuiteReader::at("routing", i),
                                            {{"even", MoeRouting::even}, {"skewed", MoeRouting::skewed},
                                             {"empty", MoeRouting::empty}}));
  const nlohmann::json& projs = r.array(r.need(j, "", "projections"), "projections");
  suite.entries = static_cast<int64_t>(projs.size() * tokens.size() * routings.size());
  for (size_t i = 0; i < projs.size(); ++i) {
    const std::string path = SuiteReader::at("projections", i);
    r.only_keys(projs[i], path, {"name", "op", "n", "k"});
    const std::string name = r.string(r.need(projs[i], path, "name"), path + ".name");
    // "op": "moe_experts" times the whole routed-expert computation (n = I, k = H) instead of one grouped_mm.
    const std::string op = r.has(projs[i], "op") ? r.string(projs[i]["op"], path + ".op") : suite.op;
    if (op != "grouped_mm" && op != "moe_experts") r.bad(path + ".op", "grouped_mm or moe_experts", projs[i]["op"]);
    const int64_t n = r.integer(r.need(projs[i], path, "n"), path + ".n");
    const int64_t k = r.integer(r.need(projs[i], path, "k"), path + ".k");
    for (DType dtype : dtypes)
      for (int64_t t : tokens)
        for (MoeRouting routing : routings) {
          BenchCase c;
          c.name = fmt::format("{}{}{} {} tok {}", model, model.empty() ? "" : " ", name, t, moe_routing_name(routing));
          c.op = op;
          c.shape = op == "moe_experts" ? fmt::format("x[{},{}] gate,up[{},{},{}] down[{},{},{}] top{}", t, k, experts, n,
                                                      k, experts, k, n, top_k)
                                        : fmt::format("a[{},{}] b[{},{},{}] top{}", t * top_k, k, experts, k, n, top_k);
          c.dtype = dtype;
          c.params = MoeCase{t, experts, top_k, n, k, name, routing};
          suite.cases.push_back(std::move(c));
        }
  }
}

}  // namespace

std::string_view moe_routing_name(MoeRouting routing) {
  switch (routing) {
    case MoeRouting::even: return "even";
    case MoeRouting::skewed: return "skewed";
    case MoeRouting::empty: return "empty";
  }
  return "?";
}

std::vector<int64_t> moe_group_sizes(int64_t tokens, int64_t experts, int64_t top_k, MoeRouting routing) {
  if (tokens < 0 || experts < 1 || top_k < 1 || top_k > experts)
    fail<ValueError>("moe_group_sizes", "tokens, experts, top_k", "tokens >= 0 and 1 <= top_k <= experts",
                     fmt::format("{}, {}, {}", tokens, experts, top_k));
  std::vector<int64_t> sizes(static_cast<size_t>(experts), 0);
  const int64_t assignments = tokens * top_k;
  switch (routing) {
    case MoeRouting::even:
      for (int64_t e = 0; e < experts; ++e)
        sizes[static_cast<size_t>(e)] = assignments / experts + (e < assignments % experts ? 1 : 0);
      break;
    case MoeRouting::skewed:
      // D'Hondt: each assignment goes to the expert with the largest weight / (size + 1) that still has a
      // token left to take; ties to the lower index.
      for (int64_t a = 0; a < assignments; ++a) {
        int64_t best = -1;
        double best_quotient = -1.0;
        for (int64_t e = 0; e < experts; ++e) {
          if (sizes[static_cast<size_t>(e)] >= tokens) continue;
          const double q = 1.0 / static_cast<double>(e + 1) / static_cast<double>(sizes[static_cast<size_t>(e)] + 1);
          if (q > best_quotient) {
            best_quotient = q;
            best = e;
          }
        }
        ++sizes[static_cast<size_t>(best)];
      }
      break;
    case MoeRouting::empty:
      for (int64_t j = 0; j < top_k; ++j) sizes[static_cast<size_t>(j * experts / top_k)] = tokens;
      break;
  }
  return sizes;
}

void to_json(nlohmann::ordered_json& j, const MoeCase& c) {
  j = {{"tokens", c.tokens}, {"experts", c.experts}, {"top_k", c.top_k}, {"n", c.n}, {"k", c.k},
       {"projection", c.projection}, {"routing", moe_routing_name(c.routing)},
       {"group_sizes", moe_group_sizes(c.tokens, c.experts, c.top_k, c.routing)}};
}

FOURFOLD_OP_CASES(grouped_mm) {
  return {
      .op = "grouped_mm",
      .suite = {"grouped_mm", parse_moe},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        Tensor a = in({moe_total_rows(sizes), m.k}, 0);
        // Stored [E, N, K] like nn.Linear weights; grouped_mm takes [E, K, N]: the transposed view.
        Tensor w = in({m.experts, m.n, m.k}, 1, 1.0 / std::sqrt(static_cast<double>(m.k)));
        Tensor b = w.transpose(1, 2);
        Tensor offs = moe_offsets(sizes);
        return [a, b, offs] { return grouped_mm(a, b, offs); };
      },
      .cost = [](const BenchCase& c) {
        // read (A*K + G_active*K*N) * s + 4*G (offs), write A*N * s, flops 2*A*N*K, A = tokens*top_k rows
        const MoeCase& m = case_params<MoeCase>(c);
        const std::vector<int64_t> sizes = moe_group_sizes(m.tokens, m.experts, m.top_k, m.routing);
        const double active = moe_active_experts(sizes), s = element_size(c);
        const double rows = static_cast<double>(m.tokens * m.top_k), n = m.n, k = m.k;
        return OpCost{(rows * k + active * k * n) * s + 4.0 * static_cast<double>(m.experts), rows * n * s,
                      2.0 * rows * n * k};
      },
      .sweep = {{"a[24,32] b[4,32,16] offs[0,5,5,24]", [](SweepInputs& in) {
                   Tensor offs = Tensor::from_vector({0, 5, 5, 24}, {4}, DType::i32);
                   return grouped_mm(in.randn({24, 32}), in.randn({4, 32, 16}, 0.2), offs, in.compute());
                 }}},
  };
}

}  // namespace fourfold
