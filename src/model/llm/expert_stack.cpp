#include "model/llm/expert_stack.h"

#include "model/formats/safetensors.h"

namespace fourfold::model {
namespace {

// The distance in bytes between consecutive parts when all are equally spaced in one storage, else -1.
int64_t equal_spacing(const std::vector<Tensor>& parts) {
  const Tensor& first = parts[0];
  if (!first.is_contiguous()) return -1;
  if (parts.size() == 1) return static_cast<int64_t>(first.nbytes());
  const auto base = reinterpret_cast<intptr_t>(first.data());
  const int64_t step = reinterpret_cast<intptr_t>(parts[1].data()) - base;
  if (step < static_cast<int64_t>(first.nbytes()) || step % static_cast<int64_t>(dtype_size(first.dtype())) != 0)
    return -1;
  for (size_t e = 0; e < parts.size(); ++e) {
    const Tensor& t = parts[e];
    if (t.storage() != first.storage() || !t.is_contiguous() || t.dtype() != first.dtype() || t.shape() != first.shape())
      return -1;
    if (reinterpret_cast<intptr_t>(t.data()) - base != static_cast<int64_t>(e) * step) return -1;
  }
  return step;
}

}  // namespace

Tensor stack_experts(const std::vector<Tensor>& parts, uint64_t& copied_bytes) {
  const Tensor& first = parts[0];
  const int64_t experts = static_cast<int64_t>(parts.size());
  Shape stacked = first.shape();
  stacked.insert(stacked.begin(), experts);
  // Tensors mapped from a file are separate storages over one mapping: back to back is enough (safetensors.h).
  if (std::optional<Tensor> view = stacked_view(parts)) return *view;
  const int64_t step = equal_spacing(parts);
  if (step > 0) {
    // [E, step elements] over the storage, the first numel of each row kept, then split into [out, in].
    const int64_t row = step / static_cast<int64_t>(dtype_size(first.dtype()));
    const Tensor rows = Tensor::from_blob(first.data(), {experts, row}, first.dtype(), first.storage());
    return rows.narrow(1, 0, first.numel()).view(stacked);
  }
  Tensor out = Tensor::empty(stacked, first.dtype());
  for (int64_t e = 0; e < experts; ++e) out.select(0, e).copy_from(parts[e]);
  copied_bytes += out.nbytes();
  return out;
}

}  // namespace fourfold::model
