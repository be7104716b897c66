// The torch.ops.fourfold namespace. Each *_ops.cpp file defines its ops' schemas (a fragment of this library)
// and their CPU kernels; their fake (meta) kernels, for torch.compile, are in fourfold_torch/fake_ops.py.
#include <torch/library.h>

#include "fourfold/parallel.h"
#include "tensor_bridge.h"

namespace {

// The threads the next op runs on: PyTorch's intra-op threads, torch.get_num_threads().
int64_t num_threads() {
  fourfold_torch::use_torch_threads();
  return fourfold::num_threads();
}

}  // namespace

TORCH_LIBRARY(fourfold, m) { m.def("num_threads() -> int", &num_threads); }
