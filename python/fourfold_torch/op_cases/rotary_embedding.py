"""Rotary embedding on x [rows, heads, cols] with cos and sin for one half, in Hugging Face's rotate_half
form (PyTorch has no op)."""

import torch


def call(c, mk):
    rows, cols = c.p["rows"], c.p["cols"]
    x, cs, sn = mk.t([rows, c.p["heads"], cols]), mk.t([rows, 1, cols // 2], 1), mk.t([rows, 1, cols // 2], 2)

    def rotary(x, cs, sn):
        x1, x2 = x[..., : cols // 2], x[..., cols // 2:]
        return torch.cat((x1 * cs - x2 * sn, x2 * cs + x1 * sn), dim=-1)
    return rotary, (x, cs, sn), "rotate_half (composed)"


def fourfold_call(c, mk):
    rows, cols = c.p["rows"], c.p["cols"]
    x, cs, sn = mk.t([rows, c.p["heads"], cols]), mk.t([rows, 1, cols // 2], 1), mk.t([rows, 1, cols // 2], 2)
    return torch.ops.fourfold.rotary_embedding, (x, cs, sn), "fourfold.rotary_embedding"
