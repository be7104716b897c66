"""The driver reads the suites' rows fourfold writes (data/suite_rows.json): the shipped file is what fourfold
reads from the shipped suites today, a suite of one's own reads through the same command, and every row runs
against its oracle."""

import json
import os

import pytest

from conftest import REPO
from fourfold_torch import op_cases
from fourfold_torch.error_metrics import compare_to_reference
from fourfold_torch.op_cost import case_work, op_cost
from fourfold_torch.suites import SuiteError, default_rows_path, list_suites, load_suite, read_rows

SMALL_SUITES = os.path.join(REPO, "python", "tests", "data", "suites")
# Modules whose rows come from a suite format of their op's own, not from row_ops.
OWN_FORMATS = {"linear", "softmax", "constant_pad_nd", "grouped_mm", "moe_experts", "scaled_dot_product_attention",
               "scaled_mm", "conv2d", "conv3d"}


def _rows_of(fourfold, tmp_path, suites_dir):
    out = tmp_path / "rows.json"
    fourfold("bench", "ops", "--list", "--json", str(out), "--suites-dir", suites_dir)
    return out


def test_the_shipped_rows_are_what_fourfold_reads_today(fourfold, tmp_path):
    fresh = json.loads(_rows_of(fourfold, tmp_path, os.path.join(REPO, "data", "suites")).read_text())
    with open(default_rows_path(), encoding="utf-8") as f:
        shipped = json.load(f)
    assert shipped == fresh, ("python/fourfold_torch/data/suite_rows.json is stale: write it again with "
                              "`build/release/fourfold bench ops --list --json python/fourfold_torch/data/suite_rows.json`")
    ours = [c for s in list_suites() for c in load_suite(s)]
    assert len(ours) == len(fresh["rows"]) > 800
    for c, t in zip(ours, fresh["rows"]):
        assert (c.suite, c.op, c.case_op, c.name, c.shape, c.dtype, c.p) == (
            t["suite"], t["op"], t["case"], t["name"], t["shape"], t["dtype"], t["params"])
        assert (op_cost(c).bytes_read, op_cost(c).flops, case_work(c)) == (t["bytes_read"], t["flops"], t["work"])
        assert c.case_op in op_cases.modules(), f"no module in python/fourfold_torch/op_cases for {c.case_op}"


def test_bad_rows_and_unknown_suites_are_named(tmp_path):
    with pytest.raises(SuiteError, match="expected one of .*decode-linear.*found 'nope'"):
        load_suite("nope")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "fourfold.records/1", "kind": "suite_rows", "suites": ["x"],
                               "rows": [{"suite": "x", "op": "add"}]}))
    with pytest.raises(SuiteError, match=rf"suite rows '{bad}': field 'rows\[0\].case': expected a value, found none"):
        read_rows(str(bad))
    bad.write_text(json.dumps({"schema": "fourfold.records/0", "rows": []}))
    with pytest.raises(SuiteError, match="field 'schema': expected \"fourfold.records/1\""):
        read_rows(str(bad))
    with pytest.raises(SuiteError, match="cannot be read"):
        read_rows(str(tmp_path / "missing.json"))


def test_every_row_op_and_conv_runs_against_its_oracle(fourfold, tmp_path):
    """Suites of one's own go through fourfold too: each row op and two convolutions on small shapes, each close
    to its float64 oracle."""
    import torch
    suites = read_rows(str(_rows_of(fourfold, tmp_path, SMALL_SUITES)))
    conv = suites["small-conv"]
    assert [(c.op, c.shape) for c in conv] == [
        ("conv3d", "x[1,4,3,6,5] w[8,4,3,3,3] +bias pad 0,1,1"),
        ("conv2d", "x[2,4,9,9] w[6,2,3,3] stride 2,2 groups 2")]
    assert (conv[1].cost.bytes_read, conv[1].cost.bytes_written, conv[1].cost.flops) == ((648 + 108) * 4, 192 * 4,
                                                                                          2 * 192 * 18)
    rows = suites["small-row-ops"]
    assert {c.case_op for c in rows} == set(op_cases.modules()) - OWN_FORMATS
    for c in rows + conv:
        fn, args, _ = op_cases.build_call(c, 0, torch.device("cpu"))
        ofn, oargs, _ = op_cases.build_call(c, 0, torch.device("cpu"), oracle=True)
        got, want = fn(*args), ofn(*oargs)
        got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
        if got.dtype == torch.int64:
            assert torch.equal(got, want), c.row_shape
        else:
            assert compare_to_reference(got, want).psnr_db > 100, c.row_shape
