// scaled_dot_product_attention from the attention suite (read here; attention_params.h): q [batch, q_heads,
// q_len, head_dim], k and v [batch, kv_heads, kv_len, head_dim], GQA when the head counts differ.
#include "check/op_cases/op_case.h"
#include "check/suite_reader.h"
#include "fourfold/ops.h"

namespace fourfold {
namespace {

void parse_attention(const SuiteReader& r, const nlohmann::json& j, Suite& suite, const std::vector<DType>& dtypes) {
  r.only_keys(j, "", {"suite", "op", "description", "generated_by", "dtypes", "model", "batch", "q_heads",
                      "kv_heads", "head_dim", "cases"});
  AttentionCase base;
  base.batch = r.has(j, "batch") ? r.integer(j["batch"], "batch") : 1;
  base.q_heads = r.integer(r.need(j, "", "q_heads"), "q_heads");
  base.kv_heads = r.integer(r.need(j, "", "kv_heads"), "kv_heads");
  base.head_dim = r.integer(r.need(j, "", "head_dim"), "head_dim");
  if (base.q_heads % base.kv_heads != 0)
    r.bad("kv_heads", fmt::format("a divisor of q_heads ({})", base.q_heads), j["kv_heads"]);
  const nlohmann::json& cases = r.array(r.need(j, "", "cases"), "cases");
  suite.entries = static_cast<int64_t>(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = SuiteReader::at("cases", i);
    const nlohmann::json& e = cases[i];
    r.only_keys(e, path, {"name", "q_len", "kv_len", "causal"});
    AttentionCase a = base;
    const std::string name = r.string(r.need(e, path, "name"), path + ".name");
    a.q_len = r.integer(r.need(e, path, "q_len"), path + ".q_len");
    a.kv_len = r.integer(r.need(e, path, "kv_len"), path + ".kv_len");
    a.causal = r.has(e, "causal") ? r.choice<CausalMode>(e["causal"], path + ".causal",
                                                         {{"none", CausalMode::none},
                                                          {"top_left", CausalMode::top_left},
                                                          {"lower_right", CausalMode::lower_right}})
                                  : CausalMode::none;
    for (DType dtype : dtypes) {
      BenchCase c;
      c.name = fmt::format("{} {}", name, a.kv_len);
      c.shape = fmt::format("q[{},{},{},{}] kv[{},{},{},{}]{}", a.batch, a.q_heads, a.q_len, a.head_dim, a.batch,
                            a.kv_heads, a.kv_len, a.head_dim,
                            a.causal == CausalMode::none ? "" : a.causal == CausalMode::top_left ? " causal" : " causal-lr");
      c.dtype = dtype;
      c.params = a;
      suite.cases.push_back(std::move(c));
    }
  }
}

}  // namespace

double AttentionCase::attended_pairs() const {
  const int64_t L = q_len, S = kv_len;
  double pairs = 0;
  for (int64_t i = 0; i < L; ++i) {
    int64_t keys = S;
    if (causal == CausalMode::top_left) keys = std::min(S, i + 1);
    if (causal == CausalMode::lower_right) keys = std::clamp<int64_t>(i + S - L + 1, 0, S);
    pairs += static_cast<double>(keys);
  }
  return pairs;
}

void to_json(nlohmann::ordered_json& j, const AttentionCase& c) {
  j = {{"batch", c.batch}, {"q_heads", c.q_heads}, {"kv_heads", c.kv_heads}, {"head_dim", c.head_dim},
       {"q_len", c.q_len}, {"kv_len", c.kv_len},
       {"causal", c.causal == CausalMode::none ? "none" : c.causal == CausalMode::top_left ? "top_left" : "lower_right"}};
}

FOURFOLD_OP_CASES(scaled_dot_product_attention) {
  return {
      .op = "scaled_dot_product_attention",
      .suite = {"scaled_dot_product_attention", parse_attention},
      .call = [](const BenchCase& c, const BenchInputs& in) -> BenchCall {
        const AttentionCase& a = case_params<AttentionCase>(c);
        Tensor q = in({a.batch, a.q_heads, a.q_len, a.head_dim}, 0);
        Tensor k = in({a.batch, a.kv_heads, a.kv_len, a.head_dim}, 1);
        Tensor v = in({a.batch, a.kv_heads, a.kv_len, a.head_dim}, 2);
        AttentionOptions options;
        options.causal = a.causal;
        options.enable_gqa = a.q_heads != a.kv_heads;
        return [q, k, v, options] { return scaled_dot_product_attention(q, k, v, options); };
      },
      .cost = [](const BenchCase& c) {
        // read (q + k + v) * s (k, v once: GQA shares them), write out * s, flops 2 * B * Hq * P * (E + Ev),
        // P = attended (query, key) pairs (L*S without a mask; causal counts only the pairs the mask keeps)
        const AttentionCase& a = case_params<AttentionCase>(c);
        const double b = a.batch, hq = a.q_heads, hk = a.kv_heads, e = a.head_dim, s = element_size(c);
        const double q = b * hq * a.q_len * e, kv = 2.0 * b * hk * a.kv_len * e;
        return OpCost{(q + kv) * s, q * s, 2.0 * b * hq * a.attended_pairs() * (e + e)};
      },
      .sweep = {{"q[1,8,5,64] kv[1,2,37,64] gqa lower-right causal", [](SweepInputs& in) {
                   AttentionOptions o;
                   o.causal = CausalMode::lower_right;
                   o.enable_gqa = true;
                   return scaled_dot_product_attention(in.randn({1, 8, 5, 64}), in.randn({1, 2, 37, 64}),
                                                       in.randn({1, 2, 37, 64}), o);
                 }},
                {"q[1,2,1,80] kv[1,2,19,80] (one decode row, an odd head size)", [](SweepInputs& in) {
                   return scaled_dot_product_attention(in.randn({1, 2, 1, 80}), in.randn({1, 2, 19, 80}),
                                                       in.randn({1, 2, 19, 80}), AttentionOptions{});
                 }}},
  };
}

}  // namespace fourfold
