// Copies between any layouts and dtypes, fills, seeded random fills and conversion to std::vector.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/counter_rng.h"
#include "fourfold/errors.h"
#include "fourfold/parallel.h"
#include "fourfold/tensor.h"

namespace fourfold {
namespace {

// Walks every element of `shape` row by row: fn(outer_index, row_length) with the innermost dim as the row.
// The row is the unit the copy loops vectorise over; the outer odometer costs one step per row.
template <class Fn>
void for_each_row(const Shape& shape, Fn&& fn) {
  if (shape_numel(shape) == 0) return;
  if (shape.empty()) {
    fn(static_cast<const int64_t*>(nullptr), int64_t{1});
    return;
  }
  const size_t outer_rank = shape.size() - 1;
  std::vector<int64_t> index(outer_rank, 0);
  const int64_t rows = shape_numel(shape) / shape.back();
  for (int64_t r = 0; r < rows; ++r) {
    fn(index.data(), shape.back());
    for (size_t d = outer_rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

int64_t outer_offset(const Shape& strides, const int64_t* index, size_t outer_rank) {
  int64_t off = 0;
  for (size_t d = 0; d < outer_rank; ++d) off += index[d] * strides[d];
  return off;
}

}  // namespace

void Tensor::copy_from(const Tensor& src_in) {
  if (!defined() || !src_in.defined())
    fail<ValueError>("Tensor::copy_from", "tensor", "defined tensors", "an undefined one");
  const Tensor src = src_in.shape() == shape_ ? src_in : src_in.expand(shape_);
  if (numel() == 0) return;
  const DType sd = src.dtype(), dd = dtype_;
  const size_t ss = dtype_size(sd), ds = dtype_size(dd);
  if (sd == dd && is_contiguous() && src.is_contiguous()) {
    std::memmove(data(), src.data(), nbytes());
    return;
  }
  const size_t outer_rank = shape_.empty() ? 0 : shape_.size() - 1;
  const int64_t s_inner = shape_.empty() ? 0 : src.strides().back();
  const int64_t d_inner = shape_.empty() ? 0 : strides_.back();
  auto* dst_base = static_cast<uint8_t*>(data());
  const auto* src_base = static_cast<const uint8_t*>(src.data());
  const bool complex = is_complex(sd) || is_complex(dd);
  for_each_row(shape_, [&](const int64_t* index, int64_t n) {
    uint8_t* d = dst_base + outer_offset(strides_, index, outer_rank) * static_cast<int64_t>(ds);
    const uint8_t* s = src_base + outer_offset(src.strides(), index, outer_rank) * static_cast<int64_t>(ss);
    if (sd == dd && s_inner == 1 && d_inner == 1) {
      std::memmove(d, s, static_cast<size_t>(n) * ds);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* se = s + i * s_inner * static_cast<int64_t>(ss);
      uint8_t* de = d + i * d_inner * static_cast<int64_t>(ds);
      if (sd == dd) std::memcpy(de, se, ds);
      else if (complex) store_from_complex(dd, de, load_as_complex(sd, se));
      else store_from_double(dd, de, load_as_double(sd, se));
    }
  });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_, device());
  out.copy_from(*this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out = empty(shape_, dtype, device());
  out.copy_from(*this);
  return out;
}

void Tensor::fill(double value) {
  if (numel() == 0) return;
  // Encode once, then replicate the bytes: every element gets the same bit pattern.
  uint8_t pattern[16];
  store_from_double(dtype_, pattern, value);
  const size_t es = dtype_size(dtype_);
  const size_t outer_rank = shape_.empty() ? 0 : shape_.size() - 1;
  const int64_t inner = shape_.empty() ? 0 : strides_.back();
  auto* base = static_cast<uint8_t*>(data());
  for_each_row(shape_, [&](const int64_t* index, int64_t n) {
    uint8_t* d = base + outer_offset(strides_, index, outer_rank) * static_cast<int64_t>(es);
    for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * inner * static_cast<int64_t>(es), pattern, es);
  });
}

namespace {

// Element i of the logical (row-major) order always gets the same value for a seed: the value is a function
// of (seed, i) alone, so any split across threads writes the same bytes.
template <class ValueAt>
void fill_by_index(Tensor& t, ValueAt&& value_at) {
  const Shape& shape = t.shape();
  const int64_t n = t.numel();
  if (n == 0) return;
  const size_t es = dtype_size(t.dtype());
  auto* base = static_cast<uint8_t*>(t.data());
  const Shape strides = t.strides();
  const DType dtype = t.dtype();
  parallel_for(0, n, 1 << 14, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(shape.size());
    int64_t rest = begin;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < shape.size(); ++d) off += index[d] * strides[d];
      store_from_double(dtype, base + off * static_cast<int64_t>(es), value_at(static_cast<uint64_t>(i)));
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
  });
}

}  // namespace

void Tensor::fill_uniform(uint64_t seed, double low, double high) {
  fill_by_index(*this, [&](uint64_t i) { return low + (high - low) * counter_uniform(seed, 2 * i); });
}

void Tensor::fill_normal(uint64_t seed, double mean, double stddev) {
  fill_by_index(*this, [&](uint64_t i) { return mean + stddev * counter_normal(seed, i); });
}

std::vector<double> Tensor::to_vector() const {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(numel()));
  for_each_index(shape_, [&](const int64_t* index) {
    out.push_back(load_as_double(dtype_, element_ptr({index, shape_.size()})));
  });
  return out;
}

std::vector<std::complex<double>> Tensor::to_complex_vector() const {
  std::vector<std::complex<double>> out;
  out.reserve(static_cast<size_t>(numel()));
  for_each_index(shape_, [&](const int64_t* index) {
    out.push_back(load_as_complex(dtype_, element_ptr({index, shape_.size()})));
  });
  return out;
}

double Tensor::item() const {
  if (numel() != 1) fail<ShapeError>("Tensor::item", "tensor", "exactly one element", describe());
  return to_vector()[0];
}

}  // namespace fourfold
