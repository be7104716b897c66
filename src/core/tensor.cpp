// Tensor views: creation, metadata, view arithmetic. Copies and fills live in tensor_copy.cpp.
#include "fourfold/tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fourfold/errors.h"

namespace fourfold {

Storage::Storage(size_t nbytes, Allocator& allocator)
    : data_(allocator.allocate(nbytes)), nbytes_(nbytes), device_(allocator.device()), allocator_(&allocator) {}

Storage::Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
    : data_(data), nbytes_(nbytes), device_(device), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (allocator_ != nullptr) allocator_->deallocate(data_, nbytes_);
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    // Saturates: only a shape with a zero size (never addressed) or one whose element count overflows (refused
    // by shape_numel's callers) gets here, and neither may trip the sanitizer on a product nobody uses.
    if (__builtin_mul_overflow(s, std::max<int64_t>(shape[i], 1), &s)) s = INT64_MAX;
  }
  return strides;
}

int64_t shape_numel(const Shape& shape) {
  // A zero anywhere is an empty tensor, whatever the other sizes multiply to (no product before it may overflow).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int normalize_dim(int dim, int rank, const char* where) {
  const int r = std::max(rank, 1);   // a 0-D tensor accepts dim 0 and -1, as PyTorch
  if (dim < -r || dim >= r)
    fail<ShapeError>(where, "dim", fmt::format("a dim in [{}, {}]", -r, r - 1), std::to_string(dim));
  return dim < 0 ? dim + r : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* where) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail<ShapeError>(where, "shapes", "shapes that broadcast",
                       fmt::format("{} and {}", shape_string(a), shape_string(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void for_each_index(const Shape& shape, const std::function<void(const int64_t*)>& fn) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(index.data());
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

namespace {

void check_shape(const Shape& shape, const char* where) {
  if (shape.size() > static_cast<size_t>(kMaxRank))
    fail<ShapeError>(where, "shape", fmt::format("rank <= {}", kMaxRank), shape_string(shape));
  for (int64_t s : shape)
    if (s < 0) fail<ShapeError>(where, "shape", "non-negative sizes", shape_string(shape));
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset) {}

namespace {

// The bytes of a contiguous tensor of `shape`: a product of sizes or a byte count past 64 bits is a ShapeError
// naming the shape, never a wrapped size that allocates a small block for a huge tensor.
size_t checked_nbytes(const Shape& shape, DType dtype, const char* where) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      fail<ShapeError>(where, "shape", "sizes whose product fits in 64 bits", shape_string(shape));
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes))
    fail<ShapeError>(where, "shape", fmt::format("at most 2^63 - 1 bytes of {}", dtype_name(dtype)),
                     fmt::format("{} elements of {} bytes", shape_string(shape), dtype_size(dtype)));
  return static_cast<size_t>(bytes);
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  check_shape(shape, "Tensor::empty");
  const size_t nbytes = checked_nbytes(shape, dtype, "Tensor::empty");
  auto storage = std::make_shared<Storage>(nbytes, allocator_for(device));
  return Tensor(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  if (t.nbytes() > 0) std::memset(t.data(), 0, t.nbytes());   // all-zero bits are 0 in every dtype
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  t.fill(value);
  return t;
}

Tensor Tensor::from_blob(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner, Device device) {
  check_shape(shape, "Tensor::from_blob");
  const size_t nbytes = checked_nbytes(shape, dtype, "Tensor::from_blob");
  auto storage = std::make_shared<Storage>(data, nbytes, device, std::move(owner));
  return Tensor(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype, std::shared_ptr<void> owner,
                         Device device) {
  const char* where = "Tensor::from_blob";
  check_shape(shape, where);
  if (strides.size() != shape.size())
    fail<ShapeError>(where, "strides", fmt::format("{} strides (one per dim of {})", shape.size(), shape_string(shape)),
                     shape_string(strides));
  // The elements reached: 1 + sum of (size - 1) * stride, or none when a size is 0.
  int64_t span = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0) fail<ShapeError>(where, "strides", "non-negative strides", shape_string(strides));
    if (shape[d] == 0) span = 0;
  }
  if (span != 0)
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t reach = 0;
      if (__builtin_mul_overflow(shape[d] - 1, strides[d], &reach) || __builtin_add_overflow(span, reach, &span))
        fail<ShapeError>(where, "strides", "a span whose size fits in 64 bits", shape_string(strides));
    }
  const size_t nbytes = checked_nbytes({span}, dtype, where);
  auto storage = std::make_shared<Storage>(data, nbytes, device, std::move(owner));
  return Tensor(std::move(storage), dtype, shape, strides, 0);
}

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (static_cast<int64_t>(values.size()) != t.numel())
    fail<ShapeError>("Tensor::from_vector", "values", fmt::format("{} values for shape {}", t.numel(), shape_string(shape)),
                     fmt::format("{} values", values.size()));
  auto* p = static_cast<uint8_t*>(t.data());
  const size_t es = dtype_size(dtype);
  for (size_t i = 0; i < values.size(); ++i) store_from_double(dtype, p + i * es, values[i]);
  return t;
}

Tensor Tensor::from_complex_vector(const std::vector<std::complex<double>>& values, const Shape& shape) {
  Tensor t = empty(shape, DType::complex64);
  if (static_cast<int64_t>(values.size()) != t.numel())
    fail<ShapeError>("Tensor::from_complex_vector", "values", fmt::format("{} values", t.numel()),
                     fmt::format("{} values", values.size()));
  auto* p = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < values.size(); ++i) store_from_complex(DType::complex64, p + i * 8, values[i]);
  return t;
}

Device Tensor::device() const { return storage_ ? storage_->device() : kCpu; }

int64_t Tensor::size(int dim) const { return shape_[normalize_dim(dim, this->dim(), "Tensor::size")]; }
int64_t Tensor::stride(int dim) const { return strides_[normalize_dim(dim, this->dim(), "Tensor::stride")]; }
int64_t Tensor::numel() const { return shape_numel(shape_); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return fmt::format("{}{} strides {}", dtype_name(dtype_), shape_string(shape_), shape_string(strides_));
}

void* Tensor::data() const {
  if (!storage_) fail<ValueError>("Tensor::data", "tensor", "a defined tensor", "an undefined one");
  return static_cast<uint8_t*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void* Tensor::element_ptr(std::span<const int64_t> index) const {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides_[d];
  return static_cast<uint8_t*>(data()) + off * static_cast<int64_t>(dtype_size(dtype_));
}

namespace {

// Resolves one -1 and checks the element count.
Shape infer_shape(const Shape& requested, int64_t numel, const char* where) {
  Shape shape = requested;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail<ShapeError>(where, "shape", "at most one -1", shape_string(requested));
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      fail<ShapeError>(where, "shape", "sizes >= 0 or one -1", shape_string(requested));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      fail<ShapeError>(where, "shape", fmt::format("a shape with {} elements", numel), shape_string(requested));
    shape[infer] = numel / known;
  }
  if (shape_numel(shape) != numel)
    fail<ShapeError>(where, "shape", fmt::format("a shape with {} elements", numel), shape_string(requested));
  return shape;
}

// Strides for `shape` over the same elements as (old_shape, old_strides), or nothing when no view exists.
// Works on chunks of old dims that are contiguous with each other (the rule PyTorch's view follows).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape) {
  Shape strides(shape.size(), 0);
  if (shape_numel(old_shape) <= 1) return contiguous_strides(shape);   // 0 or 1 element: any layout
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

}  // namespace

Tensor Tensor::view(const Shape& requested) const {
  const Shape shape = infer_shape(requested, numel(), "Tensor::view");
  check_shape(shape, "Tensor::view");
  auto strides = view_strides(shape_, strides_, shape);
  if (!strides)
    fail<ShapeError>("Tensor::view", "shape", fmt::format("a shape compatible with the layout of {}", describe()),
                     shape_string(requested) + " (use reshape, which copies)");
  return Tensor(storage_, dtype_, shape, *strides, offset_);
}

Tensor Tensor::reshape(const Shape& requested) const {
  const Shape shape = infer_shape(requested, numel(), "Tensor::reshape");
  if (auto strides = view_strides(shape_, strides_, shape)) return Tensor(storage_, dtype_, shape, *strides, offset_);
  return contiguous().view(shape);
}

Tensor Tensor::permute(const std::vector<int>& dims) const {
  if (static_cast<int>(dims.size()) != dim())
    fail<ShapeError>("Tensor::permute", "dims", fmt::format("{} dims", dim()), fmt::format("{}", dims.size()));
  Shape shape(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int d = normalize_dim(dims[i], dim(), "Tensor::permute");
    if (seen[d]) fail<ShapeError>("Tensor::permute", "dims", "a permutation", fmt::format("[{}]", fmt::join(dims, ", ")));
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return Tensor(storage_, dtype_, shape, strides, offset_);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  std::vector<int> dims(dim());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[normalize_dim(dim0, dim(), "Tensor::transpose")], dims[normalize_dim(dim1, dim(), "Tensor::transpose")]);
  return permute(dims);
}

Tensor Tensor::narrow(int d, int64_t start, int64_t length) const {
  d = normalize_dim(d, dim(), "Tensor::narrow");
  if (start < 0) start += shape_[d];
  if (start < 0 || length < 0 || start + length > shape_[d])
    fail<ShapeError>("Tensor::narrow", "start/length", fmt::format("a range inside [0, {})", shape_[d]),
                     fmt::format("start {} length {}", start, length));
  Shape shape = shape_;
  shape[d] = length;
  return Tensor(storage_, dtype_, shape, strides_, offset_ + start * strides_[d]);
}

Tensor Tensor::slice(int d, int64_t start, int64_t end, int64_t step) const {
  d = normalize_dim(d, dim(), "Tensor::slice");
  if (step <= 0) fail<ValueError>("Tensor::slice", "step", "a positive step", std::to_string(step));
  const int64_t n = shape_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape shape = shape_, strides = strides_;
  shape[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return Tensor(storage_, dtype_, shape, strides, offset_ + start * strides_[d]);
}

Tensor Tensor::select(int d, int64_t index) const {
  d = normalize_dim(d, dim(), "Tensor::select");
  if (index < 0) index += shape_[d];
  if (index < 0 || index >= shape_[d])
    fail<ShapeError>("Tensor::select", "index", fmt::format("an index in [0, {})", shape_[d]), std::to_string(index));
  Shape shape = shape_, strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, dtype_, shape, strides, offset_ + index * strides_[d]);
}

Tensor Tensor::expand(const Shape& target) const {
  check_shape(target, "Tensor::expand");
  if (target.size() < shape_.size())
    fail<ShapeError>("Tensor::expand", "shape", fmt::format("rank >= {}", dim()), shape_string(target));
  const size_t lead = target.size() - shape_.size();
  Shape shape(target.size()), strides(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      shape[i] = target[i];
      strides[i] = 0;
      continue;
    }
    const int64_t have = shape_[i - lead];
    const int64_t want = target[i] == -1 ? have : target[i];
    if (have == want) {
      shape[i] = have;
      strides[i] = strides_[i - lead];
    } else if (have == 1) {
      shape[i] = want;
      strides[i] = 0;
    } else {
      fail<ShapeError>("Tensor::expand", "shape", fmt::format("a shape {} broadcasts to", shape_string(shape_)),
                       shape_string(target));
    }
  }
  return Tensor(storage_, dtype_, shape, strides, offset_);
}

Tensor Tensor::unsqueeze(int d) const {
  d = normalize_dim(d, dim() + 1, "Tensor::unsqueeze");
  Shape shape = shape_, strides = strides_;
  const int64_t stride = d < dim() ? strides_[d] * shape_[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return Tensor(storage_, dtype_, shape, strides, offset_);
}

Tensor Tensor::squeeze(int d) const {
  d = normalize_dim(d, dim(), "Tensor::squeeze");
  if (shape_[d] != 1) return *this;
  Shape shape = shape_, strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, dtype_, shape, strides, offset_);
}

Tensor Tensor::view_dtype(DType dtype) const {
  if (dtype_size(dtype) != dtype_size(dtype_))
    fail<DTypeError>("Tensor::view_dtype", "dtype", fmt::format("a dtype of {} bytes like {}", dtype_size(dtype_), dtype_name(dtype_)),
                     std::string(dtype_name(dtype)));
  return Tensor(storage_, dtype, shape_, strides_, offset_);
}

}  // namespace fourfold
