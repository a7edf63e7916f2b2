"""The fused all-pairs pass of 0/1 pairs (one block in cache, constants once, exact pairs redone)
gives the same bits as the per-quantity functions it stands for, applied pair set by pair set."""

from __future__ import annotations

import numpy as np
import pytest

from llm_power._kernel import verdict as _verdict
from llm_power._kernel.binary_pairs import binary_pair_columns
from llm_power._kernel.paired_intervals import mcnemar_interval
from llm_power._kernel.verdict import EXACT_MAX_DISCORDANT, iid_verdict, mcnemar_test


def _leaderboard(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    base = rng.random((n, 1)) < 0.6
    x = (rng.random((n, m)) < rng.uniform(0.2, 0.9, m)).astype(float)
    x[:, :8] = np.where(rng.random((n, 8)) < 0.004, 1 - base, base)  # near-copies: few discordant items
    x[:, 8] = 1 - x[:, 9]  # every item discordant, one way: zero plug-in variance
    x[:, 10] = x[:, 11]  # identical models: no discordant item
    x[:, 12], x[:, 13] = 1.0, 0.0
    return x


def _reference(x: np.ndarray, level: float, alpha: float, power: float) -> dict[str, np.ndarray]:
    n, m = x.shape
    i, j = (k.astype(np.int32) for k in np.triu_indices(m, k=1))
    b = np.array([np.sum((x[:, p] == 1) & (x[:, q] == 0)) for p, q in zip(i, j, strict=True)], dtype=float)
    c = np.array([np.sum((x[:, p] == 0) & (x[:, q] == 1)) for p, q in zip(i, j, strict=True)], dtype=float)
    delta = (b - c) / n
    var = np.maximum((b + c) / n - delta * delta, 0.0)
    exact = (b + c) < EXACT_MAX_DISCORDANT
    pvalue = np.where(exact, mcnemar_test(b, c, "mcnemar_exact", "two-sided")[1],
                      mcnemar_test(b, c, "mcnemar_asymptotic", "two-sided")[1])
    lo_a, hi_a = mcnemar_interval(b, c, n, variant="asymptotic", level=level)
    lo_e, hi_e = mcnemar_interval(b, c, n, variant="exact", level=level)
    v = iid_verdict(delta, var, n, pvalue, alpha=alpha, power=power, alternative="two-sided", b=b, c=c)
    return {"b": b, "c": c, "delta": delta, "ss": (b + c) - n * delta * delta, "var": var, "pvalue": pvalue,
            "exact": exact, "ci_low": np.where(exact, lo_e, lo_a), "ci_high": np.where(exact, hi_e, hi_a),
            "n_star": v.n_star, "q": v.q, "mde": v.mde, "resolved": v.resolved,
            "regime": np.searchsorted(np.array(["degenerate", "exact", "plug-in"]), v.regime.astype(str))}


@pytest.mark.parametrize(("n", "m", "level", "alpha", "power", "block"),
                         [(2_000, 40, 0.95, 0.05, 0.8, 1 << 16), (300, 30, 0.9, 0.01, 0.9, 37),
                          (24, 25, 0.95, 0.05, 0.8, 50)])
def test_fused_pass_equals_the_per_quantity_functions(monkeypatch, n, m, level, alpha, power, block):
    x = _leaderboard(np.random.default_rng(n + m), n, m)
    monkeypatch.setattr(_verdict, "PAIR_BLOCK", block)
    i, j = (k.astype(np.int32) for k in np.triu_indices(m, k=1))
    right = x.sum(axis=0)
    both = (x.T @ x)[i, j].astype(np.float32)
    got = binary_pair_columns(both, right, i, j, n, confidence_level=level, alpha=alpha, power=power)
    want = _reference(x, level, alpha, power)
    assert want["exact"].any() and (want["var"] == 0).any()  # the exact branch is met
    assert (~want["exact"]).any() == (n > EXACT_MAX_DISCORDANT)  # and the asymptotic one unless n < 25
    names = {0: "plug-in", 1: "exact"}  # regime codes (REGIME_NAMES order)
    for key, value in want.items():
        if key == "regime":
            assert [names[int(r)] for r in got[key]] == [("degenerate", "exact", "plug-in")[int(r)] for r in value]
            continue
        np.testing.assert_array_equal(got[key], value.astype(got[key].dtype), err_msg=key)
