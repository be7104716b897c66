"""One module per op the driver runs, found here by itself: adding an op's cases is one new file.

A module is named after the op as the suites name it (the op list's name; add_rms_norm and complex_matmul are
the two rows named otherwise) and holds everything the driver needs for it:

    call(c, mk) -> (fn, args, variant)   the PyTorch call on inputs made by mk (op_calls.Maker); fn(*args) runs
                                         it, variant names the call in the records
    cost(c, s) -> OpCost                 the bytes and flops fourfold's op_cost counts (s: the dtype's size)
    DISPATCH = "op"                      the op-list op its rows run as, where that is not the module's name

A row op (the cases of a "row_ops" suite name it) adds the suite fields it needs and its shape text:

    FIELDS = ("rows", "cols")            the fields a case must give; the others default to 1
    shape(p) -> str                      the inputs in short, the same string fourfold prints
    check(r, e, path, p)                 optional: refuses a case with r.bad (suites._Reader)
    SMALL = {"rows": 3, "cols": 40}      optional: a small case's fields, for the test that runs every row op
                                         against its oracle (this is the default)

A module that reads a suite of its own format (a suite whose "op" is SUITE) adds:

    SUITE = "linear"
    read(r, j, add, dtypes)              adds the suite's cases: add(case_op, name, shape, dtype, params)

Modules whose name starts with "_" are shared helpers, not ops. They are imported on first use, not when this
package is, so that a module may import the driver's scaffolding (op_calls, op_cost, suites) at its top.
"""

import functools
import importlib
import pkgutil


@functools.lru_cache(maxsize=None)
def modules():
    """Every op's module by name, in name order."""
    return {info.name: importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name) if not info.name.startswith("_")}


def module(name):
    return modules()[name]


def dispatch_op(name):
    """The op-list op that a case of module `name` runs as."""
    return getattr(module(name), "DISPATCH", name)


def row_ops():
    """The names a "row_ops" suite case may give, with their modules."""
    return {name: m for name, m in modules().items() if hasattr(m, "FIELDS")}


def suite_readers():
    """Each suite format ("op" of a suite file) with the module that reads it; row_ops is suites.py's own."""
    return {m.SUITE: m for m in modules().values() if hasattr(m, "SUITE")}
