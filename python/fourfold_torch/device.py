"""The device a PyTorch run uses: synchronization around timed work, and what the manifest says of it."""

import torch


def resolve(name):
    """'cpu', 'cuda', 'cuda:1', 'mps' -> (torch.device, manifest spelling); a clear error when absent."""
    dev = torch.device(name)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit(f"fourfold_torch: --device {name}: expected a CUDA device, found none "
                             "(torch.cuda.is_available() is False)")
        dev = torch.device("cuda", dev.index if dev.index is not None else torch.cuda.current_device())
        return dev, f"cuda:{dev.index}"
    if dev.type == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise SystemExit(f"fourfold_torch: --device {name}: expected an MPS device, found none")
        return dev, "mps"
    if dev.type != "cpu":
        raise SystemExit(f"fourfold_torch: --device {name}: expected cpu, cuda[:N] or mps")
    return dev, "cpu"


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def describe(device):
    """Device name and driver/runtime versions, for the manifest's producer details."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return {"device_name": props.name, "cuda_runtime": torch.version.cuda or "",
                "cudnn": str(torch.backends.cudnn.version() or ""),
                "driver": _nvidia_driver()}
    if device.type == "mps":
        import platform
        return {"device_name": "Apple MPS", "macos": platform.mac_ver()[0]}
    return {"device_name": cpu_model()}


def _nvidia_driver():
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            return f.readline().strip()
    except OSError:
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


def cpu_isa_flags():
    """The host's ISA flags in fourfold's spelling (manifest isa_flags)."""
    names = [("avx2", "avx2"), ("fma", "fma"), ("f16c", "f16c"), ("avx512f", "avx512f"), ("avx512bw", "avx512bw"),
             ("avx512vl", "avx512vl"), ("avx512_bf16", "avx512_bf16"), ("amx_tile", "amx")]
    flags = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    return [ours for theirs, ours in names if theirs in flags]
