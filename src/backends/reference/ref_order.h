// The element order topk and argmax share: exact for integers, and NaN above every number as in PyTorch.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fourfold/tensor.h"

namespace fourfold::ref {

struct OrderKey {
  bool integral = false;
  int64_t integer = 0;   // int32 / int64 elements, exact (doubles would merge neighbours past 2^53)
  double real = 0.0;     // floating elements
};

inline OrderKey order_key(const Tensor& t, const int64_t* index) {
  const void* p = t.element_ptr({index, static_cast<size_t>(t.dim())});
  OrderKey key;
  if (t.dtype() == DType::i64 || t.dtype() == DType::i32) {
    key.integral = true;
    if (t.dtype() == DType::i64) {
      std::memcpy(&key.integer, p, 8);
    } else {
      int32_t v;
      std::memcpy(&v, p, 4);
      key.integer = v;
    }
  } else {
    key.real = load_as_double(t.dtype(), p);
  }
  return key;
}

// Strictly above: equal values (NaN and NaN, -0 and +0 included) are ties, left to the caller's index order.
inline bool ranks_above(const OrderKey& a, const OrderKey& b) {
  if (a.integral) return a.integer > b.integer;
  if (std::isnan(a.real)) return !std::isnan(b.real);
  if (std::isnan(b.real)) return false;
  return a.real > b.real;
}

}  // namespace fourfold::ref
