// to_huge_pages: a weight's bytes copied once into anonymous memory on 2 MiB pages (MADV_HUGEPAGE), what
// `fourfold run --weights copy` does at load. Decode reads every weight once per token; on 4 KiB pages (a
// safetensors file mapped by transformers, or the allocator's small pages) the TLB misses cost it 15-30% here.
// The copy lives outside PyTorch's allocator, which the driver's memory record shows on its own line.
#include <sys/mman.h>
#include <torch/library.h>

#include <cstring>

#include "fourfold/parallel.h"
#include "tensor_bridge.h"

namespace fourfold_torch {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;

at::Tensor to_huge_pages(const at::Tensor& t) {
  const char* op = "to_huge_pages";
  if (!t.device().is_cpu()) refuse(op, "t", "a CPU tensor", t.device().str());
  if (!t.is_contiguous()) refuse(op, "t", "a contiguous tensor", c10::str("strides ", t.strides()));
  const size_t bytes = t.nbytes();
  if (bytes == 0) return t;
  const size_t region = (bytes + 2 * kHugePage - 1) / kHugePage * kHugePage;
  void* base = mmap(nullptr, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  TORCH_CHECK(base != MAP_FAILED, "fourfold.to_huge_pages: argument 't': expected memory for a copy of ", bytes,
              " bytes, found mmap failing: ", std::strerror(errno));
  auto* data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + kHugePage - 1) / kHugePage * kHugePage);
  madvise(data, bytes, MADV_HUGEPAGE);   // a hint: without THP the copy still works, on 4 KiB pages
  const auto* src = static_cast<const uint8_t*>(t.data_ptr());
  use_torch_threads();
  const int64_t chunks = static_cast<int64_t>((bytes + kHugePage - 1) / kHugePage);
  fourfold::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    const size_t begin = static_cast<size_t>(c0) * kHugePage, end = std::min(bytes, static_cast<size_t>(c1) * kHugePage);
    std::memcpy(data + begin, src + begin, end - begin);
  });
  return at::from_blob(data, t.sizes(), t.strides(), [base, region](void*) { munmap(base, region); }, t.options());
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fourfold, m) { m.def("to_huge_pages(Tensor t) -> Tensor"); }

TORCH_LIBRARY_IMPL(fourfold, CPU, m) { m.impl("to_huge_pages", &to_huge_pages); }

}  // namespace fourfold_torch
