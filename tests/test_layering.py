"""The folder tree is the architecture: the layering rules are derived from the tree, not from a
hand list, so a new module or family is covered the moment it exists.

Units are the top-level entries of ``src/llm_power`` (a folder or a module). Their kinds:

- ``_core`` imports nothing of the package;
- ``_kernel`` imports only ``_core``;
- ``matrix`` (the ``ScoreMatrix`` hand-off) imports only ``_core`` and ``_kernel``;
- a *family* (every other folder or module that is not a layer below) imports ``_core``,
  ``_kernel``, ``matrix`` and the *public* names of other families -- never a family's private
  module (``paired._compare``) and never a ``_name`` of another unit;
- ``io`` reads only: ``_core`` and ``matrix``;
- ``report`` formats: ``_core``, ``matrix``, ``report``, ``_version`` (never the package facade) and the result *types* of the families
  (classes and constants, no functions: a renderer that imports a statistics function recomputes
  what the result should carry); never ``_kernel``;
- ``cli`` parses, reads, calls and renders: no scipy and no ``_kernel`` (no formulas);
- ``engines`` and ``integrations`` sit on top (anything public but ``cli``: the Action runs the
  command line as a process);
- the package's own ``__init__``, ``__main__``, ``errors``, ``testing`` and ``_version`` re-export.

And: no import circle between modules (imports inside functions count; ``TYPE_CHECKING`` blocks
do not, they never run).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import llm_power

SRC = Path(llm_power.__file__).resolve().parent
PKG = "llm_power"
LAYERS = {"_core", "_kernel", "matrix", "io", "report", "cli", "engines", "integrations"}
TOP = {"__init__", "__main__", "errors", "testing", "_version"}
ALLOWED = {  # what each layer may import (families: see _allowed)
    "_core": {"_core"},
    "_kernel": {"_core", "_kernel"},
    "matrix": {"_core", "_kernel", "matrix"},
    "io": {"_core", "matrix", "io", "errors"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _families() -> set[str]:
    units = {p.stem if p.is_file() else p.name for p in SRC.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    return units - LAYERS - TOP


FAMILIES = _families()


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(module: str) -> list[tuple[str, str | None, bool]]:
    """(absolute module, imported name or None, at run time) for every import of the package."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _type_checking_lines(tree)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        runs = node.lineno not in typing_only if isinstance(node, (ast.Import, ast.ImportFrom)) else True
        if isinstance(node, ast.Import):
            out += [(a.name, None, runs) for a in node.names if a.name.split(".")[0] in (PKG, "scipy")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] not in (PKG, "scipy"):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.append((full, None, runs) if full in MODULES else (target, alias.name, runs))
    return out


def _is_private_module(target: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in target.split(".")[2:])


def _violations() -> list[str]:
    bad = []
    for module in sorted(MODULES):
        unit = _unit(module)
        for target, name, _ in _imports(module):
            where = f"{module} imports {target}" + (f".{name}" if name else "")
            if target.split(".")[0] == "scipy":
                if unit == "cli":
                    bad.append(f"{where}: the CLI computes no formulas")
                continue
            other = _unit(target)
            if other == unit or unit in TOP:
                continue
            if name is not None and name.startswith("_") and not name.startswith("__"):
                bad.append(f"{where}: a private name crosses from {other} into {unit}")
            if other in FAMILIES and _is_private_module(target):
                bad.append(f"{where}: a family's private module is imported from outside it")
            if unit in ALLOWED and other not in ALLOWED[unit]:
                bad.append(f"{where}: {unit} may import only {sorted(ALLOWED[unit])}")
            elif unit in FAMILIES and other not in FAMILIES | {"_core", "_kernel", "matrix", "errors"}:
                bad.append(f"{where}: a family imports only _core, _kernel, matrix and other families")
            elif unit == "report":
                if other == "_kernel" or (other not in FAMILIES | {"_core", "matrix", "errors", "_version"}):
                    bad.append(f"{where}: a renderer formats; it imports no {other}")
                elif other in FAMILIES and name is not None:
                    value = getattr(importlib.import_module(target), name)
                    if inspect.isfunction(value):
                        bad.append(f"{where}: a renderer imports result types, not statistics functions")
            elif unit == "cli" and other == "_kernel":
                bad.append(f"{where}: the CLI computes no formulas")
            elif unit in {"integrations", "engines"} and other == "cli":
                bad.append(f"{where}: {unit} sit beside the command line, not on top of it (run it as a process)")
    return bad


def test_the_tree_has_the_layers_and_families_of_the_architecture():
    for folder in ("_core", "_kernel", "io", "report", "cli", "engines", "integrations",
                   "paired", "planning", "resolution", "preferences", "samples", "gating"):
        assert (SRC / folder / "__init__.py").is_file(), folder
    assert (SRC / "matrix.py").is_file()
    assert {"paired", "planning", "resolution", "preferences", "samples", "gating",
            "intervals", "multiplicity", "sequential", "clustering"} <= FAMILIES
    # the derivation covers every unit: nothing in the tree escapes a rule
    assert {_unit(m) for m in MODULES} <= LAYERS | TOP | FAMILIES


def test_imports_follow_the_layers():
    bad = _violations()
    assert not bad, "\n".join(bad)


def test_the_rules_catch_a_violation(monkeypatch):
    # precondition of the test above: the checker sees a forbidden import when there is one
    original = _imports

    def with_violation(module: str) -> list[tuple[str, str | None, bool]]:
        extra = [("llm_power.resolution._diagnose", "_diagnose_options", True)] if module == "llm_power.io.plain" else []
        return original(module) + extra

    monkeypatch.setitem(globals(), "_imports", with_violation)
    bad = _violations()
    assert any("private name crosses" in b for b in bad)
    assert any("private module" in b for b in bad)
    assert any("io may import only" in b for b in bad)


def _cycle() -> list[str] | None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _, runs in _imports(module):
            if runs and target in MODULES and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle():
    cycle = _cycle()
    assert cycle is None, " -> ".join(cycle or [])


def test_tests_mirror_the_families_and_layers():
    tests = Path(__file__).resolve().parent
    folders = {"paired", "planning", "resolution", "preferences", "samples", "gating", "kernel", "core", "io",
               "engines", "integrations", "report", "cli", "runs", "rankings", "subsets"}
    for folder in sorted(folders):
        assert sorted((tests / folder).glob("test_*.py")), f"tests/{folder}/ has no tests"
    # every family folder of the package has its tests folder (the leaves' tests sit at the top)
    package_folders = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    named = {"_core": "core", "_kernel": "kernel"}
    assert {named.get(f, f) for f in package_folders} <= folders


def test_no_private_name_is_imported_from_another_module():
    # what a module shares is public (a family's modules are private as a whole: ``paired._resampling``
    # shares ``pvalue_from_null`` with ``paired._permutation``, never ``_pvalue_from_null``)
    crossing = sorted({f"{module} <- {target}.{name}" for module in MODULES for target, name, _ in _imports(module)
                       if name is not None and name.startswith("_") and not name.startswith("__")
                       and target != module and target.startswith(PKG)})
    assert not crossing, "\n".join(crossing)


def test_the_kernel_computes_sums_below_the_rule():
    """The verdict is built on the sufficient statistics, quantiles and variances, never the other way
    round: none of the kernel's lower modules imports ``_kernel.verdict`` (the resampled verdicts of
    whole clusters, which need both, live in ``_kernel.resampled``)."""
    lower = ["sufficient", "quantiles", "variance", "binomial", "pvalues", "paired_intervals"]
    bad = [f"_kernel.{m} imports {target}" for m in lower
           for target, _, _ in _imports(f"{PKG}._kernel.{m}") if target.startswith(f"{PKG}._kernel.verdict")]
    assert not bad, bad


def test_the_architecture_page_is_generated_from_the_tree_and_the_registries():
    """docs/architecture.md's map (every module, with its docstring's first sentence) and its table of
    registries (their entries) are written by scripts/architecture.py; this fails when they are stale
    (the page had lost runs/, rankings/, subsets/ and four of the ten formats)."""
    import subprocess
    import sys

    script = SRC.parents[1] / "scripts" / "architecture.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_the_command_line_lays_out_no_table():
    """Tables are views in ``report/`` (``report/tables.py``, the report's views) that the terminal, the
    Markdown and the notebook share; ``cli/`` calls them. It calls no ``print_table``, builds no rich
    ``Table`` and writes no Markdown table of its own (27 ``print_table`` calls were in ``cli/``)."""
    bad = []
    for path in sorted((SRC / "cli").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in {"print_table", "Table", "add_column"}:
                    bad.append(f"cli/{path.name}:{node.lineno} calls {name}")
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rich.table"):
                bad.append(f"cli/{path.name}:{node.lineno} imports rich.table")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "| --- |" in node.value:
                bad.append(f"cli/{path.name}:{node.lineno} writes a Markdown table")
    assert not bad, bad
