"""The README's two commands and CI stay true."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_shows_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme


def test_ci_runs_make_test_and_fails_on_no_tests():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\s*make test\b", ci, re.M)
    assert "set -e" in ci


def test_makefile_targets_create_the_venv():
    mk = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", mk, re.M) and re.search(r"^test:", mk, re.M)
    assert "-m venv" in mk and "llm-power demo" in mk and "pytest" in mk
