#include "ops/checks.h"

#include <algorithm>

#include <fmt/format.h>

namespace fourfold::check {

std::string dtype_list(std::initializer_list<DType> dtypes) {
  std::string s;
  for (DType d : dtypes) s += fmt::format("{}{}", s.empty() ? "" : ", ", dtype_name(d));
  return s;
}

void defined(const char* op, const char* arg, const Tensor& t) {
  if (!t.defined()) fail<ValueError>(op, arg, "a defined tensor", "an undefined tensor");
}

void on_cpu(const char* op, const char* arg, const Tensor& t) {
  if (t.device().type != DeviceType::cpu) fail<DeviceError>(op, arg, "a cpu tensor", device_name(t.device()));
}

void dtype_in(const char* op, const char* arg, const Tensor& t, std::initializer_list<DType> dtypes) {
  defined(op, arg, t);
  on_cpu(op, arg, t);
  if (std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end())
    fail<DTypeError>(op, arg, "dtype " + dtype_list(dtypes), std::string(dtype_name(t.dtype())));
}

void rank(const char* op, const char* arg, const Tensor& t, int expected_rank, const char* layout) {
  if (t.dim() != expected_rank)
    fail<ShapeError>(op, arg,
                     layout ? fmt::format("a {}-D tensor {}", expected_rank, layout) : fmt::format("a {}-D tensor", expected_rank),
                     fmt::format("shape {}", shape_string(t.shape())));
}

void rank_at_least(const char* op, const char* arg, const Tensor& t, int min_rank) {
  if (t.dim() < min_rank)
    fail<ShapeError>(op, arg, fmt::format("at least {} dims", min_rank), fmt::format("shape {}", shape_string(t.shape())));
}

void same_dtype(const char* op, const char* arg, const Tensor& t, const char* other_arg, const Tensor& other) {
  if (t.dtype() != other.dtype())
    fail<DTypeError>(op, arg, fmt::format("the dtype of '{}' ({})", other_arg, dtype_name(other.dtype())),
                     std::string(dtype_name(t.dtype())));
}

void size_is(const char* op, const char* arg, const Tensor& t, int dim, int64_t expected, const char* meaning) {
  if (t.size(dim) != expected)
    fail<ShapeError>(op, arg, fmt::format("size {} at dim {} ({})", expected, dim, meaning),
                     fmt::format("shape {}", shape_string(t.shape())));
}

void shape_is(const char* op, const char* arg, const Tensor& t, const Shape& expected, const char* layout) {
  if (t.shape() != expected)
    fail<ShapeError>(op, arg, fmt::format("shape {} {}", shape_string(expected), layout),
                     fmt::format("shape {}", shape_string(t.shape())));
}

namespace {

// The bytes [first, last) a view can touch within its storage.
std::pair<int64_t, int64_t> byte_span(const Tensor& t) {
  int64_t lo = t.offset(), hi = t.offset();
  for (int d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return {0, 0};
    const int64_t reach = (t.size(d) - 1) * t.stride(d);
    (reach < 0 ? lo : hi) += reach;
  }
  const auto es = static_cast<int64_t>(dtype_size(t.dtype()));
  return {lo * es, (hi + 1) * es};
}

}  // namespace

void disjoint(const char* op, const char* arg, const Tensor& t, const char* other_arg, const Tensor& other) {
  if (!t.defined() || !other.defined() || t.storage() != other.storage()) return;
  const auto [a0, a1] = byte_span(t);
  const auto [b0, b1] = byte_span(other);
  if (a0 < b1 && b0 < a1)
    fail<ValueError>(op, arg, fmt::format("memory of its own (it is written in place), apart from '{}'", other_arg),
                     "a view that overlaps it");
}

}  // namespace fourfold::check
