"""Shared test fixtures: the location of ../shared and hypothesis settings; under CI=1 a skip fails
(tests/_ci_plugin.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parent / "reference"
SHARED = Path(os.environ.get("LLM_POWER_SHARED", ROOT.parent / "shared"))

pytest_plugins = ["_ci_plugin"]

settings.register_profile("default", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


def table_arrays(n11: int, n10: int, n01: int, n00: int):
    """Two aligned 0/1 arrays with the given 2x2 table (both right, A only, B only, neither)."""
    import numpy as np

    a = np.r_[np.ones(n11), np.ones(n10), np.zeros(n01), np.zeros(n00)]
    b = np.r_[np.ones(n11), np.zeros(n10), np.ones(n01), np.zeros(n00)]
    return a, b


def load_reference(name: str) -> dict:
    """Load an oracle file from tests/reference/."""
    with open(REFERENCE / name, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="session")
def dask_client():
    """One Dask ``LocalCluster`` of 2 single-threaded worker processes per test process (under xdist, one
    per worker), shared by the tests that hand the engine a scheduler; started on first use (~2 s)."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def shared_data_dir() -> Path:
    """:func:`shared_data` for module-scoped fixtures (the same skip, a failure under CI=1)."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"../shared/data not found at {path} (set LLM_POWER_SHARED)")
    return path


@pytest.fixture
def shared_data() -> Path:
    """Path to ../shared/data; skips the test when ../shared is absent -- a failure under CI=1, where
    ../shared is part of the setup (tests/_ci_plugin.py)."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"../shared/data not found at {path} (set LLM_POWER_SHARED)")
    return path


#: tests that take minutes when cold, started first: pytest-xdist hands the collection out in order, and
#: one of these picked up near the end keeps one worker busy while the other has nothing left to run
LONG_FIRST = ("tests/test_typing.py::test_mypy_strict_passes",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move :data:`LONG_FIRST` to the front (the same order in every worker; nothing else moves)."""
    first = [item for item in items if item.nodeid in LONG_FIRST]
    if first:
        items[:] = first + [item for item in items if item.nodeid not in LONG_FIRST]
