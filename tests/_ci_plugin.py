"""Under ``CI=1`` (set by ``.ci/run``) a skipped test is a failed test: a CI run cannot go green
because a piece of its setup is missing (../shared/data, an oracle package, Chromium, a linter).

Only the platform skips in :data:`CI_ALLOWED_SKIPS` -- a limitation of the operating system, never of
the test environment -- may still skip, each with its reason. Loaded by ``tests/conftest.py``;
``tests/test_repository.py`` runs it on a file with a skipped test and checks that the run fails.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: reasons (substrings) a test may skip under CI=1, and why each is a platform's, not the setup's
CI_ALLOWED_SKIPS = {
    "RLIMIT_AS is enforced on Linux": "the address-space cap of the memory tests exists on Linux only",
}


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _allowed(reason: str) -> bool:
    return any(text in reason for text in CI_ALLOWED_SKIPS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if _ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = _reason(report.longrepr)
        if not _allowed(reason):
            report.outcome = "failed"
            report.longrepr = f"skipped under CI=1 (CI must run every test; see tests/_ci_plugin.py): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if _ci() and report.skipped:  # a module-level importorskip: the whole file would vanish from the run
        reason = _reason(report.longrepr)
        if not _allowed(reason):
            report.outcome = "failed"
            report.longrepr = f"collection skipped under CI=1 (CI must run every test): {reason}"
