"""Every op the suites name and every op of fourfold's op list has its module in fourfold_torch/op_cases, and
each module gives what the driver asks of it (op_cases/__init__.py)."""

import glob
import json
import os
import re

from conftest import REPO
from fourfold_torch import op_cases


def _op_list():
    with open(os.path.join(REPO, "src", "backends", "op_list.h"), encoding="utf-8") as f:
        names = re.findall(r"^\s*X\((\w+),", f.read(), re.MULTILINE)
    assert len(names) > 20, "the X(name, Args) lines of src/backends/op_list.h"
    return names


def _suites():
    for path in sorted(glob.glob(os.path.join(REPO, "data", "suites", "*.json"))):
        with open(path, encoding="utf-8") as f:
            yield os.path.basename(path), json.load(f)


def test_every_op_of_the_op_list_has_a_module():
    # An op whose rows are named otherwise counts through the module that runs as it (matmul: complex_matmul).
    covered = set(op_cases.modules()) | {op_cases.dispatch_op(name) for name in op_cases.modules()}
    missing = [name for name in _op_list() if name not in covered]
    assert not missing, f"no module in python/fourfold_torch/op_cases for {missing}"


def test_every_op_the_suites_name_has_a_module():
    readers, row_ops = op_cases.suite_readers(), op_cases.row_ops()
    for file, j in _suites():
        if j["op"] == "row_ops":
            missing = sorted({e["op"] for e in j["cases"]} - set(row_ops))
            assert not missing, f"{file}: no row-op module (with FIELDS) in python/fourfold_torch/op_cases for {missing}"
        else:
            assert j["op"] in readers, f"{file}: no module in python/fourfold_torch/op_cases with SUITE = {j['op']!r}"


def test_every_module_gives_what_the_driver_asks():
    assert "row_ops" not in op_cases.suite_readers()   # suites.py's own format
    for name, m in op_cases.modules().items():
        assert callable(getattr(m, "call", None)) and callable(getattr(m, "cost", None)), name
        if hasattr(m, "FIELDS"):
            assert callable(getattr(m, "shape", None)) and isinstance(m.FIELDS, tuple), name
        if hasattr(m, "SUITE"):
            assert callable(getattr(m, "read", None)), name
        assert op_cases.dispatch_op(name) in _op_list(), f"{name} runs as {op_cases.dispatch_op(name)}, not an op-list op"
