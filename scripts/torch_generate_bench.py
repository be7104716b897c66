"""transformers generate() on a model folder, unmodified and with fourfold_torch.optimize, in interleaved rounds:
prefill tokens/s (a generate of one token on the prompt), decode tokens/s (the extra time of N more tokens), and
where a step's time goes with the fourfold ops (their own time against the whole step: the rest is Python,
transformers and dispatch). Both models share the same weight tensors.

  build/pyenv/bin/python scripts/torch_generate_bench.py --model DIR [--threads 2] [--prompt 128] [--new 32]
      [--fourfold build/release/fourfold]   # also `fourfold run` on the folder in each round
"""
import argparse
import copy
import re
import statistics
import subprocess
import time

import torch


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
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    from transformers import AutoModelForCausalLM
    import fourfold_torch
    dtype = getattr(torch, a.dtype)
    plain = AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype).eval()
    shared = {id(t): t for t in list(plain.parameters()) + list(plain.buffers())}
    fast = fourfold_torch.optimize(copy.deepcopy(plain, shared))
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, plain.config.vocab_size, (1, a.prompt), generator=g)
    results = {"transformers": [], "optimize": []}
    if a.fourfold:
        results["fourfold run"] = []
    with torch.inference_mode():
        for name, model in (("transformers", plain), ("optimize", fast)):   # warm-up
            timed_generate(model, ids, 2)
        for r in range(a.rounds):
            for name, model in (("transformers", plain), ("optimize", fast)):
                results[name].append(measure(model, ids, a.new))
                pf, dc = results[name][-1]
                print(f"round {r + 1} {name:12s} prefill {pf:8.1f} tok/s  decode {dc:6.2f} tok/s", flush=True)
            if a.fourfold:
                results["fourfold run"].append(fourfold_run(a.fourfold, a))
                pf, dc = results["fourfold run"][-1]
                print(f"round {r + 1} fourfold run prefill {pf:8.1f} tok/s  decode {dc:6.2f} tok/s", flush=True)
        step, ops = fourfold_share(fast, ids)
    print(f"{a.model}: {a.dtype}, {a.threads} threads, prompt {a.prompt}, {a.new} decode steps, {a.rounds} rounds")
    for name, rows in results.items():
        pf = [x for x, _ in rows]
        dc = [y for _, y in rows]
        print(f"{name:12s} prefill median {statistics.median(pf):8.1f} ({min(pf):.1f}-{max(pf):.1f})  "
              f"decode median {statistics.median(dc):6.2f} ({min(dc):.2f}-{max(dc):.2f}) tok/s")
    print(f"optimize decode step (short context): {step:.1f} ms, of which fourfold ops {ops:.1f} ms; "
          f"Python, transformers and dispatch {step - ops:.1f} ms")


if __name__ == "__main__":
    main()
