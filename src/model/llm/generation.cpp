#include "model/llm/generation.h"

#include <sys/resource.h>

#include <utility>

#include "fourfold/errors.h"

namespace fourfold::model {
namespace {

std::pair<int64_t, int64_t> page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {u.ru_minflt, u.ru_majflt};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<int64_t> synthetic_prompt(int64_t n, int64_t vocab, uint64_t seed) {
  std::vector<int64_t> out(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (int64_t& t : out) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    x += 0x9e3779b97f4a7c15ull;
    t = static_cast<int64_t>(x % static_cast<uint64_t>(vocab));
  }
  return out;
}

GenerationWithLogits generate(Decoder& decoder, const std::vector<int64_t>& prompt, int64_t count, Sampler& sampler,
                              const GenerateOptions& options, const std::function<void(int64_t, int64_t)>& progress) {
  if (prompt.empty()) fail<ValueError>("generate", "prompt", "at least one token", "none");
  if (count < 1) fail<ValueError>("generate", "gen", ">= 1", std::to_string(count));
  decoder.reset();
  GenerationWithLogits g;
  std::vector<Tensor> rows;
  double handed_over = 0.0;   // seconds spent in on_token, taken out of the decode time
  const auto sampled = [&](const Tensor& logits) {
    const Tensor last = logits.narrow(0, logits.size(0) - 1, 1);
    if (options.keep_logits) rows.push_back(logits.contiguous());
    {
      const ProfileScope scope("sampler");
      g.tokens.push_back(sampler.sample(last));
    }
    const auto start = std::chrono::steady_clock::now();
    if (options.on_token) options.on_token(g.tokens.back());
    handed_over += seconds_since(start);
    for (int64_t stop : options.stop_tokens) g.stopped = g.stopped || g.tokens.back() == stop;
  };
  auto start = std::chrono::steady_clock::now();
  sampled(decoder.forward(prompt, options.keep_logits));
  g.prefill_seconds = seconds_since(start) - handed_over;
  if (progress) progress(1, count);
  handed_over = 0.0;
  const auto faults_before = page_faults();
  if (options.profile) start_op_profile();
  int64_t i = 1;
  for (; i < count && !g.stopped; ++i) {
    if (options.before_step) options.before_step();
    const int64_t last = g.tokens.back();
    handed_over = 0.0;
    start = std::chrono::steady_clock::now();
    sampled(decoder.forward(std::span<const int64_t>(&last, 1)));
    g.step_seconds.push_back(seconds_since(start) - handed_over);
    g.decode_seconds += g.step_seconds.back();
    if (progress) progress(i + 1, count);
  }
  if (options.profile) {
    stop_op_profile();
    g.profile = op_profile_rows();
  }
  const auto faults_after = page_faults();
  g.decode_minor_faults = faults_after.first - faults_before.first;
  g.decode_major_faults = faults_after.second - faults_before.second;
  g.decoded_tokens = i - 1;
  g.context = decoder.position();
  if (options.keep_logits) {
    const int64_t last = g.tokens.back();
    if (decoder.position() < decoder.cache().max_context())
      rows.push_back(decoder.forward(std::span<const int64_t>(&last, 1)).contiguous());
    int64_t total = 0;
    for (const Tensor& r : rows) total += r.size(0);
    g.logits = Tensor::empty({total, rows[0].size(1)}, DType::f32);
    int64_t at = 0;
    for (const Tensor& r : rows) {
      g.logits.narrow(0, at, r.size(0)).copy_from(r);
      at += r.size(0);
    }
  }
  return g;
}

Generation generate(Decoder& decoder, const std::vector<int64_t>& prompt, int64_t count, Sampler& sampler,
                    const std::function<void(int64_t, int64_t)>& progress) {
  return generate(decoder, prompt, count, sampler, GenerateOptions{}, progress);
}

Tensor teacher_forced_logits(Decoder& decoder, const std::vector<int64_t>& prompt,
                             const std::vector<int64_t>& continuation) {
  decoder.reset();
  const int64_t p = static_cast<int64_t>(prompt.size()), n = static_cast<int64_t>(continuation.size());
  const Tensor first = decoder.forward(prompt, /*all_logits=*/true);
  Tensor out = Tensor::empty({p + n, first.size(1)}, DType::f32);
  out.narrow(0, 0, p).copy_from(first);
  for (int64_t i = 0; i < n; ++i)
    out.narrow(0, p + i, 1).copy_from(decoder.forward(std::span<const int64_t>(&continuation[i], 1)));
  return out;
}

}  // namespace fourfold::model
