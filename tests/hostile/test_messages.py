"""Issue 40, messages: a command's error is in the command's words -- the flag, not the Python
parameter; the run's label, not a cluster's. Both cases fail on 7302bb3 ("missing cluster label" for a
run column; ``on_missing='intersect'`` on the command line).
"""

from __future__ import annotations

import hashlib

import pytest

import _cli  # tests/_cli.py


def _run(args, cwd):
    return _cli.run(args, cwd=cwd)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


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


@pytest.mark.parametrize("where", ["model", "item"])
def test_a_200000_character_name_in_an_error_is_cut_in_the_middle(tmp_path, where):
    """On 7302bb3 the whole 200,000-character name was the error line; now the line keeps the name's
    start and end, says how much was cut, and still names the file."""
    name = "s" + "y" * 199_998 + "e"
    rows = ([f"{name},1,1", f"{name},1,0", "b,1,1"] if where == "model"
            else ["a,x,1", f"a,{name},1", f"a,{name},0", "b,x,0"])
    path = tmp_path / "dup.csv"
    path.write_text("model,item,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    line = _one_error_line(_run(["diagnose", "dup.csv"], tmp_path), "diagnose")
    assert len(line) < 600 and "dup.csv" in line
    cut = len(name) + 2 - 160 - 40  # the quoted name less the 160 characters kept in front and 40 behind
    assert "'syyy" in line and "yyye'" in line and f"[{cut:,} characters]" in line
