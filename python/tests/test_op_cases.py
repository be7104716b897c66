"""Every case file of fourfold's (src/check/op_cases/*.cpp) has its module in fourfold_torch/op_cases, and each
module gives what the driver asks of it (op_cases/__init__.py)."""

import glob
import os

from conftest import REPO
from fourfold_torch import op_cases


def _case_files():
    names = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(REPO, "src", "check", "op_cases", "*.cpp"))}
    names.discard("op_case")   # the scaffolding
    assert len(names) > 20
    return names


def test_every_case_file_has_a_module():
    # matmul's sweep-only case file has no op-time row (its rows are complex_matmul's).
    missing = sorted(_case_files() - set(op_cases.modules()) - {"matmul"})
    assert not missing, f"no module in python/fourfold_torch/op_cases for {missing}"
    extra = sorted(set(op_cases.modules()) - _case_files())
    assert not extra, f"modules without a case file in src/check/op_cases: {extra}"


def test_every_module_gives_what_the_driver_asks():
    for name, m in op_cases.modules().items():
        assert callable(getattr(m, "call", None)), name
        for gone in ("read", "shape", "cost", "FIELDS", "SUITE"):
            assert not hasattr(m, gone), f"{name}.{gone}: fourfold reads the suites and counts the cost (suite_rows.json)"
