"""The CI skip guard (tests/_ci_plugin.py) recognises the values CI runners set, and ``.ci/run`` sets one.

GitHub Actions, GitLab CI, CircleCI and Travis export ``CI=true``; others (and ``.ci/run``) ``CI=1``. Under
either a skipped test must fail; unset, empty, ``0``, ``false`` and ``no`` mean a local run.
``tests/test_repository.py`` checks the guard end to end under ``CI=1``; here under ``CI=true``, and
``.ci/run`` is run with stand-ins for ``make``, ``python3``, ``chromium``, ``tmux`` and ``apt-get`` that record
what they were given.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import _ci_plugin

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", ["true", "1", "TRUE", "True", "yes", " true "])
def test_the_values_ci_runners_set_turn_the_guard_on(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert _ci_plugin._ci() is True


@pytest.mark.parametrize("value", ["", "0", "false", "FALSE", "no", None])
def test_a_local_run_is_not_ci(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert _ci_plugin._ci() is False


def test_a_skip_fails_under_ci_true(tmp_path):
    """End to end with the value GitHub Actions sets: the skipped test fails the run."""
    (tmp_path / "test_skip.py").write_text("import pytest\n\ndef test_needs_data():\n    pytest.skip('no data')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "CI": "true",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # -p loads the plugin under test; the others cost ~5 s a start
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_ci_plugin", "-p", "no:cacheprovider",
                          str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout
    assert "1 failed" in out.stdout and "skipped under CI=1" in out.stdout


def _stand_in(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_ci_run_exports_ci_before_make_test(tmp_path, monkeypatch):
    """``.ci/run`` (a copy, beside a ../shared/data) reaches ``make test`` with CI set to a value the guard
    recognises, even when the calling environment has no CI at all."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    (tmp_path / "shared" / "data").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "make.txt"
    _stand_in(bin_dir, "make", f'printf "%s|%s\\n" "${{CI:-}}" "$*" >> "{record}"\n')
    _stand_in(bin_dir, "python3", 'echo "Python 3.x (stand-in)"\n')  # ensurepip and venv "present"
    _stand_in(bin_dir, "chromium", 'echo "Chromium (stand-in)"\n')
    _stand_in(bin_dir, "tmux", 'echo "tmux (stand-in)"\n')
    _stand_in(bin_dir, "apt-get", f'echo "apt-get $*" >> "{tmp_path / "apt.txt"}"; exit 1\n')
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    res = subprocess.run(["bash", str(repo / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "apt.txt").exists()
    calls = [line.split("|") for line in record.read_text().splitlines()]
    assert [args for _, args in calls] == ["test", "test-slow"]  # the fast tier, then the slow one
    value = calls[0][0]
    assert calls[1][0] == value
    monkeypatch.setenv("CI", value)  # the guard's reading of what make saw
    assert _ci_plugin._ci() is True, value
