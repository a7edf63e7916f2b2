"""What a user sees in a real terminal (issue 24): commands run in a pseudo-terminal at 80, 100 and
120 columns, the final screen read by a terminal emulator (pyte; tests/_pty.py).

Piped output never shows a progress bar, which is why no piped test saw bar fragments inside the
report; here the bar is on screen (asserted from the raw stream, with the bar's delay set to 0),
and the final screen must hold the whole report with no fragment, no line past the width and no
cut number.
"""

from __future__ import annotations

import re

import pytest

from _pty import run

WIDTHS = [80, 100, 120]
BAR = "━"


def _pairs_rows(lines: list[str]) -> list[str]:
    start = next(k for k, line in enumerate(lines) if line.startswith("Resolution of"))
    rule = next(k for k in range(start, len(lines)) if lines[k].startswith("──"))
    rows = []
    for line in lines[rule + 1:]:
        if not line[:1].isdigit():
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("columns", WIDTHS)
def test_demo_screen_holds_the_whole_report(columns, tmp_path):
    screen = run(["demo", "--html", "r.html"], columns, cwd=tmp_path, env={"LLM_POWER_PROGRESS_DELAY": "0"})
    assert screen.returncode == 0, screen.text
    assert BAR in screen.raw  # the precondition: a bar was drawn while the work ran
    for name in ("diagnose: pairs and regimes", "rank intervals", "HTML report: charts"):  # each long step named
        assert name in screen.raw, name
    assert BAR not in screen.text and "0:00:" not in screen.text, screen.text
    assert not screen.too_wide(), screen.too_wide()
    lines = screen.lines
    assert lines[0] == "Verdict"  # the report starts on a clean line, nothing before it
    rows = _pairs_rows(lines)
    assert len(rows) == 9  # every pair on one line: none wrapped, none lost
    for k, row in enumerate(rows):
        cells = row.split()
        assert cells[0] == str(k + 1)
        assert sum(c in ("✓", "✗") for c in cells) == 4, row
        assert "…" not in " ".join(cells[3:]), row  # no number is cut
        assert re.fullmatch(r"[+−-]\d+\.\d\d", next(c for c in cells if c[:1] in "+-−")), row
    # the notes on stderr wrap between words at the terminal's width, each one starting a line
    notes = [line for line in lines if line.startswith("llm-power demo: note:")]
    assert notes and "only 14 clusters" in notes[0]


@pytest.mark.parametrize("columns", [80, 100])
def test_diagnose_on_a_folder_leaves_no_file_bar(columns, tmp_path):
    # lm-eval output folders: the reader's "files read" bar, then the report
    import json
    import random

    rng = random.Random(0)
    for k in range(6):
        folder = tmp_path / "runs" / f"org__model-{k}"
        folder.mkdir(parents=True)
        (folder / "results_2026-01-21T03-44-18.458309.json").write_text(json.dumps({"model_name": f"org/model-{k}"}))
        lines = [json.dumps({"doc_id": i, "doc": {}, "target": "0", "filter": "none", "metrics": ["acc"],
                             "acc": float(rng.random() < 0.4 + 0.05 * k)}) for i in range(400)]
        (folder / "samples_alpha_2026-01-21T03-44-18.458309.jsonl").write_text("\n".join(lines) + "\n")
    screen = run(["diagnose", str(tmp_path / "runs")], columns, env={"LLM_POWER_PROGRESS_DELAY": "0"})
    assert screen.returncode == 0, screen.text
    assert "files read" in screen.raw  # the precondition: the reader's bar was drawn
    assert BAR not in screen.text and "files read" not in screen.text, screen.text
    assert screen.lines[0] == "Verdict"
    assert not screen.too_wide(), screen.too_wide()


@pytest.mark.parametrize("columns", WIDTHS)
def test_arena_screen_fits(columns):
    screen = run(["arena", "--demo", "--pairs", "all"], columns, env={"LLM_POWER_PROGRESS_DELAY": "0"})
    assert screen.returncode == 0, screen.text
    assert not screen.too_wide(), screen.too_wide()
    assert BAR not in screen.text
    text = screen.text
    assert text.count("Arena: 6 models") == 1  # the title once
    start = next(k for k, line in enumerate(screen.lines) if line.startswith("Rating gaps"))
    rule = next(k for k in range(start, len(screen.lines)) if screen.lines[k].startswith("──"))
    rows = []
    for line in screen.lines[rule + 1:]:
        if not line.strip() or line.startswith(("A, B:", "gap:")):
            break
        rows.append(line)
    assert len(rows) == 15  # 6 models, all pairs: one line each
    for row in rows:
        assert re.search(r"\d  +[✓✗]( [✓✗])*$", row), row  # q whole, then the marks: the row is not cut


@pytest.mark.parametrize("columns", [80, 100])
def test_judges_screen_fits(columns, shared_data):
    path = shared_data / "preferences" / "mtbench_ko_en_swap" / "battles.csv.gz"
    screen = run(["judges", str(path), "--where", "lang=en", "--resamples", "200"], columns)
    assert screen.returncode == 0, screen.text
    assert not screen.too_wide(), screen.too_wide()
    assert "Position swap" in screen.text and "Qwen2.5-7B-Instruct" in screen.text


@pytest.mark.parametrize("argv", [
    ["gate", "Meta-Llama-3-70B", "Meta-Llama-3_1-70B", "--demo"],  # the verdict line wraps in a terminal
    ["gate", "--no-such-option"],  # a usage error wraps too
    ["compare", "--demo-nothing"],
    ["aggregate", "DATA/formats/lm_eval"],
    ["ppi", "--labeled", "x.csv"],
])
def test_other_commands_fit_80_columns(argv, shared_data, tmp_path):
    argv = [a.replace("DATA", str(shared_data)) for a in argv]
    screen = run(argv, 80, cwd=tmp_path)
    assert screen.lines, screen.raw
    assert not screen.too_wide(), screen.too_wide()
