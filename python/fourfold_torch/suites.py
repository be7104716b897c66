"""The op-time suites' rows as fourfold reads them from data/suites/*.json. fourfold writes every row once, with
its parameters, bytes, flops and work (`fourfold bench ops --list --json`, src/check/suite_rows.h), into this
package's data/suite_rows.json, and the driver reads that file: a PyTorch record and a fourfold record of one
suite describe one workload, and no suite format is read twice. tests/check/suite_rows_test.cpp holds the file
fresh. Another rows file (suites of one's own): $FOURFOLD_SUITE_ROWS."""

import functools
import json
import os
from dataclasses import dataclass, field

from .op_cost import OpCost

# The dtype names a row may give (PyTorch's spelling, as fourfold's dtype_name writes them).
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "complex64", "int32", "int64", "bool",
          "float64", "uint8", "float4_e2m1fn_x2", "float8_e8m0fnu")
FP8 = ("float8_e4m3fn", "float8_e5m2")
FP4 = ("float4_e2m1fn_x2",)
ROWS_SCHEMA = "fourfold.records/1"
_ROW_KEYS = ("suite", "op", "case", "name", "shape", "dtype", "params", "bytes_read", "bytes_written", "bytes_made",
             "flops", "work")


class SuiteError(ValueError):
    """A bad rows file or an unknown suite: names the file and the field, as fourfold's FormatError does."""


@dataclass
class Case:
    suite: str
    op: str        # the op's name in fourfold's op list
    name: str      # where the shape comes from
    shape: str     # the inputs in short
    dtype: str     # PyTorch spelling
    case_op: str   # its module in op_cases (fourfold's case file): builds the call
    p: dict = field(default_factory=dict)
    cost: OpCost = field(default_factory=OpCost)   # the least bytes and flops, as fourfold counts them
    work: float = 0.0                              # the reference cap's measure of the row

    @property
    def row_shape(self):
        """The op-time and correctness rows' shape field: name and shape."""
        return f"{self.name} {self.shape}"

    @property
    def workload_line(self):
        return f"{self.suite}: {self.name} {self.shape} {self.dtype}"


def default_rows_path():
    env = os.environ.get("FOURFOLD_SUITE_ROWS")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "suite_rows.json")


def _bad(path, field_name, expected, found):
    raise SuiteError(f"suite rows '{path}': field '{field_name}': expected {expected}, found {found}")


def _case(path, i, row):
    where = f"rows[{i}]"
    if not isinstance(row, dict):
        _bad(path, where, "an object", type(row).__name__)
    for key in _ROW_KEYS:
        if key not in row:
            _bad(path, f"{where}.{key}", "a value", "none (missing)")
    if row["dtype"] not in DTYPES:
        _bad(path, f"{where}.dtype", "a dtype name (" + ", ".join(DTYPES) + ")", repr(row["dtype"]))
    if not isinstance(row["params"], dict):
        _bad(path, f"{where}.params", "an object", type(row["params"]).__name__)
    for key in ("bytes_read", "bytes_written", "bytes_made", "flops", "work"):
        if isinstance(row[key], bool) or not isinstance(row[key], (int, float)) or row[key] < 0:
            _bad(path, f"{where}.{key}", "a number >= 0", repr(row[key]))
    cost = OpCost(float(row["bytes_read"]), float(row["bytes_written"]), float(row["flops"]), float(row["bytes_made"]))
    return Case(row["suite"], row["op"], row["name"], row["shape"], row["dtype"], row["case"], row["params"], cost,
                float(row["work"]))


@functools.lru_cache(maxsize=4)
def read_rows(path):
    """{suite name: [Case]} in the file's order, from a rows document of fourfold's."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise SuiteError(f"suite rows '{path}': cannot be read ({e.strerror}); write it with "
                         "`fourfold bench ops --list --json FILE`") from None
    except json.JSONDecodeError as e:
        raise SuiteError(f"suite rows '{path}': not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        _bad(path, "(document)", "an object", type(doc).__name__)
    if doc.get("schema") != ROWS_SCHEMA or doc.get("kind") != "suite_rows":
        _bad(path, "schema", f'"{ROWS_SCHEMA}" with kind "suite_rows"', f"{doc.get('schema')!r}, {doc.get('kind')!r}")
    suites = {name: [] for name in doc.get("suites", [])}
    rows = doc.get("rows")
    if not isinstance(rows, list):
        _bad(path, "rows", "an array", type(rows).__name__)
    for i, row in enumerate(rows):
        c = _case(path, i, row)
        if c.suite not in suites:
            _bad(path, f"rows[{i}].suite", "one of the document's suites", repr(c.suite))
        suites[c.suite].append(c)
    return suites


def list_suites(path=None):
    return sorted(read_rows(path or default_rows_path()))


def load_suite(name, path=None):
    path = path or default_rows_path()
    suites = read_rows(path)
    if name not in suites:
        raise SuiteError(f"check: suite: expected one of {', '.join(sorted(suites))}, found '{name}'")
    return suites[name]
