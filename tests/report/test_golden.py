"""Renderer snapshots (STYLE: CLI and report snapshots): the Markdown and JSON reports of a fixed
input are pinned, so that a format change is deliberate (regenerate with
``python tests/golden/regenerate.py`` and review the diff). The numbers themselves are checked
against oracles in tests/resolution/test_resolution.py and tests/resolution/test_verdict.py."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
sys.path.insert(0, str(GOLDEN))
from regenerate import render  # noqa: E402


def _same(a, b, path="$"):
    """Structural equality; floats to 1e-9 relative (the last bits may differ across BLAS builds)."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), path
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (path, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (path, sorted(a), sorted(b))
        for key in a:
            _same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{k}]")
    else:
        assert a == b, (path, a, b)


@pytest.fixture(scope="module")
def rendered():
    return render()


def test_markdown_report_matches_its_snapshot(rendered):
    assert rendered["report.md"] == (GOLDEN / "report.md").read_text(encoding="utf-8")


def test_json_report_matches_its_snapshot(rendered):
    _same(json.loads(rendered["report.json"]), json.loads((GOLDEN / "report.json").read_text(encoding="utf-8")))
