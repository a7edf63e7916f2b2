"""Issue 40, messages: a command's error is in the command's words -- the flag, not the Python
parameter; the run's label, not a cluster's. Both cases fail on 7302bb3 ("missing cluster label" for a
run column; ``on_missing='intersect'`` on the command line).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "llm_power", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def _one_error_line(out, command):
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 1 and len(lines) == 1, out.stderr
    assert lines[0].startswith(f"llm-power {command}: error: ") and "Traceback" not in out.stderr
    return lines[0]


@pytest.mark.parametrize("command", [["noise"], ["diagnose"], ["plan", "runs"]])
def test_a_missing_run_label_is_called_a_run_label(tmp_path, command):
    rows = ["model,run,item,score"] + [f"{m},{'' if (m, r, i) == ('a', 1, 3) else r},q{i},{(i + r) % 2}"
                                       for m in "ab" for r in range(3) for i in range(40)]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    extra = ["--delta", "0.05"] if command == ["plan", "runs"] else []
    line = _one_error_line(_run([*command, str(path), "--run", "run", *extra], tmp_path), " ".join(command))
    assert "field 'run': missing run label" in line and "cluster" not in line, line
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_model_lacking_items_is_told_the_flag(tmp_path):
    rows = ["model,run,item,score"] + [f"{m},{r},q{i},{(i + r) % 2}" for m in "ab" for r in range(3)
                                       for i in range(50 if m == "a" else 48)]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    line = _one_error_line(_run(["noise", str(path), "--run", "run"], tmp_path), "noise")
    assert "--on-missing intersect keeps the common ones" in line and "on_missing" not in line, line
