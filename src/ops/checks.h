// Argument checks shared by the ops layer. Each failure names the op, the argument, what was expected and found.
#pragma once

#include <initializer_list>
#include <string>

#include "fourfold/errors.h"
#include "fourfold/tensor.h"

namespace fourfold::check {

std::string dtype_list(std::initializer_list<DType> dtypes);

void defined(const char* op, const char* arg, const Tensor& t);
void on_cpu(const char* op, const char* arg, const Tensor& t);
// defined + on_cpu + dtype in the list.
void dtype_in(const char* op, const char* arg, const Tensor& t, std::initializer_list<DType> dtypes);
void rank(const char* op, const char* arg, const Tensor& t, int expected_rank, const char* layout = nullptr);
void rank_at_least(const char* op, const char* arg, const Tensor& t, int min_rank);
void same_dtype(const char* op, const char* arg, const Tensor& t, const char* other_arg, const Tensor& other);
void size_is(const char* op, const char* arg, const Tensor& t, int dim, int64_t expected, const char* meaning);
// t's shape is `expected` exactly (`layout` names the dims in the message, e.g. "[B, Hv, Dk, Dv]").
void shape_is(const char* op, const char* arg, const Tensor& t, const Shape& expected, const char* layout);
// An argument an op writes in place shares no byte with another argument (same storage, overlapping spans).
void disjoint(const char* op, const char* arg, const Tensor& t, const char* other_arg, const Tensor& other);

// The real floating types every float op accepts (f64 for the oracle).
inline constexpr std::initializer_list<DType> kFloatTypes = {DType::f32, DType::f16, DType::bf16, DType::f64};

}  // namespace fourfold::check
