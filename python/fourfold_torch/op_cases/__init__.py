"""One module per case file of fourfold's (src/check/op_cases/<name>.cpp), found here by itself: adding an op's
rows is that C++ file plus a module here with its calls.

fourfold reads the suites and writes every row, with its parameters, bytes and flops, into data/suite_rows.json
(suites.py); a row's "case" names its module here, which holds only how PyTorch runs it:

    call(c, mk) -> (fn, args, variant)   the PyTorch call on inputs made by mk (op_calls.Maker) from the row's
                                         parameters c.p; fn(*args) runs it, variant names the call in the records
    fourfold_call(c, mk)                 optional: the same through torch.ops.fourfold

build_call(case, seed, device) returns (fn, args, variant): fn(*args) runs the op once and returns its output
(or a tuple whose first element is the output checked); fn takes its tensors as arguments so that torch.compile
compiles it once for every rotated input set.

Modules whose name starts with "_" are shared helpers, not ops. The layers go one way: check -> op_cases ->
op_calls, suites (the scaffolding a module imports at its top).
"""

import functools
import importlib
import pkgutil

from ..op_calls import TORCH_DTYPES, Maker, Unsupported


@functools.lru_cache(maxsize=None)
def modules():
    """Every op's module by name, in name order."""
    return {info.name: importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name) if not info.name.startswith("_")}


def module(name):
    return modules()[name]


def build_call(case, seed, device="cpu", oracle=False, kernels="torch"):
    """The case's call on its inputs made from `seed`; oracle=True: the same values widened to float64 on the
    CPU (FP8 operands stay FP8, as in fourfold), and a plain float64 formula where PyTorch's op has none.
    kernels="fourfold": the case module's fourfold_call (torch.ops.fourfold) where it has one, else its PyTorch
    call with the variant saying so, as optimize() leaves what it does not cover on PyTorch."""
    if case.dtype not in TORCH_DTYPES:
        raise Unsupported(f"dtype {case.dtype} has no torch dtype here")
    m = module(case.case_op)
    maker = Maker(case.dtype, seed, device, oracle)
    if kernels == "fourfold" and not oracle:
        fourfold_call = getattr(m, "fourfold_call", None)
        if fourfold_call is not None:
            return fourfold_call(case, maker)
        fn, args, variant = m.call(case, maker)
        return fn, args, variant + " (PyTorch: no fourfold op)"
    return m.call(case, maker)
