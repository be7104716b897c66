"""torch.softmax over the vocabularies of the softmax suite."""

import torch

from ..op_cost import OpCost

SUITE = "softmax"


def read(r, j, add, dtypes):
    rows = r.integers(r.need(j, "", "rows"), "rows")
    dim = r.integer(j["dim"], "dim", -2) if "dim" in j else -1
    for i, v in enumerate(r.array(r.need(j, "", "vocabularies"), "vocabularies")):
        cols = r.integer(r.need(v, f"vocabularies[{i}]", "size"), f"vocabularies[{i}].size")
        models = v.get("models", [])
        name = f"vocab {cols} ({', '.join(models)})" if models else f"vocab {cols}"
        for dt in dtypes:
            for n_rows in rows:
                add("softmax", name, f"x[{n_rows},{cols}] dim {dim}", dt, dict(rows=n_rows, cols=cols, dim=dim))


def call(c, mk):
    x = mk.t([c.p["rows"], c.p["cols"]], 0, 8.0)
    dim = c.p["dim"]
    return (lambda t: torch.softmax(t, dim)), (x,), "torch.softmax"


def cost(c, s):
    e = float(c.p["rows"] * c.p["cols"])
    return OpCost(e * s, e * s, 0.0)


def fourfold_call(c, mk):
    x = mk.t([c.p["rows"], c.p["cols"]], 0, 8.0)
    dim = c.p["dim"]
    return (lambda t: torch.ops.fourfold.softmax(t, dim)), (x,), "fourfold.softmax"
