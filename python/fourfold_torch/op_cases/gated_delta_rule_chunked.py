"""Gated DeltaNet's recurrence in chunks of 64 at a prompt's length (transformers' torch_chunk_gated_delta_rule),
against the rows of gated_delta_rule (each side's own choice of order). Rows: _delta_rule.py."""

from . import _delta_rule as d


def call(c, mk):
    return d.torch_call(c, mk, chunked=True)


def fourfold_call(c, mk):
    return d.fourfold_call(c, mk, "chunked")
