"""Every case file of fourfold's (src/check/op_cases/*.cpp) has its module in fourfold_torch/op_cases, and each
module gives what the driver asks of it (op_cases/__init__.py)."""

import glob
import os

from conftest import REPO
from fourfold_torch import op_cases


def _case_files():
    names = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(REPO, "src", "check", "op_cases", "*.cpp"))}
    names.discard("op_case")   # the scaffolding
    assert len(names) > 20
    return names


def test_every_case_file_has_a_module():
    # matmul's sweep-only case file has no op-time row (its rows are complex_matmul's).
    missing = sorted(_case_files() - set(op_cases.modules()) - {"matmul"})
    assert not missing, f"no module in python/fourfold_torch/op_cases for {missing}"
    extra = sorted(set(op_cases.modules()) - _case_files())
    assert not extra, f"modules without a case file in src/check/op_cases: {extra}"


def test_every_module_gives_what_the_driver_asks():
    for name, m in op_cases.modules().items():
        assert callable(getattr(m, "call", None)), name
        for gone in ("read", "shape", "cost", "FIELDS", "SUITE"):
            assert not hasattr(m, gone), f"{name}.{gone}: fourfold reads the suites and counts the cost (suite_rows.json)"


def _imports_of_the_driver():
    """{module: the driver's modules it imports}, packages as their __init__, read from the sources."""
    import ast
    root = os.path.join(REPO, "python", "fourfold_torch")
    graph = {}
    for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True):
        rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
        name = rel[: -len(".__init__")] if rel.endswith("__init__") else rel
        package = name if rel.endswith("__init__") else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
                targets |= {f"{mod}.{a.name}".lstrip(".") if not node.module else mod for a in node.names}
        graph[name or "__init__"] = {t for t in targets if t and t != name}
    # op_cases loads every module of its own (importlib): the package draws on each of them.
    graph["op_cases"] |= {m for m in graph if m.startswith("op_cases.")}
    return graph


def test_the_driver_draws_one_way():
    """No import cycle among the driver's modules (the case modules use op_calls and suites; op_cases.build_call
    is where the driver reaches them), so each layer can be read without the ones above it."""
    graph = _imports_of_the_driver()
    assert {"op_calls", "suites"} <= graph["op_cases.linear"] and "op_cases.linear" in graph["op_cases"]
    state = {}

    def visit(node, path):
        if state.get(node) == "open":
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(node):] + [node]))
        if state.get(node) == "done":
            return
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if nxt in graph:
                visit(nxt, path + [node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])
