"""One PyTorch build's four records on fourfold's check workload (src/check/check_runner.cpp): the same
rows of the same suites on the same seeded inputs, the same memory workload and, with a model folder, the
same end-to-end figures (with a diffusers VAE folder, the same VAE workload), under a workload description equal to fourfold's, so compare accepts the pair."""

import sys
from dataclasses import dataclass, field

import torch

from . import end_to_end, op_calls, op_cases, vae_workload
from .error_metrics import compare_to_reference
from .memory import measure_memory, pad_memory_workload
from .op_cost import op_cost, rotation_copies, rotation_seed, selected_cases
from .probes import floor_us, measure_roofline, read_bandwidth_gb_per_s_or_none
from .records import correctness_row, memory_record, op_time_row, record_set, workload
from .manifest import torch_manifest
from .suites import load_suite
from .timing import Rotation, percentile, time_sample
from .device import synchronize

DEFAULT_SUITES = ["decode-linear", "prefill-linear", "softmax", "pad", "moe", "attention", "fp8", "decoder-fused",
                  "backward", "complex-matmul"]


@dataclass
class CheckOptions:
    device: str = "cpu"
    compile: bool = False
    kernels: str = "torch"   # "fourfold": the cases and models run on torch.ops.fourfold where it has the op
    suites: list = field(default_factory=lambda: list(DEFAULT_SUITES))
    repeats: int = 5
    rows_per_suite: int = 6
    reference_cap: float = 3e6
    seed: int = 0
    rotate_bytes: int = 128 << 20
    memory_tiles: int = 48
    e2e: end_to_end.Options = None
    vae: vae_workload.Options = None


@dataclass
class Skip:
    suite: str
    op: str
    shape: str
    dtype: str
    reason: str


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _compiled(fn):
    return torch.compile(fn, dynamic=False)


def run_rows(cases, o, device, roof, say):
    op_rows, correct_rows, skips = [], [], []
    for index, c in enumerate(cases, 1):
        say(f"[{index}/{len(cases)}] {c.op} {c.name} {c.shape} {c.dtype}")
        try:
            fn, args, variant = op_cases.build_call(c, o.seed, device, kernels=o.kernels)
        except op_calls.Unsupported as e:
            skips.append(Skip(c.suite, c.op, c.row_shape, c.dtype, str(e)))
            continue
        run = _compiled(fn) if o.compile else fn
        cost = op_cost(c)
        copies = rotation_copies(cost, o.rotate_bytes, 64)
        sets = [args] + [op_cases.build_call(c, rotation_seed(o.seed, i), device, kernels=o.kernels)[1] for i in range(1, copies)]
        try:
            out = _first(run(*args))   # also compiles, before any timing
            synchronize(device)
        except Exception as e:   # a build that has the op but not this case: counted, with its message
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            skips.append(Skip(c.suite, c.op, c.row_shape, c.dtype, f"{variant} raised: {first}"))
            continue
        rotation = Rotation([(lambda a=a: run(*a)) for a in sets])
        samples, calls = [], 1
        for _ in range(o.repeats):
            us, calls = time_sample(rotation, device)
            samples.append(us)
        del rotation, sets
        median = percentile(samples, 50)
        op_rows.append(op_time_row(c.suite, c.op, c.row_shape, c.dtype, variant + (" (compiled)" if o.compile else ""),
                                   1, calls, copies, samples, median, percentile(samples, 10), percentile(samples, 90),
                                   cost.bytes, cost.flops, 100.0 * floor_us(cost, roof) / median))
        ofn, oargs, _ = op_cases.build_call(c, o.seed, device, oracle=True)
        oracle = _first(ofn(*oargs))
        correct_rows.append(correctness_row(c.op, c.row_shape, c.dtype, compare_to_reference(out, oracle)))
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return op_rows, correct_rows, skips


def run_check(o, say=lambda m: print(m, file=sys.stderr)):
    from .device import resolve
    device, device_text = resolve(o.device)
    cases = selected_cases([load_suite(s) for s in o.suites], o.rows_per_suite, o.reference_cap)
    say("probing the device (read and write bandwidth, f32 GEMM rate)")
    before = {"read_bandwidth_gb_per_s": read_bandwidth_gb_per_s_or_none(device), "thread_latency_ns": None}
    roof = measure_roofline(device)
    shapes = [c.workload_line for c in cases] + [f"memory: tiled VAE-style pad workload, {o.memory_tiles} tiles"]
    dtypes = []
    for c in cases:
        if c.dtype not in dtypes:
            dtypes.append(c.dtype)
    op_rows, correct_rows, skips = run_rows(cases, o, device, roof, say)
    say("memory workload")
    memory = memory_record(measure_memory(pad_memory_workload(o.memory_tiles, o.seed, device), device))
    w = workload("op_suite", "+".join(o.suites), o.seed, shapes, o.repeats)
    throughput = model_memory = vae_throughput = vae_memory = None
    end_to_end_rows = []
    if o.e2e is not None:
        result = end_to_end.run(o.e2e, device, o.compile, say, o.kernels)
        w["context_lengths"] = list(o.e2e.decode_contexts)
        w["shapes"].append(result.shape_line)
        w["config_hash"] = result.config_hash
        for d in result.dtypes:
            if d not in dtypes:
                dtypes.append(d)
        throughput, model_memory = result.throughput, memory_record(result.memory)
        end_to_end_rows.append(result.logits)
        skips.extend(result.skips)
    if o.vae is not None:
        vae = vae_workload.run(o.vae, device, o.compile, say, o.kernels)
        w["shapes"].append("vae: " + vae.shape_line)
        vae_throughput, vae_memory = vae.throughput, memory_record(vae.memory)
        end_to_end_rows.extend([vae.decode, vae.round_trip])
    say("probing the device again")
    after = {"read_bandwidth_gb_per_s": read_bandwidth_gb_per_s_or_none(device), "thread_latency_ns": None}
    manifest = torch_manifest(device, device_text, w, dtypes, o.compile, before, after, o.kernels)
    manifest["skipped"] = [s.__dict__ for s in skips]
    op_time = {"peak_read_gb_per_s": roof.read_gbs, "peak_gflop_per_s": roof.gflops, "rows": op_rows}
    return record_set(manifest, throughput, op_time, {"ops": correct_rows, "end_to_end": end_to_end_rows}, memory,
                      model_memory, vae_throughput, vae_memory), skips
