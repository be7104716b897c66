"""F.embedding: rows ids into a table w [n, cols]."""

import torch
import torch.nn.functional as F

from ..counter_rng import uniform_f64
from ..op_cost import OpCost

FIELDS = ("rows", "cols", "n")
SMALL = {"rows": 4, "cols": 16, "n": 50}


def shape(p):
    return f"w[{p['n']},{p['cols']}] idx[{p['rows']}]"


def call(c, mk):
    p = c.p
    table = mk.t([p["n"], p["cols"]])
    ids = torch.from_numpy(uniform_f64(mk.seed + 1, p["rows"], 0.0, p["n"] - 1e-9)).to(torch.int64)
    return (lambda ids, table: F.embedding(ids, table)), (ids.to(table.device), table), "F.embedding"


def cost(c, s):
    p = c.p
    e = float(p["rows"] * p["cols"])
    # The table's rows no id picks are made but not read: counted as made, for the rotation and the cap.
    return OpCost(e * s + 8.0 * p["rows"], e * s, 0.0, max(p["n"] - p["rows"], 0) * float(p["cols"]) * s)
