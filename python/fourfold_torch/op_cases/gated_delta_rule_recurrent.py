"""Gated DeltaNet's recurrence token by token at a prompt's length (transformers' torch_recurrent_gated_delta_rule),
against the chunked rows of gated_delta_rule. Rows: _delta_rule.py."""

from . import _delta_rule as d

DISPATCH = "gated_delta_rule"
FIELDS, SMALL, shape, check, cost = d.FIELDS, d.SMALL, d.shape, d.check, d.cost


def call(c, mk):
    return d.torch_call(c, mk, chunked=False)


def fourfold_call(c, mk):
    return d.fourfold_call(c, mk, "recurrent")
