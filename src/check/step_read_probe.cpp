#include "check/step_read_probe.h"

#include <sys/mman.h>

#include <cstdint>
#include <string>

#include "check/roofline_probes.h"
#include "fourfold/errors.h"
#include "ops/kernel_isa.h"

namespace fourfold {

StepReadProbe::StepReadProbe(size_t bytes) : bytes_(bytes / 512 * 512) {
  if (bytes_ < (size_t{1} << 20))
    fail<ValueError>("StepReadProbe", "bytes", "at least 1 MiB", std::to_string(bytes));
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;   // slack to start the probed range on a huge-page boundary
  mapped_ = bytes_ + kHuge;
  mapping_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    fail<OutOfMemoryError>("StepReadProbe", "bytes", "an anonymous mapping of that size", std::to_string(mapped_));
  }
  data_ = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(mapping_) + kHuge - 1) & ~(kHuge - 1));
  madvise(data_, bytes_, MADV_HUGEPAGE);   // best effort: without it the samples are what 4 KiB pages give
  probe_write_gbs(data_, bytes_, active_kernel_isa().name);   // first touch, on every thread
  probe_read_gbs(data_, bytes_, active_kernel_isa().name);    // warm-up: TLB and prefetcher state
}

StepReadProbe::~StepReadProbe() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_);
}

double StepReadProbe::sample() {
  samples_.push_back(probe_read_gbs(data_, bytes_, active_kernel_isa().name));
  return samples_.back();
}

}  // namespace fourfold
