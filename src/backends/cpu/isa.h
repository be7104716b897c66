// The dedicated CPU tier's ISA level: the best one the host supports, chosen once, overridable by FOURFOLD_ISA.
#pragma once

#include <string_view>
#include <vector>

#include "backends/cpu/isa_levels.h"

namespace fourfold::cpu {

// Ordered from the least to the most capable (isa_levels.h); each level implies the ones below it.
#define FOURFOLD_ISA_ENUMERATOR_(level) level,
enum class Isa { FOURFOLD_ISA_LEVELS(FOURFOLD_ISA_ENUMERATOR_) };
#undef FOURFOLD_ISA_ENUMERATOR_
#define FOURFOLD_ISA_ONE_(level) +1
inline constexpr int kIsaCount = 0 FOURFOLD_ISA_LEVELS(FOURFOLD_ISA_ONE_);
#undef FOURFOLD_ISA_ONE_

std::string_view isa_name(Isa isa);   // the level's name in isa_levels.h: also the Kernel::variant string
std::vector<Isa> host_isas();         // the levels this host can run, best first (scalar always)

// The value of FOURFOLD_ISA (null or empty: the best host level) resolved against `host`: ValueError naming
// FOURFOLD_ISA and the host's levels for an unknown name or a level the host lacks.
Isa parse_isa_setting(const char* value, const std::vector<Isa>& host);

// The level the dedicated tier runs: on first use, FOURFOLD_ISA or the best host level.
Isa active_isa();
// Forces a level at run time (tests sweep every host level); ValueError when the host lacks it.
void set_active_isa(Isa isa);

// Restores the previous level when it goes out of scope.
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa) : previous_(active_isa()) { set_active_isa(isa); }
  ~ScopedIsa() { set_active_isa(previous_); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;
 private:
  Isa previous_;
};

}  // namespace fourfold::cpu
