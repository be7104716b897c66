// Tensor views over reference-counted storage: dtype, device, shape, strides in elements (0 broadcasts), offset.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fourfold/allocator.h"
#include "fourfold/device.h"
#include "fourfold/dtype.h"

namespace fourfold {

using Shape = std::vector<int64_t>;
inline constexpr int kMaxRank = 8;

// A block of bytes and who frees it: an allocator, or an external owner (a memory-mapped file, say).
class Storage {
 public:
  Storage(size_t nbytes, Allocator& allocator);
  Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool from_allocator() const { return allocator_ != nullptr; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::shared_ptr<void> owner_;
};

class Tensor {
 public:
  Tensor() = default;   // undefined tensor: defined() == false

  // ---- creation ----
  static Tensor empty(const Shape& shape, DType dtype, Device device = kCpu);
  static Tensor zeros(const Shape& shape, DType dtype, Device device = kCpu);
  static Tensor full(const Shape& shape, double value, DType dtype, Device device = kCpu);
  // Wraps bytes someone else owns (mapped weights): no copy, `owner` keeps them alive.
  static Tensor from_blob(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner,
                          Device device = kCpu);
  // The same over a strided view (element strides >= 0, as PyTorch's): the storage spans the elements the
  // strides reach from `data`, element [0, ..., 0]. ShapeError when strides and shape differ in length.
  static Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype,
                          std::shared_ptr<void> owner, Device device = kCpu);
  // Values are converted to `dtype` with store_from_double (complex: store_from_complex).
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype);
  static Tensor from_complex_vector(const std::vector<std::complex<double>>& values, const Shape& shape);
  template <class T>
  static Tensor from_values(const std::vector<T>& values, const Shape& shape, DType dtype) {
    return from_vector(std::vector<double>(values.begin(), values.end()), shape, dtype);
  }

  // ---- metadata ----
  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const;
  int dim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int dim) const;     // negative dims count from the end
  int64_t stride(int dim) const;
  int64_t offset() const { return offset_; }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  std::string describe() const;    // "bfloat16[4, 8] strides [8, 1]"

  // ---- element access (raw) ----
  void* data() const;              // address of element [0, ..., 0]
  template <class T>
  T* data_as() const { return static_cast<T*>(data()); }
  void* element_ptr(std::span<const int64_t> index) const;

  // ---- views (share storage) ----
  Tensor view(const Shape& shape) const;        // requires a compatible layout; ShapeError otherwise. One -1 allowed.
  Tensor reshape(const Shape& shape) const;     // a view when possible, else a contiguous copy
  Tensor permute(const std::vector<int>& dims) const;
  Tensor transpose(int dim0, int dim1) const;
  Tensor narrow(int dim, int64_t start, int64_t length) const;
  Tensor slice(int dim, int64_t start, int64_t end, int64_t step = 1) const;   // PyTorch clamping of start/end
  Tensor select(int dim, int64_t index) const;
  Tensor expand(const Shape& shape) const;      // broadcasting: new size-1 or leading dims get stride 0
  Tensor unsqueeze(int dim) const;
  Tensor squeeze(int dim) const;
  // The same bytes read as another dtype of the same size (PyTorch's tensor.view(dtype)): raw uint8 codes as
  // float4_e2m1fn_x2 or float8_e8m0fnu. DTypeError when the sizes differ.
  Tensor view_dtype(DType dtype) const;

  // ---- copies ----
  Tensor contiguous() const;                    // itself when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;                 // itself when already of that dtype
  void copy_from(const Tensor& src);            // any layouts and dtypes; src broadcasts to this shape
  void fill(double value);
  void fill_uniform(uint64_t seed, double low = 0.0, double high = 1.0);
  void fill_normal(uint64_t seed, double mean = 0.0, double stddev = 1.0);

  // ---- conversions for tests and tools ----
  std::vector<double> to_vector() const;        // logical (row-major) order; complex: real parts
  std::vector<std::complex<double>> to_complex_vector() const;
  double item() const;                          // one-element tensors

 private:
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides, int64_t offset);
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::f32;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
};

// ---- shape helpers shared by ops and backends ----
Shape contiguous_strides(const Shape& shape);
int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);          // "[2, 3]"
int normalize_dim(int dim, int rank, const char* where);  // ShapeError naming `where` when out of range
// PyTorch broadcasting of two shapes; ShapeError naming `where` when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* where);

// Calls fn(index) for every index of `shape` in row-major order (index has shape.size() entries).
void for_each_index(const Shape& shape, const std::function<void(const int64_t*)>& fn);

}  // namespace fourfold
