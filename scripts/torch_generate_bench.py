"""transformers generate() on a model folder, unmodified and with fourfold_torch.optimize, in interleaved rounds:
prefill tokens/s (a generate of one token on the prompt), decode tokens/s (the extra time of N more tokens), and
where a step's time goes with the fourfold ops (their own time against the whole step: the rest is Python,
transformers and dispatch). Both models share the same weight tensors. With --compile, each also runs under
torch.compile (the model's forward, dynamic shapes: the article's setting), the time of its first generate
calls (compilation) on its own line. Peak RSS: per configuration, the process's peak while its rounds ran (reset
before each, Linux's clear_refs; the weights the configurations share count in each), and the process's over all.

  build/pyenv/bin/python scripts/torch_generate_bench.py --model DIR [--threads 2] [--prompt 128] [--new 32]
      [--compile] [--configs transformers,optimize,...] [--kernels probe|fourfold] [--fourfold build/release/fourfold]
      # --fourfold: also `fourfold run` on the folder in each round
"""
import argparse
import copy
import re
import resource
import statistics
import subprocess
import time

import torch


def reset_peak_rss():
    """Linux: the process's peak RSS (VmHWM) starts again from its current RSS (proc(5), clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def timed_generate(model, ids, new):
    start = time.perf_counter()
    model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False)
    return time.perf_counter() - start


def measure(model, ids, new):
    prefill = timed_generate(model, ids, 1)
    total = timed_generate(model, ids, 1 + new)
    return ids.shape[1] / prefill, new / (total - prefill)


def fourfold_run(cli, a):
    """`fourfold run` on the same folder, prompt length and steps: (prefill, decode) tokens/s."""
    out = subprocess.run([cli, "run", "--model", a.model, "--prompt-tokens", str(a.prompt), "--gen", str(a.new + 1),
                          "--threads", str(a.threads), "--ignore-eos", "--step-probe", "0"],
                         capture_output=True, text=True, check=True).stdout
    rate = lambda phase: float(re.search(rf"^{phase}: .* = ([0-9.]+) tokens/s", out, re.M).group(1))
    return rate("prefill"), rate("decode")


def fourfold_share(model, ids):
    """Per decode step: (step ms, ms inside fourfold:: ops), from the profiler over 8 steps."""
    from torch.profiler import ProfilerActivity, profile
    model.generate(ids, max_new_tokens=2, do_sample=False)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        model.generate(ids[:, :1], max_new_tokens=9, min_new_tokens=9, do_sample=False)
        elapsed = time.perf_counter() - start
    ops = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key.startswith("fourfold::")) / 1e3
    return 1e3 * elapsed / 9, ops / 9


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--new", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--fourfold", help="the fourfold binary: `fourfold run` joins each round")
    p.add_argument("--compile", action="store_true", help="also transformers and optimize under torch.compile")
    p.add_argument("--configs", help="a comma-separated subset of the configurations")
    p.add_argument("--kernels", default="probe", help="optimize's kernels: probe (default) or fourfold")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    from transformers import AutoModelForCausalLM
    import fourfold_torch
    dtype = getattr(torch, a.dtype)
    plain = AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype).eval()
    shared = {id(t): t for t in list(plain.parameters()) + list(plain.buffers())}
    # A fresh memo per copy: deepcopy records each copied object in it, and a memo reused would hand back the
    # first copy of `plain` in place of a new one.
    fast = fourfold_torch.optimize(copy.deepcopy(plain, dict(shared)), kernels=a.kernels)
    for line in fast.fourfold_choices:
        print(f"optimize chose: {line}", flush=True)
    models = {"transformers": plain, "optimize": fast}
    if a.compile:
        for name in ("transformers", "optimize"):
            compiled = copy.deepcopy(models[name], dict(shared))
            compiled.forward = torch.compile(compiled.forward, dynamic=True)
            models[name + "+compile"] = compiled
    if a.configs:
        models = {k: v for k, v in models.items() if k in a.configs.split(",")}
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, plain.config.vocab_size, (1, a.prompt), generator=g)
    results = {name: [] for name in models}
    if a.fourfold:
        results["fourfold run"] = []
    warmup = {}
    with torch.inference_mode():
        for name, model in models.items():   # warm-up: for the compiled ones, the compilation of both phases
            start = time.perf_counter()
            timed_generate(model, ids, 1)
            timed_generate(model, ids, 3)
            warmup[name] = time.perf_counter() - start
        peaks = {name: 0.0 for name in models}
        for r in range(a.rounds):
            for name, model in models.items():
                resettable = reset_peak_rss()
                results[name].append(measure(model, ids, a.new))
                if resettable:
                    peaks[name] = max(peaks[name], peak_rss_gib())
                pf, dc = results[name][-1]
                print(f"round {r + 1} {name:21s} prefill {pf:8.1f} tok/s  decode {dc:6.2f} tok/s", flush=True)
            if a.fourfold:
                results["fourfold run"].append(fourfold_run(a.fourfold, a))
                pf, dc = results["fourfold run"][-1]
                print(f"round {r + 1} fourfold run          prefill {pf:8.1f} tok/s  decode {dc:6.2f} tok/s", flush=True)
        step, ops = fourfold_share(fast, ids) if "optimize" in models else (0.0, 0.0)
    print(f"{a.model}: {a.dtype}, {a.threads} threads, prompt {a.prompt}, {a.new} decode steps, {a.rounds} rounds")
    for name, rows in results.items():
        pf = [x for x, _ in rows]
        dc = [y for _, y in rows]
        print(f"{name:21s} prefill median {statistics.median(pf):8.1f} ({min(pf):.1f}-{max(pf):.1f})  "
              f"decode median {statistics.median(dc):6.2f} ({min(dc):.2f}-{max(dc):.2f}) tok/s")
    for name, seconds in warmup.items():
        print(f"{name:21s} first generate calls (prompt, then 3 tokens): {seconds:.1f} s"
              + (" (the compilation)" if name.endswith("+compile") else ""))
    for name, peak in peaks.items():
        print(f"{name:21s} peak RSS while it ran: {peak:.2f} GiB (the shared weights included)")
    print(f"peak RSS of the process (every configuration above): "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
    print(f"optimize decode step (short context): {step:.1f} ms, of which fourfold ops {ops:.1f} ms; "
          f"Python, transformers and dispatch {step - ops:.1f} ms")


if __name__ == "__main__":
    main()
