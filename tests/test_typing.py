"""mypy --strict (configured in pyproject.toml) passes on the package: part of `make test`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_passes():
    if importlib.util.find_spec("mypy") is None:  # pragma: no cover - the test extras install mypy; CI has it
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    res = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "Success" in res.stdout
