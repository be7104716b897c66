"""The manifest of a PyTorch run: the same fields as fourfold's (docs/records_schema.md), filled from the
PyTorch build and the device, plus `producer` (shown by fourfold compare) and a `torch` object of details."""

import os
import re
import subprocess

import torch

from . import __version__
from .device import cpu_isa_flags, cpu_model, describe


def _repo_commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=False)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _build_config():
    text = torch.__config__.show()
    compiler = re.search(r"^\s*-\s*((?:GCC|Clang|clang|Apple clang|MSVC)[^\n]*)$", text, re.M)
    flags = re.search(r"CXX_FLAGS=(.*?), [A-Z_]+=", text, re.S)
    build_type = re.search(r"BUILD_TYPE=(\w+)", text)
    return (compiler.group(1).strip() if compiler else "unknown", flags.group(1).strip() if flags else "",
            build_type.group(1) if build_type else ("Debug" if torch.version.debug else "Release"))


def producer(compiled, device_text, kernels="torch"):
    return (f"PyTorch {torch.__version__} (git {(torch.version.git_version or 'unknown')[:12]}), "
            f"{'torch.compile' if compiled else 'eager'}, {device_text}"
            + (", fourfold kernels (torch.ops.fourfold)" if kernels == "fourfold" else ""))


def torch_manifest(device, device_text, workload, dtypes, compiled, machine_before, machine_after, kernels="torch"):
    compiler, cxx_flags, build_type = _build_config()
    details = {"version": torch.__version__, "git_version": torch.version.git_version or "",
               "mode": "torch.compile" if compiled else "eager", "cpu_capability": torch.backends.cpu.get_cpu_capability(),
               "interop_threads": torch.get_num_interop_threads(), "kernels": kernels}
    details.update(describe(device))
    return {
        "producer": producer(compiled, device_text, kernels),
        "fourfold_version": __version__,
        "git_commit": _repo_commit(),
        "compiler": compiler,
        "cxx_flags": cxx_flags,
        "build_type": build_type,
        "sanitizers": False,
        "cpu_model": cpu_model(),
        "isa_flags": cpu_isa_flags(),
        "isa_variant": torch.backends.cpu.get_cpu_capability().lower() if device.type == "cpu" else details.get("device_name", device.type),
        "threads": torch.get_num_threads(),
        "device": device_text,
        "dtypes": dtypes,
        "policy": "",
        "op_tiers": [],
        "workload": workload,
        "machine_before": machine_before,
        "machine_after": machine_after,
        "torch": details,
    }
