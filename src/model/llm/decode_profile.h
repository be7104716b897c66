// A decode step's time per op and per scope (layer kind), from the op profile of a generate() run with
// profile on: each row's share of the step and its achieved read rate against the probe of the same run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fourfold/profile.h"

namespace fourfold::model {

struct DecodeProfileLine {
  std::string scope, op, tier;
  double calls_per_step = 0.0;
  double us_per_step = 0.0;
  double share = 0.0;        // of the step
  double gb_per_s = 0.0;     // 0: the op's bytes are not estimated
  double of_probe = 0.0;     // gb_per_s over the probe's read rate
};

struct DecodeProfile {
  int64_t steps = 0;
  double us_per_step = 0.0;          // the whole step: ops, the host work between them and the sampler
  double outside_ops_us = 0.0;       // the step minus its timed ops
  double read_gb_per_s = 0.0;        // the probe's
  std::vector<DecodeProfileLine> ops;      // by time, longest first
  std::vector<DecodeProfileLine> scopes;   // summed per scope (op and tier empty), longest first
};

DecodeProfile decode_profile(const std::vector<OpProfileRow>& rows, int64_t steps, double decode_seconds,
                             double read_gb_per_s);
std::string decode_profile_text(const DecodeProfile& p);

}  // namespace fourfold::model
