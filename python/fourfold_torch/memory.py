"""Memory at three levels around a workload (DESIGN.md 2.4), as fourfold's MemoryRecord spells them:
  process   CPU: the resident-set high-water mark (VmHWM, reset through /proc/self/clear_refs), sampled for
            its anonymous / file split; CUDA: the device memory this process holds (NVML per process where
            nvidia-ml-py is installed, else the device's total - free), sampled every 2 ms;
            MPS: torch.mps.driver_allocated_memory(), sampled
  reserved  CUDA: torch.cuda.max_memory_reserved; MPS: driver-allocated (Metal's heap); CPU: PyTorch's CPU
            allocator caches nothing, so reserved = allocated
  allocated CUDA: torch.cuda.max_memory_allocated; MPS: current_allocated_memory, sampled; CPU: the
            profiler's allocator events ("Total Allocated" of every [memory] event), current and peak, from a
            second run of the workload (the first, without the profiler, gives the process level)
"""

import ctypes
import json
import os
import tempfile
import threading

import torch
import torch.nn.functional as F

from .counter_rng import uniform_f64


def _status():
    out = {}
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def _reset_process_peak():
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as f:
            f.write("5")
        return True
    except OSError:
        return False


class _Sampler:
    """Samples a level every 2 ms on a thread and keeps the peak (the kernel keeps no peak per kind)."""

    def __init__(self, read):
        self.read, self.peak, self.stop = read, None, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            self._sample()
            self.stop.wait(0.002)

    def _sample(self):
        v = self.read()
        if self.peak is None or v[0] > self.peak[0]:
            self.peak = v

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self._sample()


def _cpu_allocator_totals(workload):
    """Runs the workload under the profiler; (current, peak) of the CPU allocator's live bytes."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        workload()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            events = [e for e in json.load(f).get("traceEvents", []) if e.get("name") == "[memory]"]
    finally:
        os.unlink(path)
    cpu = [e["args"] for e in events if e.get("args", {}).get("Device Type", 0) == 0]
    totals = [int(a.get("Total Allocated", 0)) for a in cpu]
    return (max(totals[-1], 0), max(max(totals), 0)) if totals else (0, 0)


def _cuda_process_memory(device):
    """Device memory this process holds, from NVML's per-process accounting (nvidia-ml-py) where it is
    installed; else the device's used memory (total - free), which counts other processes too."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)
        pid = os.getpid()

        def used():
            mine = sum(p.usedGpuMemory or 0 for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle) if p.pid == pid)
            return (mine, mine, 0)
        used()
        return used
    except Exception:   # no nvidia-ml-py, or NVML refuses per-process figures (containers)
        def used():
            free, total = torch.cuda.mem_get_info(device)
            return (total - free, total - free, 0)
        return used


def _release_free_heap():
    """Hands the C heap's free pages back to the system, as fourfold's measure_memory does, so that an earlier
    stage's freed memory neither counts as present before the workload nor is reused unseen by it."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):   # not glibc
        pass


def measure_memory(workload, device):
    rec = {"process_source": "rss", "peak_reset_supported": True, "mapped_weights_bytes": 0}
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)

        used = _cuda_process_memory(device)
        rec["process_source"] = "device"
        rec["present_before_bytes"] = used()[0]
        rec["reserved_before_bytes"] = torch.cuda.memory_reserved(device)
        with _Sampler(used) as s:
            workload()
            torch.cuda.synchronize(device)
        rec.update(process_peak_bytes=s.peak[0], process_peak_anon_bytes=s.peak[1], process_peak_file_bytes=0,
                   allocated_current_bytes=torch.cuda.memory_allocated(device),
                   allocated_peak_bytes=torch.cuda.max_memory_allocated(device),
                   reserved_current_bytes=torch.cuda.memory_reserved(device),
                   reserved_peak_bytes=torch.cuda.max_memory_reserved(device))
    elif device.type == "mps":
        torch.mps.synchronize()
        torch.mps.empty_cache()

        def used():
            return (torch.mps.driver_allocated_memory(), torch.mps.current_allocated_memory(), 0)
        rec["process_source"] = "device"
        rec["peak_reset_supported"] = False
        rec["present_before_bytes"] = used()[0]
        rec["reserved_before_bytes"] = rec["present_before_bytes"]   # the driver level stands for both here
        with _Sampler(used) as s:
            workload()
            torch.mps.synchronize()
        rec.update(process_peak_bytes=s.peak[0], process_peak_anon_bytes=s.peak[0], process_peak_file_bytes=0,
                   allocated_current_bytes=torch.mps.current_allocated_memory(),
                   allocated_peak_bytes=max(s.peak[1], torch.mps.current_allocated_memory()),
                   reserved_current_bytes=torch.mps.driver_allocated_memory(),
                   reserved_peak_bytes=s.peak[0])
    else:
        _release_free_heap()
        rec["peak_reset_supported"] = _reset_process_peak()
        rec["present_before_bytes"] = _status().get("VmRSS", 0)

        def rss():
            st = _status()
            return (st.get("VmRSS", 0), st.get("RssAnon", 0), st.get("RssFile", 0) + st.get("RssShmem", 0))
        with _Sampler(rss) as s:
            workload()
        hwm = _status().get("VmHWM", s.peak[0])
        # The allocator figures from a second pass under the profiler, so that the profiler's own buffers stay
        # out of the process level.
        current, peak = _cpu_allocator_totals(workload)
        # The window starts at present_before: its peak is at least that (VmHWM is updated lazily by the kernel).
        rec.update(process_peak_bytes=max(hwm, s.peak[0], rec["present_before_bytes"]), process_peak_anon_bytes=s.peak[1],
                   process_peak_file_bytes=s.peak[2], allocated_current_bytes=current, allocated_peak_bytes=peak,
                   reserved_current_bytes=current, reserved_peak_bytes=peak)
    rec["allocated_current_bytes"] = min(rec["allocated_current_bytes"], rec["allocated_peak_bytes"])
    rec["reserved_current_bytes"] = min(rec["reserved_current_bytes"], rec["reserved_peak_bytes"])
    rec["reserved_peak_bytes"] = max(rec["reserved_peak_bytes"], rec["allocated_peak_bytes"])
    return rec


_SIDES = [16, 24, 32, 20, 40, 28]
_FRAMES = [1, 3, 5, 2]
PADS_PER_TILE = 5


def pad_memory_workload(tiles, seed, device, channels=16):
    """fourfold's tiled VAE-style pad workload (src/check/memory_workload.cpp): per tile, four causal
    pads each cropped back, a nearest 2x spatial upsample and one more pad, on bf16 tiles of cycling sizes."""
    def run():
        for t in range(tiles):
            shape = [1, channels, _FRAMES[t % 4], _SIDES[t % 6], _SIDES[(t + 2) % 6]]
            n = shape[1] * shape[2] * shape[3] * shape[4]
            x = torch.from_numpy(uniform_f64(seed + t, n, -1.0, 1.0)).reshape(shape).to(torch.bfloat16).to(device)
            for _ in range(PADS_PER_TILE - 1):
                T, H, W = x.shape[2], x.shape[3], x.shape[4]
                x = F.pad(x, [1, 1, 1, 1, 2, 0]).narrow(2, 2, T).narrow(3, 1, H).narrow(4, 1, W)
            up = F.interpolate(x, size=[x.shape[2], x.shape[3] * 2, x.shape[4] * 2], mode="nearest")
            F.pad(up, [1, 1, 1, 1, 2, 0])
    return run
