#include "model/llm/decode_profile.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace fourfold::model {
namespace {

void finish(DecodeProfileLine& l, double bytes, double seconds, const DecodeProfile& p) {
  l.share = p.us_per_step > 0 ? l.us_per_step / p.us_per_step : 0.0;
  l.gb_per_s = bytes > 0 && seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
  l.of_probe = p.read_gb_per_s > 0 ? l.gb_per_s / p.read_gb_per_s : 0.0;
}

void by_time(std::vector<DecodeProfileLine>& lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const DecodeProfileLine& a, const DecodeProfileLine& b) { return a.us_per_step > b.us_per_step; });
}

std::string rate(const DecodeProfileLine& l) {
  if (l.gb_per_s <= 0) return fmt::format("{:>8} {:>7}", "-", "-");
  return fmt::format("{:>8.1f} {:>6.0f}%", l.gb_per_s, 100.0 * l.of_probe);
}

}  // namespace

DecodeProfile decode_profile(const std::vector<OpProfileRow>& rows, int64_t steps, double decode_seconds,
                             double read_gb_per_s) {
  DecodeProfile p;
  p.steps = steps;
  p.read_gb_per_s = read_gb_per_s;
  if (steps <= 0) return p;
  const double per = 1e6 / static_cast<double>(steps);
  p.us_per_step = decode_seconds * per;
  double in_ops = 0.0;
  std::map<std::string, std::pair<double, double>> scope_sums;   // seconds, bytes
  std::vector<std::string> scope_order;
  for (const OpProfileRow& r : rows) {
    DecodeProfileLine l{r.scope, r.op, r.tier, static_cast<double>(r.calls) / static_cast<double>(steps), r.seconds * per};
    finish(l, r.bytes, r.seconds, p);
    p.ops.push_back(l);
    in_ops += r.seconds;
    auto [it, inserted] = scope_sums.try_emplace(r.scope, 0.0, 0.0);
    if (inserted) scope_order.push_back(r.scope);
    it->second.first += r.seconds;
    it->second.second += r.bytes;
  }
  p.outside_ops_us = std::max(0.0, p.us_per_step - in_ops * per);
  for (const std::string& s : scope_order) {
    const auto [seconds, bytes] = scope_sums[s];
    DecodeProfileLine l{s, "", "", 0.0, seconds * per};
    finish(l, bytes, seconds, p);
    p.scopes.push_back(l);
  }
  by_time(p.ops);
  by_time(p.scopes);
  return p;
}

std::string decode_profile_text(const DecodeProfile& p) {
  if (p.steps <= 0) return "decode profile: no decode step ran\n";
  std::string out = fmt::format(
      "decode profile: {} steps of {:.0f} us; ops {:.0f} us, outside ops {:.0f} us ({:.1f}%); read probe {:.1f} GB/s\n",
      p.steps, p.us_per_step, p.us_per_step - p.outside_ops_us, p.outside_ops_us,
      p.us_per_step > 0 ? 100.0 * p.outside_ops_us / p.us_per_step : 0.0, p.read_gb_per_s);
  out += fmt::format("  {:<10} {:<29} {:<9} {:>6} {:>9} {:>6} {:>8} {:>7}\n", "scope", "op", "tier", "calls",
                     "us/step", "share", "GB/s", "probe");
  for (const DecodeProfileLine& l : p.ops)
    out += fmt::format("  {:<10} {:<29} {:<9} {:>6.1f} {:>9.1f} {:>5.1f}% {}\n", l.scope.empty() ? "-" : l.scope, l.op,
                       l.tier, l.calls_per_step, l.us_per_step, 100.0 * l.share, rate(l));
  out += "  per scope:\n";
  for (const DecodeProfileLine& l : p.scopes)
    out += fmt::format("  {:<10} {:<29} {:<9} {:>6} {:>9.1f} {:>5.1f}% {}\n", l.scope.empty() ? "-" : l.scope, "", "",
                       "", l.us_per_step, 100.0 * l.share, rate(l));
  return out;
}

}  // namespace fourfold::model
