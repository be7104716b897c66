// Element access for the reference tier: by index, through any strides, as double or complex<double>.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "fourfold/tensor.h"

namespace fourfold::ref {

using Index = std::vector<int64_t>;

inline double get(const Tensor& t, const int64_t* index) {
  return load_as_double(t.dtype(), t.element_ptr({index, static_cast<size_t>(t.dim())}));
}
inline double get(const Tensor& t, const Index& index) { return get(t, index.data()); }
inline void put(const Tensor& t, const int64_t* index, double v) {
  store_from_double(t.dtype(), t.element_ptr({index, static_cast<size_t>(t.dim())}), v);
}
inline void put(const Tensor& t, const Index& index, double v) { put(t, index.data(), v); }

inline std::complex<double> get_complex(const Tensor& t, const Index& index) {
  return load_as_complex(t.dtype(), t.element_ptr({index.data(), index.size()}));
}
inline void put_complex(const Tensor& t, const Index& index, std::complex<double> v) {
  store_from_complex(t.dtype(), t.element_ptr({index.data(), index.size()}), v);
}

// Shorthands for 1-, 2- and 3-D tensors.
inline double at(const Tensor& t, int64_t i) { return get(t, &i); }
inline double at(const Tensor& t, int64_t i, int64_t j) { const int64_t idx[2] = {i, j}; return get(t, idx); }
inline double at(const Tensor& t, int64_t i, int64_t j, int64_t k) { const int64_t idx[3] = {i, j, k}; return get(t, idx); }

}  // namespace fourfold::ref
