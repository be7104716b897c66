"""The op-time suites (data/suites/*.json) read into the same cases, names and shape strings as fourfold's
src/check/suites.cpp, so that a PyTorch record and a fourfold record of one suite describe one workload."""

import json
import os
from dataclasses import dataclass, field

# dtype names: PyTorch spelling first (what records use), then fourfold's short name.
DTYPES = {
    "float32": ("f32", 4), "float16": ("f16", 2), "bfloat16": ("bf16", 2), "float8_e4m3fn": ("fp8", 1),
    "float8_e5m2": ("e5m2", 1), "complex64": ("c64", 8), "int32": ("i32", 4), "int64": ("i64", 8),
    "bool": ("bool", 1), "float64": ("f64", 8),
}
_ALIASES = {"fp8_e4m3fn": "float8_e4m3fn", "e4m3fn": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
            "fp8_e5m2": "float8_e5m2", "float": "float32", "half": "float16"}
FP8 = ("float8_e4m3fn", "float8_e5m2")

ROW_OPS = {  # name in suite files (the op list's, but for two calls) -> the op it dispatches as
    "rms_norm": "rms_norm", "add_rms_norm": "rms_norm", "rotary_embedding": "rotary_embedding",
    "silu_mul": "silu_mul", "softmax_backward": "softmax_backward",
    "constant_pad_nd_backward": "constant_pad_nd_backward", "linear_backward": "linear_backward",
    "complex_matmul": "matmul", "log_softmax": "log_softmax", "log_softmax_backward": "log_softmax_backward",
    "rms_norm_backward": "rms_norm_backward",
    "scaled_dot_product_attention_backward": "scaled_dot_product_attention_backward",
    "layer_norm": "layer_norm", "group_norm": "group_norm", "channel_rms_norm": "channel_rms_norm",
    "silu": "silu", "gelu": "gelu", "add": "add", "mul": "mul", "embedding": "embedding", "topk": "topk",
    "argmax": "argmax", "upsample_nearest": "upsample_nearest",
}

# The fields a row op's case must give (suites.cpp row_op_fields); the others default to 1.
_ROW_OP_FIELDS = {
    "linear_backward": ("m", "n", "k"), "complex_matmul": ("m", "n", "k"),
    "scaled_dot_product_attention_backward": ("rows", "cols", "heads", "kv_heads"),
    "embedding": ("rows", "cols", "n"), "topk": ("rows", "cols", "k"), "channel_rms_norm": ("x",),
    "group_norm": ("x", "groups"), "upsample_nearest": ("x", "size"),
}


class SuiteError(ValueError):
    """A bad suite file: names the file and the field, as fourfold's FormatError does."""


def dtype_size(name):
    return DTYPES[name][1]


def canonical_dtype(name):
    if name in DTYPES:
        return name
    for full, (short, _) in DTYPES.items():
        if name == short:
            return full
    if name in _ALIASES:
        return _ALIASES[name]
    raise KeyError(name)


@dataclass
class Case:
    suite: str
    op: str        # the op's name in fourfold's op list
    name: str      # where the shape comes from
    shape: str     # the inputs in short
    dtype: str     # PyTorch spelling
    kind: str      # linear, softmax, pad, moe, attention, fp8, row_op
    p: dict = field(default_factory=dict)

    @property
    def row_shape(self):
        """The op-time and correctness rows' shape field: name and shape."""
        return f"{self.name} {self.shape}"

    @property
    def workload_line(self):
        return f"{self.suite}: {self.name} {self.shape} {self.dtype}"


class _Reader:
    def __init__(self, source):
        self.source = source

    def bad(self, path, expected, found):
        text = found if isinstance(found, str) and found.startswith("none") else json.dumps(found)
        if len(text) > 60:
            text = text[:57] + "..."
        raise SuiteError(f"suite file '{self.source}': field '{path}': expected {expected}, found {text}")

    def need(self, obj, path, key):
        if not isinstance(obj, dict):
            self.bad(path or "(top level)", "an object", obj)
        if key not in obj:
            self.bad(f"{path}.{key}" if path else key, "a value", "none (missing)")
        return obj[key]

    def integer(self, v, path, minimum=1):
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            self.bad(path, "a positive integer" if minimum == 1 else f"an integer >= {minimum}", v)
        return v

    def integers(self, v, path, minimum=1):
        if not isinstance(v, list) or not v:
            self.bad(path, "a non-empty array", v)
        return [self.integer(x, f"{path}[{i}]", minimum) for i, x in enumerate(v)]

    def string(self, v, path):
        if not isinstance(v, str):
            self.bad(path, "a string", v)
        return v

    def dtype(self, v, path):
        try:
            return canonical_dtype(self.string(v, path))
        except KeyError:
            self.bad(path, "a dtype name (f32, bf16, f16, float8_e4m3fn, ...)", v)

    def choice(self, v, path, options):
        if v not in options:
            self.bad(path, "one of " + ", ".join(options), v)
        return v

    def array(self, v, path):
        if not isinstance(v, list) or not v:
            self.bad(path, "a non-empty array", v)
        return v


def _describe(entry):
    s = entry.get("model", "")
    proj = entry.get("projection", "")
    if proj:
        s += (" " if s else "") + proj
    return s


def _dims(v):
    return ",".join(str(x) for x in v)


def _linear(r, j, add, dtypes):
    ms = r.integers(r.need(j, "", "m"), "m")
    biases = r.need(j, "", "bias")
    weight_only = []
    for i, w in enumerate(j.get("weight_only", [])):
        path = f"weight_only[{i}]"
        weight_only.append((r.dtype(r.need(w, path, "x"), path + ".x"), r.dtype(r.need(w, path, "weight"), path + ".weight"),
                            r.choice(w.get("recipe", "tensorwise"), path + ".recipe", ("tensorwise", "rowwise", "block_128x128")),
                            r.integers(r.need(w, path, "m"), path + ".m")))
    for i, s in enumerate(r.array(r.need(j, "", "shapes"), "shapes")):
        path = f"shapes[{i}]"
        n = r.integer(r.need(s, path, "n"), path + ".n")
        k = r.integer(r.need(s, path, "k"), path + ".k")
        for dt in dtypes:
            for m in ms:
                for bias in biases:
                    add("linear", _describe(s), f"x[{m},{k}] w[{n},{k}]" + (" +bias" if bias else ""), dt,
                        dict(m=m, n=n, k=k, bias=bias, weight_dtype=None, recipe="tensorwise"))
        for x_dt, w_dt, recipe, wms in weight_only:
            for m in wms:
                add("linear", _describe(s), f"x[{m},{k}] w[{n},{k}] {w_dt}" + (f" {recipe}" if w_dt in FP8 else ""),
                    x_dt, dict(m=m, n=n, k=k, bias=False, weight_dtype=w_dt, recipe=recipe))


def _softmax(r, j, add, dtypes):
    rows = r.integers(r.need(j, "", "rows"), "rows")
    dim = r.integer(j["dim"], "dim", -2) if "dim" in j else -1
    for i, v in enumerate(r.array(r.need(j, "", "vocabularies"), "vocabularies")):
        cols = r.integer(r.need(v, f"vocabularies[{i}]", "size"), f"vocabularies[{i}].size")
        models = v.get("models", [])
        name = f"vocab {cols} ({', '.join(models)})" if models else f"vocab {cols}"
        for dt in dtypes:
            for n_rows in rows:
                add("softmax", name, f"x[{n_rows},{cols}] dim {dim}", dt, dict(rows=n_rows, cols=cols, dim=dim))


def _pad(r, j, add, dtypes):
    value = j.get("value", 0.0)
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        name = r.string(r.need(e, path, "name"), path + ".name")
        shape = r.integers(r.need(e, path, "shape"), path + ".shape")
        pads = r.need(e, path, "pads")
        if not isinstance(pads, list) or len(pads) % 2 or len(pads) > 2 * len(shape):
            r.bad(path + ".pads", f"(before, after) pairs, at most {2 * len(shape)} entries for a rank-{len(shape)} shape", pads)
        layout = r.choice(e.get("layout", "contiguous"), path + ".layout", ("contiguous", "channels_last", "sliced"))
        for dt in dtypes:
            add("pad", name, f"x[{_dims(shape)}] pads ({_dims(pads)})" + ("" if layout == "contiguous" else " " + layout),
                dt, dict(shape=shape, pads=pads, layout=layout, value=float(value)))


def _moe(r, j, add, dtypes):
    model = j.get("model", "")
    experts = r.integer(r.need(j, "", "experts"), "experts")
    top_k = r.integer(r.need(j, "", "top_k"), "top_k")
    tokens = r.integers(r.need(j, "", "tokens"), "tokens")
    routings = [r.choice(x, f"routing[{i}]", ("even", "skewed", "empty"))
                for i, x in enumerate(r.array(r.need(j, "", "routing"), "routing"))]
    for i, pj in enumerate(r.array(r.need(j, "", "projections"), "projections")):
        path = f"projections[{i}]"
        name = r.string(r.need(pj, path, "name"), path + ".name")
        op = r.choice(pj.get("op", "grouped_mm"), path + ".op", ("grouped_mm", "moe_experts"))
        n = r.integer(r.need(pj, path, "n"), path + ".n")
        k = r.integer(r.need(pj, path, "k"), path + ".k")
        for dt in dtypes:
            for t in tokens:
                for routing in routings:
                    label = f"{model}{' ' if model else ''}{name} {t} tok {routing}"
                    shape = (f"x[{t},{k}] gate,up[{experts},{n},{k}] down[{experts},{k},{n}] top{top_k}" if op == "moe_experts"
                             else f"a[{t * top_k},{k}] b[{experts},{k},{n}] top{top_k}")
                    add("moe", label, shape, dt, dict(tokens=t, experts=experts, top_k=top_k, n=n, k=k, routing=routing),
                        op=op)


def _attention(r, j, add, dtypes):
    base = dict(batch=r.integer(j["batch"], "batch") if "batch" in j else 1,
                q_heads=r.integer(r.need(j, "", "q_heads"), "q_heads"),
                kv_heads=r.integer(r.need(j, "", "kv_heads"), "kv_heads"),
                head_dim=r.integer(r.need(j, "", "head_dim"), "head_dim"))
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        a = dict(base, q_len=r.integer(r.need(e, path, "q_len"), path + ".q_len"),
                 kv_len=r.integer(r.need(e, path, "kv_len"), path + ".kv_len"),
                 causal=r.choice(e.get("causal", "none"), path + ".causal", ("none", "top_left", "lower_right")))
        suffix = {"none": "", "top_left": " causal", "lower_right": " causal-lr"}[a["causal"]]
        for dt in dtypes:
            add("attention", f"{r.string(r.need(e, path, 'name'), path + '.name')} {a['kv_len']}",
                f"q[{a['batch']},{a['q_heads']},{a['q_len']},{a['head_dim']}] "
                f"kv[{a['batch']},{a['kv_heads']},{a['kv_len']},{a['head_dim']}]{suffix}", dt, a)


def _fp8(r, j, add, dtypes):
    out = r.dtype(j["out_dtype"], "out_dtype") if "out_dtype" in j else "bfloat16"
    recipes = [r.choice(x, f"recipes[{i}]", ("tensorwise", "rowwise", "block_128x128"))
               for i, x in enumerate(r.array(r.need(j, "", "recipes"), "recipes"))]
    default_m = r.integers(r.need(j, "", "m"), "m")
    for i, s in enumerate(r.array(r.need(j, "", "shapes"), "shapes")):
        path = f"shapes[{i}]"
        n = r.integer(r.need(s, path, "n"), path + ".n")
        k = r.integer(r.need(s, path, "k"), path + ".k")
        ms = r.integers(s["m"], path + ".m") if "m" in s else default_m
        for dt in dtypes:
            for m in ms:
                for recipe in recipes:
                    add("fp8", _describe(s), f"a[{m},{k}] w[{n},{k}] {recipe}", dt,
                        dict(m=m, n=n, k=k, recipe=recipe, out_dtype=out))


def _row_op_shape(p):
    kind, rows, cols = p["kind"], p["rows"], p["cols"]
    if kind == "rotary_embedding":
        return f"x[{rows},{p['heads']},{cols}] cos,sin[{rows},1,{cols // 2}]"
    if kind == "constant_pad_nd_backward":
        return f"grad[{rows + 2},{cols + 2}] pads (-1,-1,-1,-1)"
    if kind == "linear_backward":
        return f"g[{p['m']},{p['n']}] x[{p['m']},{p['k']}] w[{p['n']},{p['k']}]"
    if kind == "complex_matmul":
        return f"a[{p['m']},{p['k']}] b[{p['k']},{p['n']}]"
    if kind == "scaled_dot_product_attention_backward":
        return f"q[1,{p['heads']},{rows},{cols}] kv[1,{p['kv_heads']},{rows},{cols}] causal"
    if kind == "embedding":
        return f"w[{p['n']},{cols}] idx[{rows}]"
    if kind == "topk":
        return f"x[{rows},{cols}] k {p['k']}"
    if kind == "gelu":
        return f"x[{rows},{cols}] tanh"
    if kind == "channel_rms_norm":
        return f"x[{_dims(p['x'])}] gamma[{p['x'][1]}] +silu"
    if kind == "group_norm":
        return f"x[{_dims(p['x'])}] groups {p['groups']}"
    if kind == "upsample_nearest":
        return f"x[{_dims(p['x'])}] -> [{_dims(p['size'])}]"
    return f"x[{rows},{cols}]"


def _check_row_op(r, e, path, p):
    kind = p["kind"]
    if kind == "scaled_dot_product_attention_backward" and p["heads"] % p["kv_heads"]:
        r.bad(path + ".kv_heads", f"a divisor of heads={p['heads']}", e["kv_heads"])
    if kind == "topk" and p["k"] > p["cols"]:
        r.bad(path + ".k", f"at most cols={p['cols']}", e["k"])
    if kind in ("channel_rms_norm", "group_norm"):
        if len(p["x"]) < 2:
            r.bad(path + ".x", "[N, C, *] (at least 2 dims)", e["x"])
        if kind == "group_norm" and p["x"][1] % p["groups"]:
            r.bad(path + ".groups", f"a divisor of C={p['x'][1]}", e["groups"])
    if kind == "upsample_nearest":
        if not 3 <= len(p["x"]) <= 5:
            r.bad(path + ".x", "[N, C, *spatial] with 1 to 3 spatial dims", e["x"])
        if len(p["size"]) + 2 != len(p["x"]):
            r.bad(path + ".size", f"{len(p['x']) - 2} values, one per spatial dim", e["size"])


def _row_ops(r, j, add, dtypes):
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        kind = r.choice(r.need(e, path, "op"), path + ".op", tuple(ROW_OPS))
        name = r.string(r.need(e, path, "name"), path + ".name")
        for key in _ROW_OP_FIELDS.get(kind, ("rows", "cols")):
            r.need(e, path, key)
        p = {key: r.integer(e[key], f"{path}.{key}") if key in e else 1
             for key in ("rows", "cols", "heads", "m", "n", "k", "groups")}
        p["kv_heads"] = r.integer(e["kv_heads"], path + ".kv_heads") if "kv_heads" in e else p["heads"]
        p["x"] = r.integers(e["x"], path + ".x") if "x" in e else []
        p["size"] = r.integers(e["size"], path + ".size") if "size" in e else []
        p["kind"] = kind
        _check_row_op(r, e, path, p)
        shape = _row_op_shape(p)
        for dt in dtypes:
            add("row_op", f"{kind} {name}", shape, dt, p, op=ROW_OPS[kind])


def _conv(r, j, add, dtypes):
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        name = r.string(r.need(e, path, "name"), path + ".name")
        x = r.integers(r.need(e, path, "x"), path + ".x")
        if len(x) not in (4, 5):
            r.bad(path + ".x", "[N, C, H, W] (conv2d) or [N, C, T, H, W] (conv3d)", x)
        w = r.integers(r.need(e, path, "weight"), path + ".weight")
        spatial = len(x) - 2

        def param(key, minimum, fallback):
            v = r.integers(e[key], f"{path}.{key}", minimum) if key in e else [fallback]
            v = v * spatial if len(v) == 1 else v
            if len(v) != spatial:
                r.bad(f"{path}.{key}", f"1 or {spatial} values", e[key])
            return v
        p = dict(x=x, weight=w, stride=param("stride", 1, 1), padding=param("padding", 0, 0),
                 dilation=param("dilation", 1, 1), groups=r.integer(e["groups"], path + ".groups") if "groups" in e else 1,
                 bias=e.get("bias", True))
        shape = (f"x[{_dims(x)}] w[{_dims(w)}]" + (" +bias" if p["bias"] else "")
                 + ("" if p["stride"] == [1] * spatial else " stride " + _dims(p["stride"]))
                 + ("" if p["padding"] == [0] * spatial else " pad " + _dims(p["padding"]))
                 + ("" if p["dilation"] == [1] * spatial else " dil " + _dims(p["dilation"]))
                 + ("" if p["groups"] == 1 else f" groups {p['groups']}"))
        for dt in dtypes:
            add("conv", name, shape, dt, p, op="conv2d" if len(x) == 4 else "conv3d")


_PARSERS = {"linear": _linear, "softmax": _softmax, "constant_pad_nd": _pad, "grouped_mm": _moe,
            "scaled_dot_product_attention": _attention, "scaled_mm": _fp8, "row_ops": _row_ops, "conv": _conv}


def parse_suite(text, source):
    r = _Reader(source)
    try:
        j = json.loads(text)
    except json.JSONDecodeError as e:
        raise SuiteError(f"suite file '{source}': not valid JSON: {e}") from None
    name = r.string(r.need(j, "", "suite"), "suite")
    op = r.string(r.need(j, "", "op"), "op")
    dtypes_json = r.array(r.need(j, "", "dtypes"), "dtypes")
    dtypes = [r.dtype(d, f"dtypes[{i}]") for i, d in enumerate(dtypes_json)]
    if op not in _PARSERS:
        r.bad("op", "one of " + ", ".join(_PARSERS), op)
    cases = []

    def add(kind, label, shape, dt, params, op=None):
        cases.append(Case(name, op or j["op"], label, shape, dt, kind, params))

    _PARSERS[op](r, j, add, dtypes)
    return name, cases


def default_suites_dir():
    env = os.environ.get("FOURFOLD_SUITES_DIR")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "data", "suites"), os.path.join(here, "data", "suites")):
        if os.path.isdir(candidate):
            return os.path.normpath(candidate)
    raise SuiteError("suites: directory: expected data/suites of the fourfold checkout or $FOURFOLD_SUITES_DIR, "
                     f"found none next to {here}")


def list_suites(directory):
    return sorted(f[:-5] for f in os.listdir(directory) if f.endswith(".json"))


def load_suite(name, directory=None):
    directory = directory or default_suites_dir()
    names = list_suites(directory)
    if name not in names:
        raise SuiteError(f"check: suite: expected one of {', '.join(names)}, found '{name}'")
    path = os.path.join(directory, name + ".json")
    with open(path, encoding="utf-8") as f:
        suite_name, cases = parse_suite(f.read(), path)
    if suite_name != name:
        raise SuiteError(f"suite file '{path}': field 'suite': expected \"{name}\" (the file's name), found \"{suite_name}\"")
    return cases
