"""The public names, written once: each package's ``_LAZY`` table (name -> the module that defines it)
is the list; its ``__all__`` and its ``if TYPE_CHECKING:`` imports (for type checkers and the
documentation) are generated from it. Usage::

    .venv/bin/python scripts/api.py          # rewrite the generated blocks of every lazy package
    .venv/bin/python scripts/api.py --check  # exit 1 (naming the files) when a block is out of date

``tests/test_api.py`` runs the check, so a name added to a ``_LAZY`` table and nowhere else fails
until this script has written it out (and the docs reference lists it).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "llm_power"
#: what may sit in ``__all__`` beyond the table (the package's version)
EXTRA = {"__version__"}


def lazy_packages() -> list[Path]:
    """Every ``__init__.py`` of the package that keeps a ``_LAZY`` table."""
    return sorted(p for p in SRC.rglob("__init__.py") if "\n_LAZY = {" in p.read_text("utf-8"))


def _table(tree: ast.Module) -> dict[str, str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            return ast.literal_eval(node.value)
    msg = "no _LAZY table"
    raise ValueError(msg)


def _kind(name: str) -> tuple[int, str]:
    """isort's order by type, as ruff applies it: CONSTANTS, then Classes, then functions."""
    if name.isupper() or (name.upper() == name and "_" in name):
        return 0, name
    return (1, name) if name[:1].isupper() else (2, name)


def _imports(table: dict[str, str], indent: str) -> str:
    by_module: dict[str, list[str]] = {}
    for name, module in table.items():
        by_module.setdefault(module, []).append(name)
    lines = []
    for module in sorted(by_module):
        names = sorted(by_module[module], key=_kind)
        one = f"{indent}from {module} import {', '.join(names)}"
        if len(one) <= 120:
            lines.append(one)
        else:
            lines.append(f"{indent}from {module} import (")
            lines += [f"{indent}    {n}," for n in names]
            lines.append(f"{indent})")
    return "\n".join(lines)


def _all(names: list[str]) -> str:
    one = "__all__ = [" + ", ".join(f'"{n}"' for n in names) + "]"
    if len(one) <= 120:
        return one
    return "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]"


def generate(path: Path) -> str:
    """The text of ``path`` with its ``__all__`` and ``TYPE_CHECKING`` imports made from ``_LAZY``."""
    text = path.read_text("utf-8")
    tree = ast.parse(text)
    table = _table(tree)
    lines = text.split("\n")
    current = next(n for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets))
    extra = [n for n in ast.literal_eval(current.value) if n in EXTRA]
    names = sorted([*table, *extra], key=lambda n: (n.startswith("__"), n))
    if names != sorted(names):  # the project's order: plain sort, the version first (it sorts first)
        names = sorted(names)
    checking = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
    head = lines[checking.lineno - 1]
    indent = " " * (len(head) - len(head.lstrip()) + 4)
    # replace from the bottom up so the line numbers above stay valid
    spans = sorted([(current.lineno, current.end_lineno, _all(sorted(names))),
                    (checking.lineno + 1, checking.end_lineno, _imports(table, indent))], reverse=True)
    for start, end, block in spans:
        lines[start - 1:end] = block.split("\n")
    return "\n".join(lines)


def _ruff_sorted(text: str) -> str:
    """The generated text as ruff's import sorting leaves it (the project's lint is the judge)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=SRC, delete=False, encoding="utf-8") as fh:
        fh.write(text)
        tmp = Path(fh.name)
    try:
        ruff = Path(sys.executable).with_name("ruff")
        subprocess.run([str(ruff) if ruff.exists() else "ruff", "check", "--fix", "--select", "I", "--quiet",
                        "--config", str(ROOT / "pyproject.toml"), str(tmp)], check=False, capture_output=True)
        return tmp.read_text("utf-8")
    finally:
        tmp.unlink()


def stale() -> list[Path]:
    """The packages whose generated blocks differ from what their ``_LAZY`` table makes."""
    return [p for p in lazy_packages() if _ruff_sorted(generate(p)) != p.read_text("utf-8")]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        out = stale()
        for path in out:
            print(f"{path.relative_to(ROOT)}: __all__ or the TYPE_CHECKING imports differ from _LAZY "
                  "(run scripts/api.py)", file=sys.stderr)
        return 1 if out else 0
    for path in lazy_packages():
        new = _ruff_sorted(generate(path))
        if new != path.read_text("utf-8"):
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
