// A persistent pool of num_threads() - 1 workers. Workers spin briefly on a generation counter, then sleep on it
// (futex through std::atomic::wait), so a burst of small parallel regions pays no thread wake-up, and an idle
// pool costs nothing. Measured against OpenMP in docs/parallel_for.md.
#include "fourfold/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "fourfold/errors.h"

namespace fourfold {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// About 20-50 µs of spinning before sleeping: longer than the gap between the kernels of one decode step,
// shorter than anything a sharing process would notice.
constexpr int kSpinIterations = 4000;

template <class T>
void spin_then_wait(const std::atomic<T>& value, T old) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (value.load(std::memory_order_acquire) != old) return;
    cpu_relax();
  }
  while (value.load(std::memory_order_acquire) == old) value.wait(old, std::memory_order_acquire);
}

thread_local bool t_inside_region = false;

// Chunk `chunk` of [begin, end) split into `chunks`: the pool's split and the host threads' alike.
struct Range {
  int64_t begin, end;
};
Range chunk_range(int64_t begin, int64_t end, int chunk, int chunks) {
  const int64_t n = end - begin;
  return {begin + n * chunk / chunks, begin + n * (chunk + 1) / chunks};
}

class ThreadPool {
 public:
  explicit ThreadPool(int threads) { start(threads); }
  ~ThreadPool() { stop(); }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int threads) {
    std::lock_guard lock(run_mutex_);
    stop();
    start(threads);
  }

  void run(int64_t begin, int64_t end, int chunks, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard lock(run_mutex_);
    fn_ = &fn;
    begin_ = begin;
    end_ = end;
    chunks_ = chunks;
    error_ = nullptr;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    run_chunk(0);
    int left;
    while ((left = pending_.load(std::memory_order_acquire)) != 0) spin_then_wait(pending_, left);
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void start(int threads) {
    stopping_.store(false);
    // The generation is read here, not in the new thread: a region published before the thread first runs
    // must still count as new to it, or the caller would wait for that worker forever.
    const uint64_t generation = generation_.load(std::memory_order_acquire);
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i, generation] { worker(i, generation); });
  }

  void stop() {
    stopping_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  void run_chunk(int chunk) {
    if (chunk >= chunks_) return;
    const Range r = chunk_range(begin_, end_, chunk, chunks_);
    t_inside_region = true;
    try {
      (*fn_)(r.begin, r.end);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_inside_region = false;
  }

  void worker(int index, uint64_t seen) {
    for (;;) {
      spin_then_wait(generation_, seen);
      seen = generation_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_acquire)) return;
      run_chunk(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t begin_ = 0, end_ = 0;
  int chunks_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

int default_threads() {
  if (const char* env = std::getenv("FOURFOLD_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || n < 1 || n > 1024)
      fail<ValueError>("FOURFOLD_THREADS", "value", "an integer in [1, 1024]", std::string("'") + env + "'");
    return static_cast<int>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::mutex g_pool_mutex;
ThreadPool* g_pool = nullptr;

ThreadPool& pool() {
  std::lock_guard lock(g_pool_mutex);
  // Never destroyed: worker threads must not be joined during static destruction.
  if (g_pool == nullptr) g_pool = new ThreadPool(default_threads());
  return *g_pool;
}

std::atomic<const HostThreads*> g_host{nullptr};

}  // namespace

void use_host_threads(const HostThreads* host) { g_host.store(host, std::memory_order_release); }

int num_threads() {
  if (const HostThreads* host = g_host.load(std::memory_order_acquire)) return std::max(1, host->threads());
  return pool().threads();
}

void set_num_threads(int n) {
  if (n < 1) fail<ValueError>("set_num_threads", "n", "n >= 1", std::to_string(n));
  ThreadPool& p = pool();
  if (p.threads() != n) p.resize(n);
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n = end - begin;
  if (t_inside_region || n <= grain) {
    fn(begin, end);
    return;
  }
  const HostThreads* host = g_host.load(std::memory_order_acquire);
  const int threads = host != nullptr ? std::max(1, host->threads()) : pool().threads();
  const int chunks = static_cast<int>(std::min<int64_t>(threads, (n + grain - 1) / grain));
  if (chunks <= 1) {
    fn(begin, end);
    return;
  }
  if (host == nullptr) return pool().run(begin, end, chunks, fn);
  host->run(chunks, [&](int chunk) {
    const Range r = chunk_range(begin, end, chunk, chunks);
    const bool outer = t_inside_region;
    t_inside_region = true;
    try {
      fn(r.begin, r.end);
    } catch (...) {
      t_inside_region = outer;
      throw;
    }
    t_inside_region = outer;
  });
}

}  // namespace fourfold
