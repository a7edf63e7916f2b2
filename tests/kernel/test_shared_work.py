"""Work the cluster regime shares instead of repeating (issue 44's all-pairs speed): the per-cluster
Gram matrices give the overall both-right counts, and a Student-t quantile over many degrees of
freedom is kept for the next call with the same ones. Oracles: a direct count of the items and
scipy's ``t.isf`` element by element."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power._kernel import quantiles
from llm_power._kernel.sufficient import binary_cluster_both, binary_cluster_counts
from llm_power.matrix import ScoreMatrix


@pytest.mark.parametrize(("m", "all_pairs"), [(6, True), (150, True), (600, False)])
def test_per_cluster_counts_add_up_to_the_items_both_got_right(m, all_pairs) -> None:
    rng = np.random.default_rng(m)
    n, g = 700, 9
    x = (rng.random((n, m)) < rng.uniform(0.2, 0.9, m)).astype(np.uint8)
    codes = rng.integers(0, g, n)
    if all_pairs:
        i, j = np.triu_indices(m, 1)
    else:  # adjacent pairs of many models: the per-pair path
        i, j = np.arange(m - 1), np.arange(1, m)
    col, disc, total = binary_cluster_both(x, i, j, codes, g)
    xi, xj = x[:, i].astype(int), x[:, j].astype(int)
    assert total.tolist() == (xi * xj).sum(axis=0).tolist()
    for k in range(g):
        rows = codes == k
        assert disc[k].tolist() == (xi[rows] != xj[rows]).sum(axis=0).tolist()
    assert [a.tolist() for a in binary_cluster_counts(x, i, j, codes, g)] == [col.tolist(), disc.tolist()]


def test_the_clustered_diagnosis_is_the_same_with_the_counts_shared() -> None:
    """diagnose through a ScoreMatrix (both counts kept for the cluster sums) equals the same scores
    given as an array with the labels coded again (nothing kept between the calls)."""
    rng = np.random.default_rng(3)
    n, m = 900, 40
    x = (rng.random((n, m)) < rng.uniform(0.3, 0.8, m)).astype(np.uint8)
    labels = rng.integers(0, 12, n)
    a = lp.diagnose(x, cluster=labels, pairs="all", cluster_resamples=0, rng=0).to_frame()
    sm = ScoreMatrix(items=list(range(n)), models=[f"model_{k}" for k in range(m)], scores=x, clusters=list(labels))
    b = lp.diagnose(sm, pairs="all", cluster_resamples=0, rng=0).to_frame()
    for col in ("b", "c", "pvalue_cluster", "cluster_ci_low", "cluster_ci_high", "q_cluster", "cluster_df"):
        assert np.array_equal(a[col].to_numpy(), b[col].to_numpy(), equal_nan=True), col
    assert "_cluster_counts" not in sm.__dict__  # taken once, not kept


def test_kept_t_quantiles_are_scipys_and_never_another_arrays() -> None:
    rng = np.random.default_rng(0)
    df1 = rng.uniform(0.7, 40.0, 20_000)
    df2 = df1.copy()
    df2[123] += 1e-9  # one value apart: its own quantiles
    for p in (0.025, 0.2, 0.975):
        want1, want2 = stats.t.ppf(p, df1), stats.t.ppf(p, df2)
        for _ in range(2):  # the second call reads what the first kept
            got1 = quantiles._quantile(p, df1)
            got2 = quantiles._quantile(p, df2)
            np.testing.assert_allclose(got1, want1, rtol=1e-12)
            np.testing.assert_allclose(got2, want2, rtol=1e-12)
            assert got1[123] != got2[123]
    got = quantiles._quantile(0.025, df1)
    got[:] = 0.0  # a caller's change to its copy is not kept
    np.testing.assert_allclose(quantiles._quantile(0.025, df1), stats.t.ppf(0.025, df1), rtol=1e-12)
    assert len(quantiles._MEMO) <= quantiles._MEMO_SIZE
