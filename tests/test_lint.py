"""ruff (configured in pyproject.toml) passes on the whole repository: part of `make test`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return [exe] if Path(exe).exists() else None


def test_ruff_passes():
    ruff = _ruff()
    if ruff is None:  # pragma: no cover - the test extras install ruff; CI has it
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    res = subprocess.run([*ruff, "check", "src", "tests", "benchmarks", "examples", "scripts"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
