// The "run" object beside the records of `fourfold run --json` (docs/records_schema.md describes each key).
#include <nlohmann/json.hpp>

#include "check/run_workload.h"

namespace fourfold {

std::string run_record_json(const RunOutcome& o) {
  const model::GenerationWithLogits& g = o.generation;
  const int64_t prompt_tokens = static_cast<int64_t>(o.prompt.ids.size());
  nlohmann::json out = nlohmann::json::parse(to_json_text(o.records));
  out["run"] = {{"model", o.description},
                {"prompt_tokens", prompt_tokens},
                {"prompt_source", o.prompt.source},
                {"prompt_ids", o.prompt.ids},
                {"stopped_at_eos", g.stopped},
                {"generated_tokens", g.tokens},
                {"prefill_seconds", g.prefill_seconds},
                {"decode_seconds", g.decode_seconds},
                {"decoded_tokens", g.decoded_tokens},
                {"context_reached", g.context},
                {"prefill_compute", {{"flops", o.prefill_flops}, {"gflop_per_s", o.prefill_gflop_per_s},
                                     {"peak_gflop_per_s", o.peak.gflops},
                                     {"fraction_of_peak", o.prefill_gflop_per_s / o.peak.gflops}}},
                {"bandwidth_floor", {{"active_weight_bytes_per_token", o.floor.weight_bytes},
                                     {"kv_bytes_per_token", o.floor.kv_bytes},
                                     {"mean_context", o.mean_context},
                                     {"read_gb_per_s", o.floor.read_gb_per_s},
                                     {"floor_seconds_per_token", o.floor.seconds_per_token()},
                                     {"fraction_reached", o.floor.fraction(o.decode_tokens_per_s)}}},
                {"bandwidth_floor_by_step",
                 o.steps ? nlohmann::json{{"probe_bytes", o.steps->probe_bytes},
                                          {"read_gb_per_s", o.steps->probe_samples},
                                          {"step_seconds", g.step_seconds},
                                          {"fraction_median", o.steps->fraction.median},
                                          {"fraction_p10", o.steps->fraction.p10},
                                          {"fraction_p90", o.steps->fraction.p90}}
                         : nlohmann::json(nullptr)},
                {"weights_copied_at_load_bytes", o.weights_copied_bytes},
                {"weights_residency", std::string(model::residency_name(o.setup.residency))},
                {"weights_read_into_memory_bytes", o.file_copy_bytes},
                {"load_seconds", o.setup.load_seconds},
                {"decode_minor_faults", g.decode_minor_faults},
                {"decode_major_faults", g.decode_major_faults},
                {"weights_copied_at_load", o.weights_copied},
                {"kv_cache_bytes", o.kv_cache_bytes},
                {"linear_state_bytes", o.linear_conv_bytes + o.linear_recurrent_bytes},
                {"activation_dtype", std::string(dtype_name(o.activation))},
                {"activation_dtype_from", o.activation_from},
                {"kv_cache_dtype", std::string(dtype_name(o.kv_cache))},
                {"kv_cache_dtype_from", o.kv_cache_from}};
  if (o.profiled) {
    nlohmann::json ops = nlohmann::json::array();
    for (const model::DecodeProfileLine& l : o.profile.ops)
      ops.push_back({{"scope", l.scope}, {"op", l.op}, {"tier", l.tier}, {"calls_per_step", l.calls_per_step},
                     {"us_per_step", l.us_per_step}, {"share_of_step", l.share}, {"gb_per_s", l.gb_per_s},
                     {"fraction_of_read_probe", l.of_probe}});
    out["run"]["decode_profile"] = {{"steps", o.profile.steps}, {"us_per_step", o.profile.us_per_step},
                                    {"outside_ops_us_per_step", o.profile.outside_ops_us},
                                    {"read_gb_per_s", o.profile.read_gb_per_s}, {"ops", ops}};
  }
  return out.dump(1) + "\n";
}

}  // namespace fourfold
