// The bytes an op call must move at least, for the op profile's GB/s: each input read once and each output
// written once. Decode's big readers are counted exactly (a linear's weight, the routed experts' weights, the
// KV rows attention reads). Every Args type has its overload: the template below is deleted, so an op whose Args
// have none does not compile (a default of 0 once reported the VAE's ops at 0.00 GB/s without a word).
#pragma once

#include "backends/op_args.h"

namespace fourfold {

template <class Args>
double op_bytes(const Args&) = delete;

inline double tensor_bytes(const Tensor* t) { return t == nullptr || !t->defined() ? 0.0 : static_cast<double>(t->nbytes()); }

inline double op_bytes(const LinearArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(&a.weight) + tensor_bytes(a.bias) + tensor_bytes(a.weight_scale) +
         tensor_bytes(&a.out);
}

inline double op_bytes(const LinearBackwardArgs& a) {
  return tensor_bytes(&a.grad_out) + tensor_bytes(&a.x) + tensor_bytes(&a.weight) + tensor_bytes(&a.grad_x) +
         tensor_bytes(&a.grad_weight) + tensor_bytes(a.grad_bias);
}
// Batch dims broadcast by expansion count once per batch entry: the rows each product reads.
inline double op_bytes(const MatmulArgs& a) { return tensor_bytes(&a.a) + tensor_bytes(&a.b) + tensor_bytes(&a.out); }
inline double op_bytes(const GroupedMmArgs& a) {
  return tensor_bytes(&a.a) + tensor_bytes(&a.b) + tensor_bytes(a.offs) + tensor_bytes(&a.out);
}
inline double op_bytes(const ScaledMmArgs& a) {
  return tensor_bytes(&a.a) + tensor_bytes(&a.b) + tensor_bytes(&a.scale_a) + tensor_bytes(&a.scale_b) +
         tensor_bytes(a.bias) + tensor_bytes(&a.out);
}

// Only the experts with rows are read.
double op_bytes(const MoeExpertsArgs& a);

inline double op_bytes(const AttentionArgs& a) {
  return tensor_bytes(&a.q) + tensor_bytes(&a.k) + tensor_bytes(&a.v) + tensor_bytes(&a.out);
}

inline double op_bytes(const AttentionBackwardArgs& a) {
  const AttentionArgs& f = a.forward;
  return tensor_bytes(&a.grad_out) + tensor_bytes(&f.q) + tensor_bytes(&f.k) + tensor_bytes(&f.v) +
         tensor_bytes(&a.grad_q) + tensor_bytes(&a.grad_k) + tensor_bytes(&a.grad_v);
}

inline double op_bytes(const RmsNormArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(a.weight) + tensor_bytes(&a.out) + tensor_bytes(a.residual) +
         tensor_bytes(a.sum_out);
}

inline double op_bytes(const EmbeddingArgs& a) {
  return 2.0 * tensor_bytes(&a.out) + tensor_bytes(&a.indices);   // the rows read, and written
}

inline double op_bytes(const RmsNormBackwardArgs& a) {
  return tensor_bytes(&a.grad_out) + tensor_bytes(&a.x) + tensor_bytes(a.weight) + tensor_bytes(&a.grad_x) +
         tensor_bytes(a.grad_weight);
}

inline double op_bytes(const SoftmaxArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const SoftmaxBackwardArgs& a) {
  return tensor_bytes(&a.grad_out) + tensor_bytes(&a.out) + tensor_bytes(&a.grad_in);
}
inline double op_bytes(const TopkArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.values) + tensor_bytes(&a.indices); }
inline double op_bytes(const ArgmaxArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const RotaryArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const UnaryArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const BinaryArgs& a) { return tensor_bytes(&a.a) + tensor_bytes(&a.b) + tensor_bytes(&a.out); }
inline double op_bytes(const GeluArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }

// The VAE's ops: each input, weight and output once (a convolution's input is read once per kernel tap from
// the caches, not from memory).
inline double op_bytes(const ConvArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(&a.weight) + tensor_bytes(a.bias) + tensor_bytes(&a.out);
}
inline double op_bytes(const PadArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const ChannelNormArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(a.weight) + tensor_bytes(&a.out);
}
inline double op_bytes(const UpsampleArgs& a) { return tensor_bytes(&a.x) + tensor_bytes(&a.out); }
inline double op_bytes(const LayerNormArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(a.weight) + tensor_bytes(a.bias) + tensor_bytes(&a.out);
}
inline double op_bytes(const GroupNormArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(a.weight) + tensor_bytes(a.bias) + tensor_bytes(&a.out);
}

// Linear attention: each input once, the output once, a state read and written once.
inline double op_bytes(const CausalConv1dArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(&a.weight) + tensor_bytes(a.bias) + 2.0 * tensor_bytes(a.state) +
         tensor_bytes(&a.out);
}
inline double op_bytes(const GatedDeltaRuleArgs& a) {
  return tensor_bytes(&a.q) + tensor_bytes(&a.k) + tensor_bytes(&a.v) + tensor_bytes(&a.g) + tensor_bytes(&a.beta) +
         2.0 * tensor_bytes(a.state) + tensor_bytes(&a.out);
}
inline double op_bytes(const RmsNormGatedArgs& a) {
  return tensor_bytes(&a.x) + tensor_bytes(&a.gate) + tensor_bytes(a.weight) + tensor_bytes(&a.out);
}

}  // namespace fourfold
