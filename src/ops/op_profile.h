// The dispatch side of the op profile (fourfold/profile.h): whether to time this call, and the timer.
#pragma once

#include <atomic>
#include <chrono>

#include "fourfold/profile.h"
#include "backends/op_list.h"

namespace fourfold {

namespace profile_detail {
extern std::atomic<bool> enabled;
extern thread_local int depth;
}  // namespace profile_detail

// True when profiling is on and no op is already being timed on this thread (one relaxed load when off).
inline bool op_profile_wanted() {
  return profile_detail::enabled.load(std::memory_order_relaxed) && profile_detail::depth == 0;
}

// Times one op call from construction to destruction and adds it to the profile.
class ProfiledCall {
 public:
  ProfiledCall(OpId op, int tier, double bytes);
  ~ProfiledCall();
  ProfiledCall(const ProfiledCall&) = delete;
  ProfiledCall& operator=(const ProfiledCall&) = delete;

 private:
  OpId op_;
  int tier_;
  double bytes_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fourfold
