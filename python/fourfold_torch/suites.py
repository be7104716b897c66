"""The op-time suites (data/suites/*.json) read into the same cases, names and shape strings as fourfold's
src/check/suites.cpp, so that a PyTorch record and a fourfold record of one suite describe one workload.
What is particular to an op (its fields, shape text, suite format) is in its module in op_cases; this file
reads the shared parts: the file, dtypes, a row_ops suite's fields."""

import json
import os
from dataclasses import dataclass, field

from . import op_cases

# dtype names: PyTorch spelling first (what records use), then fourfold's short name.
DTYPES = {
    "float32": ("f32", 4), "float16": ("f16", 2), "bfloat16": ("bf16", 2), "float8_e4m3fn": ("fp8", 1),
    "float8_e5m2": ("e5m2", 1), "complex64": ("c64", 8), "int32": ("i32", 4), "int64": ("i64", 8),
    "bool": ("bool", 1), "float64": ("f64", 8),
    "uint8": ("u8", 1), "float4_e2m1fn_x2": ("fp4x2", 1), "float8_e8m0fnu": ("e8m0", 1),
}
_ALIASES = {"fp8_e4m3fn": "float8_e4m3fn", "e4m3fn": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
            "fp8_e5m2": "float8_e5m2", "float": "float32", "half": "float16"}
FP8 = ("float8_e4m3fn", "float8_e5m2")
FP4 = ("float4_e2m1fn_x2",)


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
    case_op: str   # its module in op_cases (the suite's name for the op): builds the call, counts the cost
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
        """The C++ reader's wording (model/formats/checked_json.h): the value's JSON type and its compact text."""
        if isinstance(found, str) and found.startswith("none"):
            text = found
        else:
            kind = ("null" if found is None else "object" if isinstance(found, dict) else
                    "array" if isinstance(found, list) else "string" if isinstance(found, str) else
                    "boolean" if isinstance(found, bool) else "number")
            text = json.dumps(found, separators=(",", ":"), ensure_ascii=False)
            if len(text) > 80:
                text = text[:77] + "..."
            text = f"{kind} {text}"
        raise SuiteError(f"suite file '{self.source}': field '{path or '(document)'}': expected {expected}, found {text}")

    def need(self, obj, path, key):
        if not isinstance(obj, dict):
            self.bad(path, "an object", obj)
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


def describe(entry):
    """A shape's name from its model and projection (linear and scaled_mm suites)."""
    s = entry.get("model", "")
    proj = entry.get("projection", "")
    if proj:
        s += (" " if s else "") + proj
    return s


def dims(v):
    return ",".join(str(x) for x in v)


def need_channels(r, e, path, p):
    """A row op over x [N, C, *] (the channel norms)."""
    if len(p["x"]) < 2:
        r.bad(path + ".x", "[N, C, *] (at least 2 dims)", e["x"])


def _row_ops(r, j, add, dtypes):
    ops = op_cases.row_ops()
    for i, e in enumerate(r.array(r.need(j, "", "cases"), "cases")):
        path = f"cases[{i}]"
        op = r.choice(r.need(e, path, "op"), path + ".op", tuple(ops))
        name = r.string(r.need(e, path, "name"), path + ".name")
        case = ops[op]
        for key in case.FIELDS:
            r.need(e, path, key)
        p = {key: r.integer(e[key], f"{path}.{key}") if key in e else 1
             for key in ("rows", "cols", "heads", "m", "n", "k", "groups")}
        p["kv_heads"] = r.integer(e["kv_heads"], path + ".kv_heads") if "kv_heads" in e else p["heads"]
        p["x"] = r.integers(e["x"], path + ".x") if "x" in e else []
        p["size"] = r.integers(e["size"], path + ".size") if "size" in e else []
        if hasattr(case, "check"):
            case.check(r, e, path, p)
        shape = case.shape(p)
        for dt in dtypes:
            add(op, f"{op} {name}", shape, dt, p)


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
    readers = {"row_ops": _row_ops, **{suite: m.read for suite, m in op_cases.suite_readers().items()}}
    if op not in readers:
        r.bad("op", "one of " + ", ".join(sorted(readers)), op)
    cases = []

    def add(case_op, label, shape, dt, params):
        cases.append(Case(name, op_cases.dispatch_op(case_op), label, shape, dt, case_op, params))

    readers[op](r, j, add, dtypes)
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
