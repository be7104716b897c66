// The op profile: wall time and bytes of every op call while it is on, by scope (the part of the model that
// made the call: "attention", "moe", "lm_head", ...), op and tier. Only the outermost op of a nested call is
// timed (a generic kernel composed of ops counts once, under its own name), so the rows add up to the time
// spent inside ops; what the model does between ops (copies, routing on the host) is the step's remainder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fourfold {

struct OpProfileRow {
  std::string scope;   // the innermost ProfileScope at the call ("" outside any)
  std::string op;
  std::string tier;
  uint64_t calls = 0;
  double seconds = 0.0;
  double bytes = 0.0;  // bytes the op must move at least (inputs read, outputs written; 0: not estimated)
};

// Clears the rows and starts timing; stop_op_profile() ends it and op_profile_rows() reads them.
void start_op_profile();
void stop_op_profile();
std::vector<OpProfileRow> op_profile_rows();   // in first-call order

// Names the calls made on this thread while it lives (nested scopes: the innermost names them).
class ProfileScope {
 public:
  explicit ProfileScope(const char* name);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* previous_;
};

}  // namespace fourfold
