"""What each case must move and compute at the least (fourfold's op_cost in src/check/op_bench.h), the work
measure of the reference cap (case_work), MoE group sizes (moe_group_sizes) and the rotation rule."""

import math
from dataclasses import dataclass

from .suites import FP8, dtype_size


@dataclass
class OpCost:
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    flops: float = 0.0
    bytes_made: float = 0.0   # input bytes made that the op need not read (embedding: the table's other rows)

    @property
    def bytes(self):
        return self.bytes_read + self.bytes_written


def moe_group_sizes(tokens, experts, top_k, routing):
    sizes = [0] * experts
    assignments = tokens * top_k
    if routing == "even":
        for e in range(experts):
            sizes[e] = assignments // experts + (1 if e < assignments % experts else 0)
    elif routing == "skewed":   # D'Hondt over weights 1 / (e + 1), at most `tokens` per expert, ties low
        for _ in range(assignments):
            best, best_q = -1, -1.0
            for e in range(experts):
                if sizes[e] >= tokens:
                    continue
                q = 1.0 / (e + 1) / (sizes[e] + 1)
                if q > best_q:
                    best_q, best = q, e
            sizes[best] += 1
    else:   # empty: every token picks the same top_k experts
        for j in range(top_k):
            sizes[j * experts // top_k] = tokens
    return sizes


def weight_scale_shape(p):
    n, k = p["n"], p["k"]
    return {"tensorwise": [1], "rowwise": [n, 1], "block_128x128": [(n + 127) // 128, (k + 127) // 128]}[p["recipe"]]


def scale_a_shape(p):
    m, k = p["m"], p["k"]
    return {"tensorwise": [1], "rowwise": [m, 1], "block_128x128": [m, (k + 127) // 128]}[p["recipe"]]


def scale_b_shape(p):
    n, k = p["n"], p["k"]
    return {"tensorwise": [1], "rowwise": [1, n], "block_128x128": [(k + 127) // 128, (n + 127) // 128]}[p["recipe"]]


def conv_out_shape(p):
    x, w = p["x"], p["weight"]
    return [x[0], w[0]] + [(x[2 + d] + 2 * p["padding"][d] - p["dilation"][d] * (w[2 + d] - 1) - 1) // p["stride"][d] + 1
                           for d in range(len(x) - 2)]


def padded_shape(p):
    out = list(p["shape"])
    for i, v in enumerate(p["pads"]):
        out[len(out) - 1 - i // 2] += v
    return out


def attended_pairs(a):
    L, S = a["q_len"], a["kv_len"]
    pairs = 0
    for i in range(L):
        keys = S
        if a["causal"] == "top_left":
            keys = min(S, i + 1)
        elif a["causal"] == "lower_right":
            keys = min(max(i + S - L + 1, 0), S)
        pairs += keys
    return float(pairs)


def op_cost(c):
    s = float(dtype_size(c.dtype))
    p = c.p
    if c.kind == "linear":
        m, n, k = p["m"], p["n"], p["k"]
        wdt = p["weight_dtype"] or c.dtype
        scales = 4.0 * math.prod(weight_scale_shape(p)) if wdt in FP8 else 0.0
        return OpCost((m * k + (n if p["bias"] else 0)) * s + n * k * dtype_size(wdt) + scales, m * n * s, 2.0 * m * n * k)
    if c.kind == "softmax":
        e = float(p["rows"] * p["cols"])
        return OpCost(e * s, e * s, 0.0)
    if c.kind == "pad":
        return OpCost(math.prod(p["shape"]) * s, math.prod(padded_shape(p)) * s, 0.0)
    if c.kind == "moe":
        sizes = moe_group_sizes(p["tokens"], p["experts"], p["top_k"], p["routing"])
        active = float(sum(1 for v in sizes if v > 0))
        rows, n, k = float(p["tokens"] * p["top_k"]), p["n"], p["k"]
        if c.op == "moe_experts":
            return OpCost((p["tokens"] * k + 3.0 * active * k * n) * s + 4.0 * (2.0 * rows + p["experts"]),
                          p["tokens"] * k * s, 6.0 * rows * n * k)
        return OpCost((rows * k + active * k * n) * s + 4.0 * p["experts"], rows * n * s, 2.0 * rows * n * k)
    if c.kind == "attention":
        q = float(p["batch"] * p["q_heads"] * p["q_len"] * p["head_dim"])
        kv = 2.0 * p["batch"] * p["kv_heads"] * p["kv_len"] * p["head_dim"]
        return OpCost((q + kv) * s, q * s, 2.0 * p["batch"] * p["q_heads"] * attended_pairs(p) * 2 * p["head_dim"])
    if c.kind == "fp8":
        m, n, k = p["m"], p["n"], p["k"]
        scales = math.prod(scale_a_shape(p)) + math.prod(scale_b_shape(p))
        return OpCost((m * k + n * k) * s + 4.0 * scales, m * n * float(dtype_size(p["out_dtype"])), 2.0 * m * n * k)
    if c.kind == "conv":
        out = math.prod(conv_out_shape(p))
        fan_in = math.prod(p["weight"]) / p["weight"][0]
        return OpCost((math.prod(p["x"]) + math.prod(p["weight"]) + (p["weight"][0] if p["bias"] else 0)) * s, out * s,
                      2.0 * out * fan_in)
    # row ops and products
    e = float(p["rows"] * p["cols"])
    m, n, k = float(p["m"]), float(p["n"]), float(p["k"])
    kind = p["kind"]
    if kind == "rms_norm":
        return OpCost((e + p["cols"]) * s, e * s, 0.0)
    if kind == "add_rms_norm":
        return OpCost((2 * e + p["cols"]) * s, 2 * e * s, 0.0)
    if kind == "rotary_embedding":
        return OpCost((e * p["heads"] + e) * s, e * p["heads"] * s, 0.0)
    if kind in ("silu_mul", "softmax_backward"):
        return OpCost(2 * e * s, e * s, 0.0)
    if kind == "constant_pad_nd_backward":
        return OpCost(e * s, e * s, 0.0)
    if kind == "linear_backward":
        return OpCost((m * n + m * k + n * k) * s, (m * k + n * k + n) * s, 4.0 * m * n * k)
    if kind == "complex_matmul":
        return OpCost((m * k + k * n) * s, m * n * s, 8.0 * m * n * k)
    if kind in ("log_softmax", "silu", "gelu"):
        return OpCost(e * s, e * s, 0.0)
    if kind in ("log_softmax_backward", "add", "mul"):
        return OpCost(2 * e * s, e * s, 0.0)
    if kind == "rms_norm_backward":
        return OpCost((2 * e + p["cols"]) * s, (e + p["cols"]) * s, 0.0)
    if kind == "scaled_dot_product_attention_backward":
        a = dict(q_len=p["rows"], kv_len=p["rows"], causal="top_left")
        q, kv = float(p["heads"] * p["rows"] * p["cols"]), float(p["kv_heads"] * p["rows"] * p["cols"])
        return OpCost((2 * q + 2 * kv) * s, (q + 2 * kv) * s, 10.0 * p["heads"] * attended_pairs(a) * p["cols"])
    if kind == "layer_norm":
        return OpCost((e + 2.0 * p["cols"]) * s, e * s, 0.0)
    if kind == "group_norm":
        return OpCost((math.prod(p["x"]) + 2.0 * p["x"][1]) * s, math.prod(p["x"]) * s, 0.0)
    if kind == "channel_rms_norm":
        return OpCost((math.prod(p["x"]) + p["x"][1]) * s, math.prod(p["x"]) * s, 0.0)
    if kind == "embedding":
        return OpCost(e * s + 8.0 * p["rows"], e * s, 0.0, max(p["n"] - p["rows"], 0) * float(p["cols"]) * s)
    if kind == "topk":
        return OpCost(e * s, p["rows"] * p["k"] * (s + 8.0), 0.0)
    if kind == "argmax":
        return OpCost(e * s, 8.0 * p["rows"], 0.0)
    if kind == "upsample_nearest":
        return OpCost(math.prod(p["x"]) * s, math.prod(p["x"][:2] + p["size"]) * s, 0.0)
    return OpCost()


def case_work(c):
    cost = op_cost(c)
    return cost.flops / 2.0 + (cost.bytes + cost.bytes_made) / dtype_size(c.dtype)


def rotation_copies(cost, rotate_bytes, max_copies=64):
    """How many input sets a row rotates over so that together they hold at least rotate_bytes."""
    if rotate_bytes == 0:
        return 1
    return int(min(max(math.ceil(rotate_bytes / max(cost.bytes_read + cost.bytes_made, 1.0)), 1), max(max_copies, 1)))


def rotation_seed(seed, copy):
    return seed + 1000 * copy


def selected_cases(suites_cases, rows_per_suite, reference_work_cap):
    """fourfold check's selection (check_runner.cpp selected_cases): per suite, the first rows under the cap;
    a suite with none contributes its smallest row."""
    out = []
    for cases in suites_cases:
        taken, smallest = 0, None
        for c in cases:
            if smallest is None or case_work(c) < case_work(smallest):
                smallest = c
            if rows_per_suite > 0 and taken >= rows_per_suite:
                continue
            if reference_work_cap > 0 and case_work(c) > reference_work_cap:
                continue
            out.append(c)
            taken += 1
        if taken == 0 and smallest is not None:
            out.append(smallest)
    return out
