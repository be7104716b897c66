// Reference matmul (also serves bmm): every batch index of out, real in float64, complex64 in complex<double>.
#include <complex>

#include "backends/reference/ref_access.h"
#include "backends/reference/reference.h"

namespace fourfold::ref {
namespace {

// out[*, m, n] = sum_k a[*, m, k] * b[*, k, n]; T is double or std::complex<double>. The batch dims of a and
// b equal out's (the ops layer expanded them), so one index serves all three once its last two entries are set.
template <class T, class Load, class Store>
void batched_product(const MatmulArgs& args, Load load, Store store) {
  const int rank = args.out.dim();
  const int64_t k_size = args.a.size(-1);
  for_each_index(args.out.shape(), [&](const int64_t* idx) {
    Index ai(idx, idx + rank), bi(idx, idx + rank);
    T acc{};
    for (int64_t k = 0; k < k_size; ++k) {
      ai[rank - 1] = k;
      bi[rank - 2] = k;
      acc += load(args.a, ai) * load(args.b, bi);
    }
    store(args.out, Index(idx, idx + rank), acc);
  });
}

}  // namespace

void matmul(const MatmulArgs& args) {
  if (is_complex(args.out.dtype()))
    batched_product<std::complex<double>>(
        args, [](const Tensor& t, const Index& i) { return get_complex(t, i); },
        [](const Tensor& t, const Index& i, std::complex<double> v) { put_complex(t, i, v); });
  else
    batched_product<double>(
        args, [](const Tensor& t, const Index& i) { return get(t, i); },
        [](const Tensor& t, const Index& i, double v) { put(t, i, v); });
}

}  // namespace fourfold::ref
