"""Issue 40, silent collisions and output-folder semantics of ``diagnose --eee DIR``.

Each fails on 7302bb3: ``org/a`` and a model literally named ``org_a-<hash>`` shared one file (one
record replaced the other); a record replaced ``--json DIR/a.json``; a second run into the same folder
was refused; ``DIR/`` was refused; ``--eee -`` made a folder named ``-``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import llm_power as lp

import _cli  # tests/_cli.py


def _run(args, cwd):
    return _cli.run(args, cwd=cwd)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


def _scores(tmp_path, names):
    rng = np.random.default_rng(3)
    rows = ["item," + ",".join(names)]
    rows += [f"q{i}," + ",".join(str(int(v)) for v in rng.random(len(names)) < 0.6) for i in range(200)]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _hash(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_every_model_gets_its_own_record_file(tmp_path):
    """``org/a``, a model literally named like its hashed file, names that differ only in case: one file
    each, each holding its own model (read back by id)."""
    lookalike = "org_a-" + hashlib.sha256(b"org/a").hexdigest()[:8]
    names = ["org/a", lookalike, "Model", "model", "plain"]
    x = (np.random.default_rng(0).random((300, len(names))) < 0.6).astype(float)
    files = lp.write_eee(lp.diagnose(x, models=names), tmp_path / "records")
    assert len({f.name.lower() for f in files}) == len(names)  # distinct even on a case-insensitive disk
    ids = {json.loads(f.read_text(encoding="utf-8"))["model_info"]["id"] for f in files}
    assert ids == set(names)
    assert (tmp_path / "records" / "plain.json").is_file()  # a safe, unique name is kept as it is


def test_a_second_run_writes_into_the_folder_and_a_trailing_slash_is_a_folder(tmp_path):
    data = _scores(tmp_path, ["a", "b", "c"])
    before = _hash(data)
    for folder in ("out", "out", "out/"):
        res = _run(["diagnose", str(data), "--eee", folder], tmp_path)
        assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.json", "b.json", "c.json"]
    assert _hash(data) == before


@pytest.mark.parametrize(("extra", "phrase"), [
    (["--eee", "-"], "cannot be '-'"),
    (["--eee", "out", "--json", "out/a.json"], "would replace 'out/a.json'"),
    (["--eee", "same", "--json", "same"], "both an output folder and an output file"),
])
def test_folders_that_cannot_hold_the_records_are_usage_errors(tmp_path, extra, phrase):
    data = _scores(tmp_path, ["a", "b", "c"])
    before = sorted(p.name for p in tmp_path.iterdir())
    res = _run(["diagnose", str(data), *extra], tmp_path)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1 and phrase in lines[0], res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, no folder named '-'
