"""F.embedding: rows ids into a table w [n, cols]."""

import torch
import torch.nn.functional as F

from ..counter_rng import uniform_f64


def call(c, mk):
    p = c.p
    table = mk.t([p["n"], p["cols"]])
    ids = torch.from_numpy(uniform_f64(mk.seed + 1, p["rows"], 0.0, p["n"] - 1e-9)).to(torch.int64)
    return (lambda ids, table: F.embedding(ids, table)), (ids.to(table.device), table), "F.embedding"
