"""mypy --strict (configured in pyproject.toml) passes on the package: part of `make test`.

mypy runs in its incremental mode (its default) with the cache in .mypy_cache at the repository root,
where a developer's own ``mypy`` keeps it: a module is re-checked when it, a module it imports, a stub
or mypy's version or options change (mypy compares each file's size, mtime and hash with the cache), so
an edit that breaks the types still fails here; what is unchanged since the last run is not re-read
(about 1 to 3 minutes of a cold run on the 2-core machine, most of it numpy's, scipy's and pandas'
stubs; a few seconds warm).
"""

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
    res = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "Success" in res.stdout
