"""Gated DeltaNet's recurrence over rows tokens, in the order each side picks: transformers runs
torch_recurrent_gated_delta_rule for one token and torch_chunk_gated_delta_rule for more; fourfold's auto.
Rows: _delta_rule.py."""

from . import _delta_rule as d


def call(c, mk):
    return d.torch_call(c, mk, chunked=c.p["rows"] > 1)


def fourfold_call(c, mk):
    return d.fourfold_call(c, mk, "auto")
