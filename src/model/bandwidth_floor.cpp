#include "model/bandwidth_floor.h"

namespace fourfold::model {

DecodeFloor decode_floor(const Decoder& d, double context, double read_gb_per_s) {
  DecodeFloor f;
  f.weight_bytes = d.weights().active_bytes_per_token;
  f.kv_bytes = static_cast<uint64_t>(context * static_cast<double>(d.cache().bytes_per_position()));
  f.read_gb_per_s = read_gb_per_s;
  return f;
}

}  // namespace fourfold::model
