"""The suites read into the same rows as fourfold reads them: names, shape strings, dtypes, bytes and flops
of every case of every shipped suite against `fourfold bench ops --list --json`."""

import json

import pytest

from fourfold_torch import op_cases
from fourfold_torch.op_cases.grouped_mm import moe_group_sizes
from fourfold_torch.op_cost import case_work, op_cost
from fourfold_torch.suites import SuiteError, default_suites_dir, list_suites, load_suite, parse_suite


def test_every_case_of_every_suite_matches_fourfold(fourfold, tmp_path):
    out = tmp_path / "list.json"
    fourfold("bench", "ops", "--list", "--json", str(out), "--suites-dir", default_suites_dir())
    theirs = json.loads(out.read_text())["rows"]
    ours = [c for s in list_suites(default_suites_dir()) for c in load_suite(s)]
    assert len(ours) == len(theirs) > 800
    for c, t in zip(ours, theirs):
        assert (c.suite, c.op, c.name, c.shape, c.dtype) == (t["suite"], t["op"], t["name"], t["shape"], t["dtype"])
        cost = op_cost(c)
        assert cost.bytes_read == pytest.approx(t["bytes_read"], rel=1e-12), c.row_shape
        assert cost.bytes_written == pytest.approx(t["bytes_written"], rel=1e-12), c.row_shape
        assert cost.flops == pytest.approx(t["flops"], rel=1e-12), c.row_shape
        assert case_work(c) == pytest.approx(t["work"], rel=1e-12), c.row_shape


def test_moe_group_sizes_follow_the_routing_rules():
    assert moe_group_sizes(3, 4, 2, "even") == [2, 2, 1, 1]
    assert moe_group_sizes(4, 4, 2, "empty") == [4, 0, 4, 0]
    skewed = moe_group_sizes(8, 4, 2, "skewed")
    assert sum(skewed) == 16 and max(skewed) <= 8 and skewed == sorted(skewed, reverse=True)


def test_a_bad_suite_names_the_file_and_the_field():
    with pytest.raises(SuiteError, match=r"suite file 'x.json': field 'shapes\[0\].n': expected a positive integer, found number -4"):
        parse_suite('{"suite": "x", "op": "linear", "dtypes": ["bf16"], "m": [1], "bias": [false],'
                    ' "shapes": [{"n": -4, "k": 2, "model": "m", "projection": "p"}]}', "x.json")
    with pytest.raises(SuiteError, match="field 'op': expected one of .*linear, row_ops"):
        parse_suite('{"suite": "x", "op": "conv9d", "dtypes": ["bf16"]}', "x.json")
    with pytest.raises(SuiteError, match="expected one of .*found 'nope'"):
        load_suite("nope")


def test_conv_rows_read_like_fourfolds_and_run_against_their_oracle():
    import torch
    from fourfold_torch import op_calls
    from fourfold_torch.error_metrics import compare_to_reference
    _, cases = parse_suite('{"suite": "c", "op": "conv", "dtypes": ["f32"], "cases": ['
                           '{"name": "a", "x": [1, 4, 3, 6, 5], "weight": [8, 4, 3, 3, 3], "padding": [0, 1, 1]},'
                           '{"name": "b", "x": [2, 4, 9, 9], "weight": [6, 2, 3, 3], "stride": [2], "groups": 2,'
                           ' "bias": false}]}', "c.json")
    assert [(c.op, c.shape) for c in cases] == [
        ("conv3d", "x[1,4,3,6,5] w[8,4,3,3,3] +bias pad 0,1,1"),
        ("conv2d", "x[2,4,9,9] w[6,2,3,3] stride 2,2 groups 2")]
    cost = op_cost(cases[1])   # out [2, 6, 4, 4], fan-in 2 * 3 * 3
    assert (cost.bytes_read, cost.bytes_written, cost.flops) == ((648 + 108) * 4, 192 * 4, 2 * 192 * 18)
    for c in cases:
        fn, args, _ = op_calls.build_call(c, 0, torch.device("cpu"))
        ofn, oargs, _ = op_calls.build_call(c, 0, torch.device("cpu"), oracle=True)
        assert compare_to_reference(fn(*args), ofn(*oargs)).psnr_db > 120


def test_every_row_op_runs_against_its_oracle():
    """Each row op of the suites as its PyTorch call: close to its float64 oracle on small shapes."""
    import torch
    from fourfold_torch import op_calls
    from fourfold_torch.error_metrics import compare_to_reference
    ops = op_cases.row_ops()
    cases_json = [dict(op=op, name="t", **getattr(m, "SMALL", {"rows": 3, "cols": 40})) for op, m in ops.items()]
    _, cases = parse_suite(json.dumps({"suite": "t", "op": "row_ops", "dtypes": ["f32"], "cases": cases_json}), "t.json")
    assert [c.case_op for c in cases] == list(ops)
    for c in cases:
        fn, args, _ = op_calls.build_call(c, 0, torch.device("cpu"))
        ofn, oargs, _ = op_calls.build_call(c, 0, torch.device("cpu"), oracle=True)
        got, want = fn(*args), ofn(*oargs)
        got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
        if got.dtype == torch.int64:
            assert torch.equal(got, want), c.row_shape
        else:
            assert compare_to_reference(got, want).psnr_db > 100, c.row_shape
