"""The package's layers: each module imports only modules of its own layer or of the layers
before it (the order docs/pipeline.md states), the report imports no model code, no import
cycle between modules, no module importing another's private (``_``-prefixed) names, and no
module over 500 lines of code (its module docstring, the notation and equations it
implements, not counted)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "gpcbench"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str) -> list[tuple[str, list[str]]]:
    """(imported gpcbench module, names taken from it) for every import in the module,
    function-level imports included; relative imports resolved."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names if alias.name.startswith("gpcbench")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("gpcbench"):
                continue
            names = [alias.name for alias in node.names]
            submodules = [n for n in names if f"{base}.{n}" in MODULES]
            found += [(f"{base}.{n}", []) for n in submodules]
            found.append((base, [n for n in names if n not in submodules]))
    return [(module, names) for module, names in found if module in MODULES and module != name]


GRAPH = {name: _imports(name) for name in MODULES}

def _documented_layers() -> list[list[str]]:
    """The numbered list of docs/pipeline.md's layout: each entry's module prefixes, in order
    (the bare package first: it holds only the version)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "pipeline.md").read_text()
    entries = re.findall(r"^\d+\. (`.+)$", text, flags=re.MULTILINE)
    return [["gpcbench"]] + [[f"gpcbench.{name}" for name in re.findall(r"`([\w.]+)`", entry)]
                             for entry in entries]


LAYERS = _documented_layers()
#: Model code (inference to baselines), which the report (it reads fold results) never imports.
MODEL = ("gpcbench.inference", "gpcbench.mcmc", "gpcbench.learning", "gpcbench.estimators",
         "gpcbench.models", "gpcbench.baselines")


def _layer(module: str) -> int:
    """Index in LAYERS of the entry whose longest prefix names ``module``."""
    matches = [(len(prefix), i) for i, prefixes in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    assert matches, f"{module} is in no entry of docs/pipeline.md's layer list"
    return max(matches)[1]


def _cycle() -> list[str] | None:
    """One import cycle between gpcbench modules (package __init__ edges excluded), if any."""
    edges = {name: sorted({m for m, _ in deps if not MODULES[m].name == "__init__.py"})
             for name, deps in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in edges[node]:
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_every_module_is_in_a_layer_and_imports_only_its_own_or_earlier_layers():
    upward = sorted(f"{name} (entry {_layer(name)}) imports {module} (entry {_layer(module)})"
                    for name, deps in GRAPH.items() for module, _ in deps
                    if _layer(module) > _layer(name))
    assert upward == []


def test_the_report_imports_no_model_code():
    report = [name for name in MODULES if name.startswith("gpcbench.experiments.report")]
    model = sorted(f"{name} imports {module}" for name in report for module, _ in GRAPH[name]
                   if module.startswith(MODEL))
    assert report and model == []


def test_the_layer_list_is_read_from_the_docs_and_longest_prefixes_win():
    assert len(LAYERS) > 10 and ["gpcbench.kernels"] in LAYERS
    assert _layer("gpcbench.experiments.report.cells") == _layer("gpcbench.experiments.report")
    assert _layer("gpcbench.experiments.run_fold") < _layer("gpcbench.experiments.report")
    assert _layer("gpcbench.kernels.rbf") < _layer("gpcbench.inference.ep")


def test_no_import_cycle():
    assert _cycle() is None, " -> ".join(_cycle())


def test_no_module_imports_another_modules_private_names():
    private = sorted(f"{name} imports {module}.{imported}"
                     for name, deps in GRAPH.items() for module, names in deps
                     for imported in names if imported.startswith("_"))
    assert private == []


def _code_lines(path: Path) -> int:
    """Lines of the module after its module docstring."""
    text = path.read_text()
    tree = ast.parse(text)
    skipped = tree.body[0].end_lineno if ast.get_docstring(tree) is not None else 0
    return len(text.splitlines()) - skipped


def test_code_lines_skip_the_module_docstring_only(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Doc\n\nmore."""\n\nX = 1\n"""not a module docstring"""\n')
    assert _code_lines(module) == 3


def test_modules_are_short():
    long = {name: n for name, path in MODULES.items() if (n := _code_lines(path)) >= MAX_LINES}
    assert long == {}


def test_compiled_modules_take_njit_from_gpcbench_jit():
    """numba's cache is kept per version of the compiled code only if every compiled module
    decorates with gpcbench.jit's njit (see its docstring)."""
    direct = sorted(name for name, path in MODULES.items() if name != "gpcbench.jit"
                    for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.ImportFrom) and node.module == "numba"
                    and {"njit", "jit", "objmode"} & {alias.name for alias in node.names})
    assert direct == []
