// The module tree follows diffusers' autoencoder_kl_wan.py name for name (the state dict's keys), and the
// feature cache follows its feat_cache rules, so that a folder diffusers wrote decodes to diffusers' output.
#include "model/vae/wan_vae.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "fourfold/errors.h"
#include "fourfold/ops.h"
#include "model/formats/folder_files.h"
#include "model/formats/safetensors.h"
#include "model/vae/tiled.h"

namespace fourfold::model {
namespace {

constexpr int64_t kCacheFrames = 2;   // diffusers' CACHE_T: what a 3-frame causal kernel needs from the past

// Tensors [B, C, T, H, W] along T.
Tensor cat_frames(const Tensor& a, const Tensor& b) {
  Shape shape = a.shape();
  shape[2] += b.size(2);
  Tensor out = Tensor::empty(shape, a.dtype());
  out.narrow(2, 0, a.size(2)).copy_from(a);
  out.narrow(2, a.size(2), b.size(2)).copy_from(b);
  return out;
}

Tensor last_frames(const Tensor& x, int64_t n) {
  const int64_t t = std::min(n, x.size(2));
  return x.narrow(2, x.size(2) - t, t).clone();
}

// AvgDown3D, Wan 2.2's down-block shortcut: frames padded in front to a multiple of ft, each ft x fs x fs
// block of pixels turned into channels (channel c * factor + block position), then the mean of every
// C * factor / out consecutive channels.
Tensor avg_down(Tensor x, int64_t out, int64_t ft, int64_t fs) {
  if (const int64_t pad = (ft - x.size(2) % ft) % ft; pad > 0) x = constant_pad_nd(x, {0, 0, 0, 0, pad, 0});
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2) / ft, h = x.size(3) / fs, w = x.size(4) / fs;
  const int64_t group = c * ft * fs * fs / out;
  const Tensor blocks = x.contiguous().view({b, c, t, ft, h, fs, w, fs}).permute({0, 1, 3, 5, 7, 2, 4, 6}).contiguous()
                            .view({b, out, group, t, h, w});
  Tensor sum = blocks.select(2, 0).contiguous();
  for (int64_t g = 1; g < group; ++g) sum = add(sum, blocks.select(2, g));
  return mul(sum, Tensor::full({1}, 1.0 / static_cast<double>(group), x.dtype()));
}

// DupUp3D, Wan 2.2's up-block shortcut: channels repeated out * factor / C times, then each group of factor
// channels spread over an ft x fs x fs block of pixels; the first chunk drops its first ft - 1 frames.
Tensor dup_up(const Tensor& x, int64_t out, int64_t ft, int64_t fs, bool first_chunk) {
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
  const int64_t repeats = out * ft * fs * fs / c;
  Tensor rep = Tensor::empty({b, c, repeats, t, h, w}, x.dtype());
  rep.copy_from(x.unsqueeze(2).expand({b, c, repeats, t, h, w}));
  Tensor y = rep.view({b, out, ft, fs, fs, t, h, w}).permute({0, 1, 5, 2, 6, 3, 7, 4}).contiguous()
                 .view({b, out, t * ft, h * fs, w * fs});
  return first_chunk && ft > 1 ? y.narrow(2, ft - 1, y.size(2) - (ft - 1)).contiguous() : y;
}

// diffusers' patchify: [B, C, T, H, W] -> [B, C p p, T, H/p, W/p], channel c * p * p + (x in the patch) * p +
// (y in the patch); unpatchify is its inverse.
Tensor patchify(const Tensor& x, int64_t p) {
  if (p == 1) return x;
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3) / p, w = x.size(4) / p;
  return x.contiguous().view({b, c, t, h, p, w, p}).permute({0, 1, 6, 4, 2, 3, 5}).contiguous().view({b, c * p * p, t, h, w});
}

Tensor unpatchify(const Tensor& x, int64_t p) {
  if (p == 1) return x;
  const int64_t b = x.size(0), c = x.size(1) / (p * p), t = x.size(2), h = x.size(3), w = x.size(4);
  return x.contiguous().view({b, c, p, p, t, h, w}).permute({0, 1, 4, 5, 3, 6, 2}).contiguous().view({b, c, t, h * p, w * p});
}

// One causal conv's memory of the frames before the current chunk. Upsamplers mark their first chunk "rep"
// (the first latent frame is not doubled in time), as diffusers does with the string "Rep".
struct Slot {
  enum class State { empty, rep, frames } state = State::empty;
  Tensor frames;
};

// The slots of one encode or decode, consumed in the module order of every chunk.
class FeatureCache {
 public:
  void start_chunk() { next_ = 0; }
  Slot& take() {
    if (next_ == slots_.size()) slots_.emplace_back();
    return slots_[next_++];
  }

 private:
  std::vector<Slot> slots_;
  size_t next_ = 0;
};

// The decoder's stage widths: decoder_base_dim times [dim_mult[-1], *reversed(dim_mult)].
std::vector<int64_t> decoder_dims(const WanVaeConfig& c) {
  std::vector<int64_t> dims = {c.decoder_base_dim * c.dim_mult.back()};
  for (auto it = c.dim_mult.rbegin(); it != c.dim_mult.rend(); ++it) dims.push_back(c.decoder_base_dim * *it);
  return dims;
}

class Net {
 public:
  Net(const WanVaeConfig& c, const std::map<std::string, Tensor>& w) : c_(c), w_(w) {}

  const Tensor& weight(const std::string& name) const {
    auto it = w_.find(name);
    if (it == w_.end()) fail<FormatError>("wan vae", "weights", "a tensor named '" + name + "'", "none");
    return it->second;
  }
  OptTensor bias(const std::string& name) const {
    auto it = w_.find(name);
    return it == w_.end() ? OptTensor{} : OptTensor{it->second};
  }

  // WanCausalConv3d: diffusers' padding (pt, ph, pw) becomes (pw, pw, ph, ph, 2 pt, 0); frames from the
  // cache replace that many of the zero frames before T.
  Tensor causal_conv(const std::string& name, Tensor x, int64_t pt, int64_t ph, int64_t pw, const Tensor* cache = nullptr,
                     std::vector<int64_t> stride = {1, 1, 1}) const {
    int64_t past = 2 * pt;
    if (cache != nullptr && past > 0) {
      x = cat_frames(*cache, x);
      past -= cache->size(2);
    }
    if (pw || ph || past) x = constant_pad_nd(x, {pw, pw, ph, ph, past, 0});
    return conv3d(x, weight(name + ".weight"), bias(name + ".bias"), std::move(stride));
  }

  // A 3x3x3 causal conv that reads and refreshes its slot: the last two frames of its input (with the last
  // frame of the slot in front when the chunk has one frame).
  Tensor cached_conv(const std::string& name, const Tensor& x, FeatureCache& cache) const {
    Slot& slot = cache.take();
    Tensor keep = last_frames(x, kCacheFrames);
    if (keep.size(2) < kCacheFrames && slot.state == Slot::State::frames)
      keep = cat_frames(last_frames(slot.frames, 1), keep);
    Tensor y = causal_conv(name, x, 1, 1, 1, slot.state == Slot::State::frames ? &slot.frames : nullptr);
    slot = {Slot::State::frames, keep};
    return y;
  }

  // WanRMS_norm over the channel dim (dim 1): x / max(||x||, 1e-12) * sqrt(C) * gamma, which is channel_rms_norm
  // with eps = 1e-24 / C (ops.h); with the SiLU that follows it fused.
  Tensor channel_norm(const std::string& name, const Tensor& x, bool silu = false) const {
    const int64_t c = x.size(1);
    return channel_rms_norm(x, weight(name + ".gamma").reshape({c}), 1e-24 / static_cast<double>(c), silu);
  }

  Tensor norm_silu(const std::string& name, const Tensor& x) const { return channel_norm(name, x, true); }

  // WanResidualBlock.
  Tensor residual(const std::string& p, const Tensor& x, int64_t in, int64_t out, FeatureCache& cache) const {
    const Tensor h = in != out ? causal_conv(p + ".conv_shortcut", x, 0, 0, 0) : x;
    Tensor y = cached_conv(p + ".conv1", norm_silu(p + ".norm1", x), cache);
    y = cached_conv(p + ".conv2", norm_silu(p + ".norm2", y), cache);
    return add(y, h);
  }

  // WanAttentionBlock: per frame, one head over the H x W positions, 1x1 convs in and out.
  Tensor attention(const std::string& p, const Tensor& x) const {
    const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    const Tensor frames = x.permute({0, 2, 1, 3, 4}).reshape({b * t, c, h, w});
    const Tensor qkv = conv2d(channel_norm(p + ".norm", frames), weight(p + ".to_qkv.weight"), bias(p + ".to_qkv.bias"));
    const Tensor rows = qkv.reshape({b * t, 1, 3 * c, h * w}).permute({0, 1, 3, 2});   // [BT, 1, HW, 3C]
    const Tensor o = scaled_dot_product_attention(rows.narrow(3, 0, c), rows.narrow(3, c, c), rows.narrow(3, 2 * c, c));
    const Tensor maps = o.squeeze(1).permute({0, 2, 1}).reshape({b * t, c, h, w});
    const Tensor y = conv2d(maps, weight(p + ".proj.weight"), bias(p + ".proj.bias"));
    return add(y.reshape({b, t, c, h, w}).permute({0, 2, 1, 3, 4}).contiguous(), x);
  }

  Tensor mid(const std::string& p, const Tensor& x, int64_t dim, FeatureCache& cache) const {
    Tensor y = residual(p + ".resnets.0", x, dim, dim, cache);
    y = attention(p + ".attentions.0", y);
    return residual(p + ".resnets.1", y, dim, dim, cache);
  }

  // The 2-D part of WanResample on every frame: nearest 2x + 3x3 conv (up), or pad right/bottom + 3x3 conv of
  // stride 2 (down).
  Tensor spatial(const std::string& p, const Tensor& x, bool up) const {
    const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    Tensor frames = x.permute({0, 2, 1, 3, 4}).reshape({b * t, c, h, w});
    const Tensor& k = weight(p + ".resample.1.weight");
    const OptTensor kb = bias(p + ".resample.1.bias");
    frames = up ? conv2d(upsample_nearest(frames, {2 * h, 2 * w}), k, kb, {1, 1}, {1, 1})
                : conv2d(constant_pad_nd(frames, {0, 1, 0, 1}), k, kb, {2, 2});
    return frames.reshape({b, t, frames.size(1), frames.size(2), frames.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
  }

  // upsample3d's time step: a (3, 1, 1) causal conv to 2C channels whose halves become frames 2t and 2t + 1;
  // the first chunk passes through (one frame in, one out).
  Tensor time_upsample(const std::string& p, Tensor x, FeatureCache& cache) const {
    Slot& slot = cache.take();
    if (slot.state == Slot::State::empty) {
      slot.state = Slot::State::rep;
      return x;
    }
    Tensor keep = last_frames(x, kCacheFrames);
    if (keep.size(2) < kCacheFrames && slot.state == Slot::State::frames) keep = cat_frames(last_frames(slot.frames, 1), keep);
    if (keep.size(2) < kCacheFrames && slot.state == Slot::State::rep)
      keep = cat_frames(Tensor::zeros(keep.shape(), keep.dtype()), keep);
    const Tensor y = causal_conv(p + ".time_conv", x, 1, 0, 0, slot.state == Slot::State::frames ? &slot.frames : nullptr);
    slot = {Slot::State::frames, keep};
    const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    Tensor out = Tensor::empty({b, c, t, 2, h, w}, y.dtype());
    for (int64_t s = 0; s < 2; ++s) out.narrow(3, s, 1).copy_from(y.narrow(1, s * c, c).unsqueeze(3));
    return out.view({b, c, 2 * t, h, w});
  }

  // downsample3d's time step, after the spatial one: the first chunk is kept whole; later chunks are
  // convolved, stride 2 in time, behind the last frame of the one before.
  Tensor time_downsample(const std::string& p, const Tensor& x, FeatureCache& cache) const {
    Slot& slot = cache.take();
    if (slot.state == Slot::State::empty) {
      slot = {Slot::State::frames, x.clone()};
      return x;
    }
    const Tensor keep = last_frames(x, 1);
    const Tensor y = causal_conv(p + ".time_conv", cat_frames(last_frames(slot.frames, 1), x), 0, 0, 0, nullptr, {2, 1, 1});
    slot = {Slot::State::frames, keep};
    return y;
  }

  Tensor head(const std::string& p, const Tensor& x, FeatureCache& cache) const {
    return cached_conv(p + ".conv_out", norm_silu(p + ".norm_out", x), cache);
  }

  // Wan 2.1: WanUpBlock (the upsampler halves the channels, "upsamplers.0"); Wan 2.2 (is_residual):
  // WanResidualUpBlock (the upsampler keeps them, "upsampler", plus the DupUp3D shortcut around the block).
  Tensor decoder(const Tensor& z, FeatureCache& cache, bool first_chunk) const {
    const int64_t stages = static_cast<int64_t>(c_.dim_mult.size());
    const std::vector<int64_t> dims = decoder_dims(c_);
    Tensor x = cached_conv("decoder.conv_in", z, cache);
    x = mid("decoder.mid_block", x, dims[0], cache);
    for (int64_t i = 0; i < stages; ++i) {
      const std::string p = fmt::format("decoder.up_blocks.{}", i);
      int64_t in = dims[static_cast<size_t>(i)];
      const int64_t out = dims[static_cast<size_t>(i) + 1];
      if (i > 0 && !c_.is_residual) in /= 2;   // the Wan 2.1 upsampler before halved the channels
      const Tensor block_in = x;
      for (int64_t r = 0; r <= c_.num_res_blocks; ++r, in = out)
        x = residual(fmt::format("{}.resnets.{}", p, r), x, in, out, cache);
      if (i == stages - 1) continue;
      const bool temporal = c_.temperal_downsample[static_cast<size_t>(stages - 2 - i)];   // temperal_upsample[i]
      const std::string up = p + (c_.is_residual ? ".upsampler" : ".upsamplers.0");
      if (temporal) x = time_upsample(up, x, cache);
      x = spatial(up, x, /*up=*/true);
      if (c_.is_residual) x = add(x, dup_up(block_in, out, temporal ? 2 : 1, 2, first_chunk));
    }
    return head("decoder", x, cache);
  }

  // Wan 2.2: WanResidualDownBlock per stage (resnets, "downsampler", plus the AvgDown3D shortcut).
  Tensor residual_encoder_stages(Tensor x, FeatureCache& cache, int64_t& in) const {
    const int64_t stages = static_cast<int64_t>(c_.dim_mult.size());
    for (int64_t i = 0; i < stages; ++i) {
      const std::string p = fmt::format("encoder.down_blocks.{}", i);
      const int64_t out = c_.base_dim * c_.dim_mult[static_cast<size_t>(i)];
      const bool down = i != stages - 1, temporal = down && c_.temperal_downsample[static_cast<size_t>(i)];
      const Tensor block_in = x;
      for (int64_t r = 0; r < c_.num_res_blocks; ++r, in = out)
        x = residual(fmt::format("{}.resnets.{}", p, r), x, in, out, cache);
      if (down) {
        x = spatial(p + ".downsampler", x, /*up=*/false);
        if (temporal) x = time_downsample(p + ".downsampler", x, cache);
      }
      x = add(x, avg_down(block_in, out, temporal ? 2 : 1, down ? 2 : 1));
      in = out;
    }
    return x;
  }

  Tensor encoder(const Tensor& video, FeatureCache& cache) const {
    const int64_t stages = static_cast<int64_t>(c_.dim_mult.size());
    Tensor x = cached_conv("encoder.conv_in", video, cache);
    int64_t in = c_.base_dim, index = 0;
    double scale = 1.0;
    if (c_.is_residual) {
      x = residual_encoder_stages(x, cache, in);
      x = mid("encoder.mid_block", x, in, cache);
      return head("encoder", x, cache);
    }
    for (int64_t i = 0; i < stages; ++i) {
      const int64_t out = c_.base_dim * c_.dim_mult[static_cast<size_t>(i)];
      for (int64_t r = 0; r < c_.num_res_blocks; ++r, in = out) {
        x = residual(fmt::format("encoder.down_blocks.{}", index++), x, in, out, cache);
        if (std::find(c_.attn_scales.begin(), c_.attn_scales.end(), scale) != c_.attn_scales.end())
          x = attention(fmt::format("encoder.down_blocks.{}", index++), x);
      }
      if (i == stages - 1) continue;
      const std::string p = fmt::format("encoder.down_blocks.{}", index++);
      x = spatial(p, x, /*up=*/false);
      if (c_.temperal_downsample[static_cast<size_t>(i)]) x = time_downsample(p, x, cache);
      scale /= 2.0;
    }
    x = mid("encoder.mid_block", x, in, cache);
    return head("encoder", x, cache);
  }

 private:
  const WanVaeConfig& c_;
  const std::map<std::string, Tensor>& w_;
};

}  // namespace

std::map<std::string, Shape> wan_vae_tensor_shapes(const WanVaeConfig& c) {
  std::map<std::string, Shape> e;
  const auto conv = [&](const std::string& n, Shape w) {
    e[n + ".bias"] = {w[0]};
    e[n + ".weight"] = std::move(w);
  };
  const auto resnet = [&](const std::string& p, int64_t in, int64_t out) {
    e[p + ".norm1.gamma"] = {in, 1, 1, 1};
    e[p + ".norm2.gamma"] = {out, 1, 1, 1};
    conv(p + ".conv1", {out, in, 3, 3, 3});
    conv(p + ".conv2", {out, out, 3, 3, 3});
    if (in != out) conv(p + ".conv_shortcut", {out, in, 1, 1, 1});
  };
  const auto attention = [&](const std::string& p, int64_t d) {
    e[p + ".norm.gamma"] = {d, 1, 1};
    conv(p + ".to_qkv", {3 * d, d, 1, 1});
    conv(p + ".proj", {d, d, 1, 1});
  };
  const auto mid = [&](const std::string& p, int64_t d) {
    resnet(p + ".resnets.0", d, d);
    attention(p + ".attentions.0", d);
    resnet(p + ".resnets.1", d, d);
  };
  const int64_t stages = static_cast<int64_t>(c.dim_mult.size());
  // encoder
  conv("encoder.conv_in", {c.base_dim, c.in_channels, 3, 3, 3});
  int64_t in = c.base_dim, index = 0;
  double scale = 1.0;
  for (int64_t i = 0; i < stages && c.is_residual; ++i) {
    const std::string p = fmt::format("encoder.down_blocks.{}", i);
    const int64_t out = c.base_dim * c.dim_mult[static_cast<size_t>(i)];
    for (int64_t r = 0; r < c.num_res_blocks; ++r, in = out) resnet(fmt::format("{}.resnets.{}", p, r), in, out);
    in = out;
    if (i == stages - 1) continue;
    conv(p + ".downsampler.resample.1", {out, out, 3, 3});
    if (c.temperal_downsample[static_cast<size_t>(i)]) conv(p + ".downsampler.time_conv", {out, out, 3, 1, 1});
  }
  for (int64_t i = 0; i < stages && !c.is_residual; ++i) {
    const int64_t out = c.base_dim * c.dim_mult[static_cast<size_t>(i)];
    for (int64_t r = 0; r < c.num_res_blocks; ++r, in = out) {
      resnet(fmt::format("encoder.down_blocks.{}", index++), in, out);
      if (std::find(c.attn_scales.begin(), c.attn_scales.end(), scale) != c.attn_scales.end())
        attention(fmt::format("encoder.down_blocks.{}", index++), out);
    }
    if (i == stages - 1) continue;
    const std::string p = fmt::format("encoder.down_blocks.{}", index++);
    conv(p + ".resample.1", {in, in, 3, 3});
    if (c.temperal_downsample[static_cast<size_t>(i)]) conv(p + ".time_conv", {in, in, 3, 1, 1});
    scale /= 2.0;
  }
  mid("encoder.mid_block", in);
  e["encoder.norm_out.gamma"] = {in, 1, 1, 1};
  conv("encoder.conv_out", {2 * c.z_dim, in, 3, 3, 3});
  conv("quant_conv", {2 * c.z_dim, 2 * c.z_dim, 1, 1, 1});
  conv("post_quant_conv", {c.z_dim, c.z_dim, 1, 1, 1});
  // decoder
  const std::vector<int64_t> dims = decoder_dims(c);
  conv("decoder.conv_in", {dims[0], c.z_dim, 3, 3, 3});
  mid("decoder.mid_block", dims[0]);
  for (int64_t i = 0; i < stages; ++i) {
    const std::string p = fmt::format("decoder.up_blocks.{}", i);
    int64_t bin = dims[static_cast<size_t>(i)];
    const int64_t out = dims[static_cast<size_t>(i) + 1];
    if (i > 0 && !c.is_residual) bin /= 2;
    for (int64_t r = 0; r <= c.num_res_blocks; ++r, bin = out) resnet(fmt::format("{}.resnets.{}", p, r), bin, out);
    if (i == stages - 1) continue;
    const std::string up = p + (c.is_residual ? ".upsampler" : ".upsamplers.0");
    conv(up + ".resample.1", {c.is_residual ? out : out / 2, out, 3, 3});
    if (c.temperal_downsample[static_cast<size_t>(stages - 2 - i)]) conv(up + ".time_conv", {2 * out, out, 3, 1, 1});
  }
  e["decoder.norm_out.gamma"] = {dims.back(), 1, 1, 1};
  conv("decoder.conv_out", {c.out_channels, dims.back(), 3, 3, 3});
  return e;
}

namespace {

// diffusers clamps the decoded video to [-1, 1].
Tensor clamp_unit(const Tensor& x) {
  std::vector<double> v = x.to_vector();
  for (double& e : v) e = std::clamp(e, -1.0, 1.0);
  return Tensor::from_vector(v, x.shape(), x.dtype());
}

// Latents [B, z_dim, T, h, w] or a video [B, pixel channels, T, H, W], every size at least 1, floating-point,
// and whose work fits in 64 bits: the output's size and a bound on every activation of the run (the widest
// stage's channels x one chunk's frames with the two cached in front x the output's pixels, in f32 bytes) are
// computed with checked math, so that sizes which would wrap (latents with one dimension 0 and another 2^62)
// are refused here rather than becoming an undersized buffer.
void check_input(const Tensor& x, const WanVaeConfig& c, bool latents) {
  const char* what = latents ? "latents" : "video";
  const int64_t channels = latents ? c.z_dim : c.pixel_channels(true);
  if (x.dim() != 5 || x.size(1) != channels)
    fail<ShapeError>("wan vae", what, fmt::format("[B, {}, T, H, W]", channels), shape_string(x.shape()));
  for (int64_t d = 0; d < 5; ++d)
    if (x.size(d) < 1)
      fail<ShapeError>("wan vae", what, "at least one batch entry, frame, row and column", shape_string(x.shape()));
  if (!is_floating(x.dtype()))
    fail<DTypeError>("wan vae", what, "a floating-point tensor", std::string(dtype_name(x.dtype())));
  const std::string where = fmt::format("wan vae ({} {})", what, shape_string(x.shape()));
  const int64_t scale = latents ? c.scale_factor_spatial : 1;
  const int64_t frames = latents ? c.decoded_frames(x.size(2)) : x.size(2);
  const int64_t h = checked_mul(x.size(3), scale, where, "the output's height");
  const int64_t w = checked_mul(x.size(4), scale, where, "the output's width");
  const int64_t f32 = sizeof(float);
  checked_product(Shape{x.size(0), c.pixel_channels(false), frames, h, w, f32}, where, "the output's size");
  int64_t widest = std::max({c.in_channels, c.out_channels, 2 * c.z_dim});
  for (int64_t m : c.dim_mult) widest = std::max({widest, c.base_dim * m, c.decoder_base_dim * m});
  checked_product(Shape{x.size(0), widest, c.scale_factor_temporal + kCacheFrames, h, w, f32}, where,
                  "the widest activation's size");
}

}  // namespace

void check_wan_vae_weights(const WanVaeConfig& config, const std::map<std::string, Tensor>& weights,
                           const std::string& where, const std::map<std::string, std::string>& file_of) {
  const auto file = [&](const std::string& name) {
    const auto it = file_of.find(name);
    return it == file_of.end() ? where : (std::filesystem::path(where) / it->second).string();
  };
  for (const auto& [name, shape] : wan_vae_tensor_shapes(config)) {
    const auto it = weights.find(name);
    if (it == weights.end())
      fail<FormatError>(where, "tensor " + name, "a floating-point tensor " + shape_string(shape), "none (missing)");
    if (it->second.shape() != shape || !is_floating(it->second.dtype()))
      fail<FormatError>(file(name), "tensor " + name, "a floating-point tensor " + shape_string(shape),
                        fmt::format("{} {}", dtype_name(it->second.dtype()), shape_string(it->second.shape())));
  }
}

WanVae::WanVae(WanVaeConfig config, std::map<std::string, Tensor> weights, DType activation)
    : config_(std::move(config)), activation_(activation) {
  if (activation != DType::f32 && activation != DType::bf16)
    fail<DTypeError>("wan vae", "activation", "float32 or bfloat16", std::string(dtype_name(activation)));
  check_wan_vae_config(config_, "wan vae");
  check_wan_vae_weights(config_, weights, "wan vae");
  for (const auto& [name, shape] : wan_vae_tensor_shapes(config_))
    weights_[name] = weights.at(name).to(activation).contiguous();
}

int64_t WanVae::parameter_bytes() const {
  int64_t total = 0;
  for (const auto& [name, t] : weights_) total += t.numel() * static_cast<int64_t>(dtype_size(t.dtype()));
  return total;
}

// The decoder over every latent frame, unclamped and still patchified (tiles are blended in patch space,
// before the clamp, as diffusers does).
Tensor WanVae::decode_frames(const Tensor& latents, const std::function<void(int64_t, int64_t)>& on_frame) const {
  const Net net(config_, weights_);
  const Tensor z = net.causal_conv("post_quant_conv", latents.to(activation_).contiguous(), 0, 0, 0);
  const int64_t frames = z.size(2);
  FeatureCache cache;
  Tensor out;
  int64_t written = 0;
  for (int64_t i = 0; i < frames; ++i) {
    cache.start_chunk();
    const Tensor y = net.decoder(z.narrow(2, i, 1), cache, /*first_chunk=*/i == 0);
    if (i == 0) {
      Shape shape = y.shape();
      shape[2] = config_.decoded_frames(frames);
      out = Tensor::empty(shape, y.dtype());
    }
    out.narrow(2, written, y.size(2)).copy_from(y);
    written += y.size(2);
    if (on_frame) on_frame(i, frames);
  }
  return out;
}

Tensor WanVae::decode(const Tensor& latents, const std::function<void(int64_t, int64_t)>& on_frame) const {
  check_input(latents, config_, /*latents=*/true);
  return clamp_unit(unpatchify(decode_frames(latents, on_frame), config_.patch_size));
}

Tensor WanVae::encode_moments(const Tensor& video) const {
  const int64_t t = video.size(2);
  const Net net(config_, weights_);
  const Tensor x = video.to(activation_).contiguous();   // patchified by the caller
  FeatureCache cache;
  std::optional<Tensor> out;
  for (int64_t start = 0; start < t;) {
    const int64_t n = start == 0 ? 1 : config_.scale_factor_temporal;
    cache.start_chunk();
    const Tensor y = net.encoder(x.narrow(2, start, n).contiguous(), cache);
    out = out ? cat_frames(*out, y) : y;
    start += n;
  }
  return net.causal_conv("quant_conv", *out, 0, 0, 0);
}

void WanVae::check_video(const Tensor& video) const {
  check_input(video, config_, /*latents=*/false);
  const int64_t t = video.size(2);
  if ((t - 1) % config_.scale_factor_temporal != 0)
    fail<ShapeError>("wan vae", "video", fmt::format("1 + {} k frames", config_.scale_factor_temporal),
                     std::to_string(t) + " frames");
  const int64_t s = config_.scale_factor_spatial;
  if (video.size(3) % s != 0 || video.size(4) % s != 0)
    fail<ShapeError>("wan vae", "video", fmt::format("height and width multiples of {}", s), shape_string(video.shape()));
}

Tensor WanVae::encode(const Tensor& video) const {
  check_video(video);
  return encode_moments(patchify(video, config_.patch_size)).narrow(1, 0, config_.z_dim).contiguous();
}

namespace {

void check_tiling(const WanVae::Tiling& t, int64_t scale) {
  if (t.tile < scale || t.stride < scale || t.stride > t.tile || t.tile % scale != 0 || t.stride % scale != 0)
    fail<ValueError>("wan vae", "tiling", fmt::format("multiples of {} with stride <= tile", scale),
                     fmt::format("tile {}, stride {}", t.tile, t.stride));
}

}  // namespace

Tensor WanVae::decode_tiled(const Tensor& latents, const Tiling& tiling,
                            const std::function<void(int64_t, int64_t)>& on_tile) const {
  check_input(latents, config_, /*latents=*/true);
  const int64_t s = config_.scale_factor_spatial;
  check_tiling(tiling, s);
  const int64_t h = latents.size(3), w = latents.size(4), tile = tiling.tile / s, p = config_.patch_size;
  if (h <= tile && w <= tile) return decode(latents);   // diffusers tiles only what does not fit in one tile
  // Output tiles stay patchified: strides and the blend are in patch units, as diffusers has them.
  const TileGrid grid{tile, tiling.stride / s, tiling.stride / p, tiling.tile / p - tiling.stride / p, h * s / p, w * s / p};
  const Tensor out = run_tiled(latents, grid, [&](const Tensor& part, int64_t i, int64_t n) {
    Tensor y = decode_frames(part, {});
    if (on_tile) on_tile(i, n);
    return y;
  });
  return clamp_unit(unpatchify(out, p)).to(activation_);
}

Tensor WanVae::encode_tiled(const Tensor& video, const Tiling& tiling) const {
  check_video(video);
  const int64_t s = config_.scale_factor_spatial;
  check_tiling(tiling, s);
  const int64_t h = video.size(3), w = video.size(4), p = config_.patch_size, r = s / p;
  if (h <= tiling.tile && w <= tiling.tile) return encode(video);
  // diffusers cuts the patchified video into tiles of `tile` patch pixels: the grid is in patch space.
  const TileGrid grid{tiling.tile, tiling.stride, tiling.stride / r, tiling.tile / r - tiling.stride / r, h / s, w / s};
  const Tensor moments = run_tiled(patchify(video, p), grid,
                                   [&](const Tensor& part, int64_t, int64_t) { return encode_moments(part); });
  return moments.narrow(1, 0, config_.z_dim).contiguous().to(activation_);
}

WanVae load_wan_vae(const std::filesystem::path& dir, DType activation) {
  const std::filesystem::path config_path = dir / "config.json";
  WanVaeConfig config = parse_wan_vae_config(read_folder_json(config_path), config_path.string());
  const WeightFiles listing =
      list_weight_files(dir, "diffusion_pytorch_model.safetensors", "diffusion_pytorch_model.safetensors.index.json");
  std::map<std::string, Tensor> weights;
  std::map<std::string, std::string> file_of;
  for (const std::string& file : listing.files)
    for (auto& [name, t] : read_safetensors(dir / file).tensors) {
      check_listed(listing, dir, file, name);
      file_of[name] = file;
      weights[name] = std::move(t);
    }
  check_index_complete(listing, dir, [&](const std::string& name) { return weights.count(name) > 0; });
  check_wan_vae_weights(config, weights, dir.string(), file_of);
  return WanVae(std::move(config), std::move(weights), activation);
}

}  // namespace fourfold::model
