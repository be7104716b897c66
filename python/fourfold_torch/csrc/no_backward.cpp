// The ops have no backward yet. Without an autograd kernel PyTorch would run them with grad enabled, warn once,
// and hand back outputs that silently carry no gradient; this kernel at the Autograd key refuses instead, naming
// the op and the argument, whenever autograd would record the call (grad mode on and a tensor argument requiring
// grad), and otherwise passes the call below autograd unchanged. fourfold_torch.optimize keeps gradients right
// by running a rewired module's original forward when they are recorded (rewire.py). A test holds every op of
// the namespace to having this kernel or a backward of its own.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>

namespace {

bool requires_grad(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() && v.toTensor().requires_grad();
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec())
      if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

void refuse_gradients(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  if (c10::GradMode::is_enabled()) {
    const auto& arguments = op.schema().arguments();
    const size_t first = stack->size() - arguments.size();
    for (size_t i = 0; i < arguments.size(); ++i) {
      TORCH_CHECK(!requires_grad((*stack)[first + i]), op.schema().name(), ": argument '", arguments[i].name(),
                  "' requires grad, and the op has no backward yet: call it under torch.no_grad() or "
                  "torch.inference_mode(), or detach the argument (fourfold_torch.optimize runs PyTorch's own "
                  "modules while gradients are recorded)");
    }
  }
  at::AutoDispatchBelowAutograd below;
  op.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(fourfold, Autograd, m) {
  for (const char* op : {"linear", "scaled_linear", "silu_mul", "rms_norm", "add_rms_norm", "channel_rms_norm",
                         "rotary_embedding", "scaled_dot_product_attention", "softmax", "log_softmax", "topk",
                         "argmax", "moe_route", "moe_experts", "moe_block", "causal_conv1d", "gated_delta_rule",
                         "rms_norm_gated", "constant_pad_nd", "conv2d", "conv3d", "padded_conv3d", "upsample_nearest",
                         "to_huge_pages"})
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&refuse_gradients>());
}
