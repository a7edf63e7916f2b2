"""Every result type in a real Jupyter kernel (issue 42): a notebook with one cell per result type (the
factories of test_notebook_views.py) is executed with nbclient, as nbconvert --execute does, and each
cell's rich output is the notebook view: its table, its chart where the report has one, no literal
escape and no script.

Slow tier (a kernel and every result type; the in-process checks of the same views are in the fast tier).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from report.test_notebook_views import CHARTS, FACTORIES

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


def test_every_result_type_renders_its_view_in_a_kernel(tmp_path, shared_data):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        f"import sys, warnings\nsys.path.insert(0, {str(HERE)!r})\nwarnings.simplefilter('ignore')\n"
        "from test_notebook_views import FACTORIES")]
    names = sorted(FACTORIES)
    nb.cells += [nbformat.v4.new_code_cell(f"FACTORIES[{name!r}]()") for name in names]
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    for name, cell in zip(names, nb.cells[1:], strict=True):
        results = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert results, (name, cell.outputs)
        html = results[-1]["data"]["text/html"]
        text = re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", html, flags=re.S))
        assert html.startswith('<div class="llmp">') and "<script" not in html.lower(), name
        assert "<table" in html and "<td" in html, name
        assert html.count("<svg") == CHARTS.get(name, 0), name
        assert not re.search(r"\\x[0-9a-f]{2}", text), name
        # the plain-text repr Jupyter keeps beside it is one short line
        plain = results[-1]["data"]["text/plain"]
        assert len(plain) < 2000 and name.split("Result")[0][:6] in plain, (name, plain[:200])
