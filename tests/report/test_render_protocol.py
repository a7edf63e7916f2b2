"""Rendering by protocol (issue 41): the core is given the report layer (the package installs it) and
never looks it up through ``sys.modules``; the report layer asks a result for what it shows --
``view_kind``, ``report_title()``, ``fields()``, ``summary()`` -- and imports no result class to tell
which view to use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import llm_power as lp
from llm_power.report import notebook

SRC = Path(lp.__file__).resolve().parent


def test_the_core_never_reaches_up_for_the_report_layer():
    for path in (SRC / "_core").glob("*.py"):
        assert "sys.modules" not in path.read_text("utf-8"), path.name


def test_the_notebook_view_imports_no_result_class_to_dispatch():
    tree = ast.parse((SRC / "report" / "notebook.py").read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 2:
            assert node.module.split(".")[0] not in {"resolution", "preferences"}, ast.unparse(node)


@dataclass(frozen=True)
class _Elsewhere:
    """Not a Result of the package: a view needs only the protocol."""

    width: float
    label: str
    view_kind = "generic"

    def report_title(self) -> str:
        return "Elsewhere <b>"

    def fields(self) -> tuple[str, ...]:
        return ("width", "label")

    def summary(self) -> str:
        return "a width of 0.25"


def test_any_object_with_the_protocol_renders():
    html = notebook.fragment(_Elsewhere(0.25, "x"))
    assert "Elsewhere &lt;b&gt;" in html and "a width of 0.25" in html and ">0.25<" in html
    md = notebook.markdown_text(_Elsewhere(0.25, "x"))
    assert md.startswith("## Elsewhere") and "| width | 0.25 |" in md


def test_results_render_through_the_installed_layer():
    import numpy as np

    res = lp.compare(np.r_[np.ones(50), np.zeros(50)], np.r_[np.ones(40), np.zeros(60)])
    assert res._repr_html_().startswith('<div class="llmp">')  # noqa: SLF001
    assert res.report_title().startswith("Paired comparison") and "delta" in res.fields()
    diag = lp.diagnose(np.c_[np.r_[np.ones(50), np.zeros(50)], np.r_[np.ones(40), np.zeros(60)]])
    assert diag.view_kind == "diagnosis" and diag.to_markdown().startswith("# Leaderboard resolution report")


def test_the_data_containers_have_one_line_reprs():
    """ScoreMatrix's repr was 235,813 characters on the demo data and RunScores' 18,993."""
    from llm_power.io.demo import load_mmlu_pro, load_reruns

    matrix, runs = load_mmlu_pro(), load_reruns()
    assert repr(matrix).startswith("ScoreMatrix(12,032 items x 26 models, 0/1 scores, 14 clusters; models: ")
    assert repr(runs).startswith("RunScores(") and "\n" not in repr(runs)
    assert len(repr(matrix)) < 300 and len(repr(runs)) < 300
