// Process memory from /proc/self/status, the peak reset through clear_refs, and the device-probe stub.
#include "fourfold/memory_probe.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "fourfold/errors.h"

namespace fourfold {

ProcessMemory read_process_memory() {
  ProcessMemory m;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) m.rss_bytes = kb * 1024;
    else if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) m.rss_peak_bytes = kb * 1024;
    else if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1) m.rss_anon_bytes = kb * 1024;
    else if (std::sscanf(line, "RssFile: %llu kB", &kb) == 1) m.rss_file_bytes = kb * 1024;
    else if (std::sscanf(line, "RssShmem: %llu kB", &kb) == 1) m.rss_shmem_bytes = kb * 1024;
  }
  std::fclose(f);
  return m;
}

bool reset_process_peak() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) return false;
  // The kernel accepted the write; check that the mark now tracks the current resident set.
  const ProcessMemory m = read_process_memory();
  return m.rss_peak_bytes <= m.rss_bytes + (1u << 20);
}

struct PeakSampler::State {
  std::mutex mutex;
  ProcessMemory peak;
  std::atomic<bool> stop{false};
  std::thread thread;

  void sample() {
    const ProcessMemory m = read_process_memory();
    std::lock_guard lock(mutex);
    peak.rss_bytes = std::max(peak.rss_bytes, m.rss_bytes);
    peak.rss_anon_bytes = std::max(peak.rss_anon_bytes, m.rss_anon_bytes);
    peak.rss_file_bytes = std::max(peak.rss_file_bytes, m.rss_file_bytes);
    peak.rss_shmem_bytes = std::max(peak.rss_shmem_bytes, m.rss_shmem_bytes);
    peak.rss_peak_bytes = m.rss_peak_bytes;
  }
};

PeakSampler::PeakSampler(int interval_ms) : state_(std::make_unique<State>()) {
  if (interval_ms < 1) fail<ValueError>("PeakSampler", "interval_ms", ">= 1", std::to_string(interval_ms));
  state_->sample();
  State* s = state_.get();
  s->thread = std::thread([s, interval_ms] {
    while (!s->stop.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
      s->sample();
    }
  });
}

PeakSampler::~PeakSampler() {
  state_->stop = true;
  state_->thread.join();
}

ProcessMemory PeakSampler::peak() const {
  state_->sample();
  std::lock_guard lock(state_->mutex);
  return state_->peak;
}

namespace {

class CpuDeviceProbe final : public DeviceMemoryProbe {
 public:
  Device device() const override { return kCpu; }
  DeviceMemory read() override { return {}; }   // no driver level on the CPU: the process level covers it
  void reset_peak() override {}
};

}  // namespace

std::unique_ptr<DeviceMemoryProbe> make_device_memory_probe(Device device) {
  if (device.type == DeviceType::cpu) return std::make_unique<CpuDeviceProbe>();
  fail<DeviceError>("make_device_memory_probe", "device", "cpu (no CUDA backend in this build)", device_name(device));
}

}  // namespace fourfold
