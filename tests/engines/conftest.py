"""Fixtures of the engine tests (DuckDB, Spark, Ray): the bundled MMLU-Pro results as long Parquet, and
small item shards."""

from __future__ import annotations

import pytest

from .tables import mmlu_long


@pytest.fixture(scope="module")
def mmlu(tmp_path_factory):
    """The bundled MMLU-Pro correctness as one long Parquet file (tables.mmlu_long)."""
    return mmlu_long(tmp_path_factory.mktemp("mmlu"))


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of at most 10,000 rows, so that a test table is cut into many item shards."""
    monkeypatch.setenv("LLM_POWER_SHARD_ROWS", "10000")
