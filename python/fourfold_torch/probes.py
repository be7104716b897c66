"""The roofline of the device, probed in the same run with PyTorch's own ops (fourfold's probes are
hand-written loops that PyTorch cannot run on every device):
  read GB/s    torch.sum over a 256 MiB float32 buffer (reads it once)
  write GB/s   Tensor.fill_ of the same buffer (writes it once)
  GFLOP/s      torch.mm of two float32 square matrices (2 n^3 flops), the device's dense f32 rate; a ceiling
               measured, not the FMA units' theoretical peak that fourfold's probe approaches
Medians of `repeats` timed calls after one warm-up."""

import statistics
import time
from dataclasses import dataclass

import torch

from .device import synchronize


@dataclass
class Roofline:
    read_gbs: float
    write_gbs: float
    gflops: float


def _median_seconds(call, device, repeats):
    call()
    synchronize(device)
    times = []
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        call()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def read_bandwidth_gbs(device, mib=256, repeats=3):
    buf = torch.ones(mib << 18, dtype=torch.float32, device=device)
    seconds = _median_seconds(lambda: buf.sum(), device, repeats)
    return buf.numel() * 4 / seconds / 1e9


def measure_roofline(device, mib=256, repeats=3):
    buf = torch.empty(mib << 18, dtype=torch.float32, device=device)
    write = buf.numel() * 4 / _median_seconds(lambda: buf.fill_(1.0), device, repeats) / 1e9
    read = buf.numel() * 4 / _median_seconds(lambda: buf.sum(), device, repeats) / 1e9
    del buf
    n = 2048 if device.type == "cpu" else 8192
    a = torch.ones(n, n, dtype=torch.float32, device=device)
    b = torch.ones(n, n, dtype=torch.float32, device=device)
    gflops = 2.0 * n**3 / _median_seconds(lambda: torch.mm(a, b), device, repeats) / 1e9
    return Roofline(read, write, gflops)


def floor_us(cost, roof):
    """fourfold's roofline_point: max(bytes read / read + bytes written / write, flops / peak), in µs."""
    t_memory = cost.bytes_read / (roof.read_gbs * 1e9) + cost.bytes_written / (roof.write_gbs * 1e9)
    t_compute = cost.flops / (roof.gflops * 1e9)
    return max(t_memory, t_compute) * 1e6


def read_bandwidth_gb_per_s_or_none(device):
    """The machine-state probe around the workload (manifest machine_before / machine_after)."""
    try:
        return read_bandwidth_gbs(device)
    except RuntimeError:
        return None
