"""Results in a real Jupyter kernel (issue 24, item 4): a small notebook is executed with nbclient
and every result's rich output is the notebook view -- escaped names, no script, the numbers of
the result -- and the file writers write what they return.
"""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import llm_power as lp

EVIL = "<img src=x onerror=alert(1)>"

CELLS = [
    "import numpy as np, pandas as pd, llm_power as lp\n"
    "frame = pd.read_csv(MMLU)\n"
    "cols = ['Meta-Llama-3_1-70B-Instruct', 'Meta-Llama-3_1-70B', 'Meta-Llama-3-70B', 'Yi-34B']\n"
    "x = frame[cols].to_numpy(float)\n"
    "names = [EVIL] + cols[1:]\n"
    "diag = lp.diagnose(x, models=names, cluster=frame['category'].to_numpy(), correction='holm')\n"
    "diag",
    "lp.compare(x[:, 1], x[:, 2])",
    "lp.gate(x[:, 2], x[:, 1])",
    "rng = np.random.default_rng(0)\n"
    "lp.pass_at_k_ci((rng.random((200, 10)) < 0.4).astype(int), k=[1, 5], rng=0)",
    "battles = pd.DataFrame({'model_a': [EVIL, 'b', 'c'] * 40, 'model_b': ['b', 'c', EVIL] * 40,\n"
    "                        'winner': ['model_a', 'model_b', 'tie', 'model_b', 'model_a', 'model_a'] * 20})\n"
    "lp.arena_diagnose(battles)",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from conftest import SHARED

    mmlu = SHARED / "data" / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    if not mmlu.is_file():
        pytest.skip("../shared/data not found")  # a failure under CI=1 (tests/_ci_plugin.py)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"MMLU = {str(mmlu)!r}\nEVIL = {EVIL!r}")]
    nb.cells += [nbformat.v4.new_code_cell(code) for code in CELLS]
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}}).execute()
    return nb


def _html(cell) -> str:
    outputs = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert outputs, cell.outputs
    return outputs[-1]["data"]["text/html"]


def test_every_result_renders_in_a_kernel_without_script_and_escaped(executed):
    for cell in executed.cells[1:]:
        html = _html(cell)
        assert "<script" not in html.lower() and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
        assert html.startswith('<div class="llmp">')
    assert "&lt;img src=x onerror=alert(1)&gt;" in _html(executed.cells[1])
    assert "&lt;img src=x onerror=alert(1)&gt;" in _html(executed.cells[5])


def test_the_leaderboard_view_holds_the_reports_numbers(executed, shared_data):
    import pandas as pd

    html = _html(executed.cells[1])
    frame = pd.read_csv(shared_data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz")
    cols = ["Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B", "Meta-Llama-3-70B", "Yi-34B"]
    x = frame[cols].to_numpy(float)
    for k in range(4):  # every model's score, formatted independently
        assert f"{100 * x[:, k].mean():.2f}%" in html
    d = lp.diagnose(x, models=cols, cluster=frame["category"].to_numpy(), correction="holm")
    for delta in d.columns["delta"]:
        assert f"{100 * delta:+.2f}" in html
    assert "Holm" in html and "cluster" in html and html.count("✓") + html.count("✗") == 3 * 3 + 2  # + the legend's (✓) and (✗)


def test_comparison_gate_and_passk_show_their_verdicts(executed):
    assert "Paired comparison" in _html(executed.cells[2])
    gate_html = _html(executed.cells[3])
    assert any(v in gate_html for v in ("PASS", "INCONCLUSIVE", "FAIL"))
    assert "pass@k" in _html(executed.cells[4]).lower() or "pass" in _html(executed.cells[4]).lower()


def test_file_writers(tmp_path):
    rng = np.random.default_rng(2)
    x = (rng.random((300, 3)) < [0.7, 0.6, 0.5]).astype(int)
    d = lp.diagnose(x, models=[EVIL, "b", "c"])
    text = d.to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text() == text and "<!DOCTYPE html>" in text and "<img src=x" not in text
    md = d.to_markdown(tmp_path / "r.md")
    assert (tmp_path / "r.md").read_text() == md and "\\<img src=x" in md  # escaped: shown as text
    js = d.to_json(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(js)
    assert json.loads(js)["models"] == d.models
    c = lp.compare(x[:, 0], x[:, 1])
    assert json.loads(c.to_json())["pvalue"] == c.pvalue
    # the output rules: a symlink at the output path is never followed
    (tmp_path / "target.txt").write_text("keep")
    (tmp_path / "link.html").symlink_to(tmp_path / "target.txt")
    with pytest.raises(ValueError, match="symlink|link"):
        c.to_html(tmp_path / "link.html")
    assert (tmp_path / "target.txt").read_text() == "keep"
