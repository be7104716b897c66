// The op profile's rows: one mutex-guarded list, touched only while profiling (an op call costs microseconds,
// the lock tens of nanoseconds).
#include "ops/op_profile.h"

#include <mutex>

#include "ops/dispatch.h"
#include "ops/op_bytes.h"

namespace fourfold {

namespace profile_detail {
std::atomic<bool> enabled{false};
thread_local int depth = 0;
}  // namespace profile_detail

namespace {

thread_local const char* current_scope = "";

struct ProfileState {
  std::mutex mutex;
  std::vector<OpProfileRow> rows;
};

ProfileState& state() {
  static ProfileState s;
  return s;
}

}  // namespace

void start_op_profile() {
  ProfileState& s = state();
  std::lock_guard lock(s.mutex);
  s.rows.clear();
  profile_detail::enabled.store(true, std::memory_order_relaxed);
}

void stop_op_profile() { profile_detail::enabled.store(false, std::memory_order_relaxed); }

std::vector<OpProfileRow> op_profile_rows() {
  ProfileState& s = state();
  std::lock_guard lock(s.mutex);
  return s.rows;
}

ProfileScope::ProfileScope(const char* name) : previous_(current_scope) { current_scope = name; }
ProfileScope::~ProfileScope() { current_scope = previous_; }

ProfiledCall::ProfiledCall(OpId op, int tier, double bytes)
    : op_(op), tier_(tier), bytes_(bytes), start_(std::chrono::steady_clock::now()) {
  ++profile_detail::depth;
}

ProfiledCall::~ProfiledCall() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  --profile_detail::depth;
  const std::string_view tier = tier_name(static_cast<Tier>(tier_));
  ProfileState& s = state();
  std::lock_guard lock(s.mutex);
  for (OpProfileRow& r : s.rows)
    if (r.scope == current_scope && r.op == op_name(op_) && r.tier == tier) {
      ++r.calls;
      r.seconds += seconds;
      r.bytes += bytes_;
      return;
    }
  s.rows.push_back({current_scope, op_name(op_), std::string(tier), 1, seconds, bytes_});
}

double op_bytes(const MoeExpertsArgs& a) {
  const std::vector<double> ends = a.offs.to_vector();
  const auto expert_bytes = [](const Tensor& w, const Tensor* scale) {
    double b = static_cast<double>(w.size(1) * w.size(2)) * static_cast<double>(dtype_size(w.dtype()));
    if (scale != nullptr) b += static_cast<double>(scale->size(1) * scale->size(2)) * 4.0;
    return b;
  };
  const double per_expert =
      expert_bytes(a.gate, a.gate_scale) + expert_bytes(a.up, a.up_scale) + expert_bytes(a.down, a.down_scale);
  double used = 0.0, previous = 0.0;
  for (double end : ends) {
    if (end > previous) used += per_expert;
    previous = end;
  }
  return used + tensor_bytes(&a.x) + tensor_bytes(&a.out);
}

}  // namespace fourfold
