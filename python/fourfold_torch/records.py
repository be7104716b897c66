"""The records in fourfold's JSON form (schema fourfold.records/1, docs/records_schema.md), field for field
as src/check/records.cpp writes them, so `fourfold compare` reads them unchanged."""

import json
import math
import os

SCHEMA = "fourfold.records/1"


def real(v):
    """JSON has no infinity or NaN: the fields that may hold them spell them as strings."""
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def workload(kind, name, seed, shapes, repeats, context_lengths=(), config_hash="", preset="", parameters=()):
    return {"kind": kind, "name": name, "config_hash": config_hash, "preset": preset, "seed": seed,
            "shapes": list(shapes), "context_lengths": list(context_lengths), "repeats": repeats,
            "parameters": list(parameters)}


def op_time_row(suite, op, shape, dtype, variant, warmup_calls, calls_per_sample, input_copies, samples_us,
                median_us, p10_us, p90_us, bytes_, flops, roofline_percent):
    return {"suite": suite, "op": op, "shape": shape, "dtype": dtype, "tier": "pytorch", "variant": variant,
            "warmup_calls": warmup_calls, "calls_per_sample": calls_per_sample, "input_copies": input_copies,
            "median_us": real(median_us), "p10_us": real(p10_us), "p90_us": real(p90_us),
            "samples_us": [real(s) for s in samples_us], "bytes": real(bytes_), "flops": real(flops),
            "gb_per_s": real(bytes_ / (median_us * 1e-6) * 1e-9), "gflop_per_s": real(flops / (median_us * 1e-6) * 1e-9),
            "roofline_percent": real(roofline_percent)}


def correctness_row(op, shape, dtype, stats):
    return {"op": op, "shape": shape, "dtype": dtype, "tier": "pytorch", "count": stats.count,
            "max_abs": real(stats.max_abs), "max_rel": real(stats.max_rel), "rel_floor": real(stats.rel_floor),
            "max_ulp": stats.max_ulp, "psnr_db": real(stats.psnr_db), "nan_mismatches": stats.nan_mismatches,
            "exact": bool(stats.exact)}


def memory_record(m):
    out = {k: m[k] for k in ("process_source", "allocated_current_bytes", "allocated_peak_bytes",
                             "reserved_current_bytes", "reserved_peak_bytes", "process_peak_bytes",
                             "process_peak_anon_bytes", "process_peak_file_bytes", "peak_reset_supported",
                             "present_before_bytes", "mapped_weights_bytes")}
    out["reserved_before_bytes"] = m.get("reserved_before_bytes", 0)
    # PyTorch's allocators do not say which reserved bytes were never touched: 0, as fourfold reads it.
    out["reserved_untouched_bytes"] = m.get("reserved_untouched_bytes", 0)
    # The two growths over the workload (DESIGN 2.4): what the allocator held before cancels out.
    out["outside_allocator_bytes"] = ((m["process_peak_bytes"] - m["present_before_bytes"])
                                      - (m["reserved_peak_bytes"] - out["reserved_before_bytes"])
                                      + out["reserved_untouched_bytes"])
    return out


def record_set(manifest, throughput=None, op_time=None, correctness=None, memory=None, model_memory=None,
               vae_throughput=None, vae_memory=None):
    return {"schema": SCHEMA, "kind": "record_set", "manifest": manifest, "throughput": throughput,
            "op_time": op_time, "correctness": correctness, "memory": memory, "model_memory": model_memory,
            "vae_throughput": vae_throughput, "vae_memory": vae_memory}


def write(path, doc):
    """Writes atomically (a reader never sees half a file)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)
