"""One module per case file of fourfold's (src/check/op_cases/<name>.cpp), found here by itself: adding an op's
rows is that C++ file plus a module here with its calls.

fourfold reads the suites and writes every row, with its parameters, bytes and flops, into data/suite_rows.json
(suites.py); a row's "case" names its module here, which holds only how PyTorch runs it:

    call(c, mk) -> (fn, args, variant)   the PyTorch call on inputs made by mk (op_calls.Maker) from the row's
                                         parameters c.p; fn(*args) runs it, variant names the call in the records
    fourfold_call(c, mk)                 optional: the same through torch.ops.fourfold

Modules whose name starts with "_" are shared helpers, not ops. They are imported on first use, not when this
package is, so that a module may import the driver's scaffolding (op_calls, suites) at its top.
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
