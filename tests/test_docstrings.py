"""Every public function documents itself the numpydoc way: Parameters (each parameter of its
signature), Returns and a runnable Example (the examples run as doctests with the package's own
``--doctest-modules``), and every family has a reference page in the docs site.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import llm_power

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = sorted(n for n in llm_power.__all__ if inspect.isfunction(getattr(llm_power, n)))


def _section(doc: str, title: str) -> str | None:
    match = re.search(rf"^{title}\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.M | re.S)
    return None if match is None else match.group(1)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_function_has_parameters_returns_and_an_example(name):
    func = getattr(llm_power, name)
    doc = inspect.getdoc(func) or ""
    params = _section(doc, "Parameters")
    assert params is not None, f"{name}: no Parameters section"
    assert _section(doc, "Returns") is not None, f"{name}: no Returns section"
    examples = _section(doc, "Examples")
    assert examples is not None and ">>> " in examples, f"{name}: no Examples section with a doctest"
    names = set()
    for line in params.splitlines():  # "a, b : array_like" (or "a, b" alone) documents both
        if re.match(r"^[\w*]", line):
            names.update(p.strip().lstrip("*") for p in line.split(" : ")[0].split(","))
    wanted = [p for p in inspect.signature(func).parameters if not p.startswith("_")]
    missing = [p for p in wanted if p not in names]
    assert not missing, f"{name}: parameters not documented: {missing}"


def test_there_are_public_functions_to_check():
    assert len(FUNCTIONS) >= 70  # the precondition of the test above


def test_every_family_has_a_reference_page():
    pages = {p.stem for p in (ROOT / "docs" / "reference").glob("*.md")}
    for family in ("intervals", "paired", "planning", "multiplicity", "resolution", "gate", "preferences", "passk",
                   "clustering", "sequential", "io", "errors"):
        assert family in pages, family
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in pages:
        assert f"reference/{page}.md" in nav, page
