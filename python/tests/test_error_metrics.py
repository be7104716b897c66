"""The correctness figures follow fourfold's definitions (src/check/error_metrics.cpp)."""

import math

import torch

from fourfold_torch.error_metrics import compare_to_reference, mean_kl_divergence, round_to, top1_agreement_percent


def test_exact_output_has_infinite_psnr_and_zero_ulp():
    ref = torch.tensor([1.0, -2.5, 0.375], dtype=torch.float64)
    s = compare_to_reference(ref.to(torch.float32), ref)
    assert s.exact and s.max_ulp == 0 and s.psnr_db == math.inf and s.count == 3
    # Rounded once to the output dtype is exact too, but not error-free: PSNR is finite.
    tenth = torch.tensor([0.1], dtype=torch.float64)
    s = compare_to_reference(tenth.to(torch.float32), tenth)
    assert s.exact and s.max_ulp == 0 and 140 < s.psnr_db < math.inf


def test_one_bf16_ulp_off_is_counted_in_the_output_dtype():
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    got = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
    got[1] = 2 + 2.0**-6   # the next bf16 after 2
    s = compare_to_reference(got, ref)
    assert not s.exact and s.max_ulp == 1
    assert s.max_abs == 2.0**-6 and s.rel_floor == 3e-3
    assert math.isclose(s.psnr_db, 10 * math.log10(9.0 / (2.0**-12 / 3)))


def test_nan_on_one_side_makes_psnr_nan():
    ref = torch.tensor([1.0, 2.0], dtype=torch.float64)
    s = compare_to_reference(torch.tensor([1.0, float("nan")]), ref)
    assert s.nan_mismatches == 1 and math.isnan(s.psnr_db) and not s.exact


def test_bf16_rounding_is_one_rounding_from_double():
    # 1 + 2^-8 + 2^-30 is above the bf16 halfway point 1 + 2^-8; through float32 it would land on the halfway
    # point itself (2^-30 is lost) and round to even, down to 1.0.
    v = torch.tensor([1 + 2.0**-8 + 2.0**-30], dtype=torch.float64).numpy()
    assert round_to(v, torch.bfloat16)[0] == 1 + 2.0**-7


def test_logit_figures():
    ref = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])
    assert top1_agreement_percent(ref, ref) == 100.0 and mean_kl_divergence(ref, ref) == 0.0
    other = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]])
    assert top1_agreement_percent(ref, other) == 50.0 and mean_kl_divergence(ref, other) > 0
