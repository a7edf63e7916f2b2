"""Bradley-Terry with battle covariates and weights (``preferences._style.fit_style``, issue 46 part 2-3)
against statsmodels' logistic GLM on the same battles: the ratings (the GLM's model coefficients with one
model as reference, centred) and the covariates' coefficients to 1e-6; the battle-level sandwich equal to
statsmodels' HC0 and the cluster one to its cluster covariance (without its (N-1)/(N-K) factor, with
CR1's G/(G-1)); the weighted fit equal to a weighted GLM; without covariates equal to the package's
own ``bradley_terry``.
"""

from __future__ import annotations

import numpy as np
import pytest

import statsmodels.api as sm  # a test dependency (pyproject [test])

import llm_power as lp
from llm_power.preferences._style import fit_style


def battles(n: int, m: int, seed: int, *, ties: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, m, n)
    ib = (ia + rng.integers(1, m, n)) % m
    theta = np.linspace(0.8, -0.8, m)
    length = rng.normal(0, 1, n)  # length difference (standardised)
    marks = rng.poisson(2, n) - rng.poisson(2, n)  # markdown-count difference
    eta = theta[ia] - theta[ib] + 0.4 * length + 0.1 * marks
    u = rng.random(n)
    p = 1 / (1 + np.exp(-eta))
    y = np.where(u < p, 1.0, 0.0)
    if ties:
        y = np.where(rng.random(n) < 0.1, 0.5, y)
    return {"ia": ia, "ib": ib, "y": y, "x": np.column_stack([length, marks]).astype(float),
            "prompt": rng.integers(0, n // 5, n), "w": rng.uniform(0.5, 3.0, n)}


def design(b: dict[str, np.ndarray], m: int) -> np.ndarray:
    n = b["y"].size
    z = np.zeros((n, m))
    z[np.arange(n), b["ia"]] += 1
    z[np.arange(n), b["ib"]] -= 1
    return np.column_stack([z[:, 1:], b["x"]])  # model 0 the reference


def glm(b: dict[str, np.ndarray], m: int, *, weights: bool = False) -> object:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fractional y (ties as half a win) is a quasi-likelihood to statsmodels
        kw = {"var_weights": b["w"]} if weights else {}
        return sm.GLM(b["y"], design(b, m), family=sm.families.Binomial(), **kw)


def centred(params: np.ndarray, m: int) -> np.ndarray:
    theta = np.r_[0.0, params[: m - 1]]
    return theta - theta.mean()


def test_estimates_equal_a_logistic_glm() -> None:
    m = 6
    b = battles(4000, m, 1)
    fit = fit_style(b["ia"], b["ib"], b["y"], m, covariates=b["x"])
    res = glm(b, m).fit(tol=1e-12)
    np.testing.assert_allclose(fit.ratings, centred(res.params, m), atol=1e-6)
    np.testing.assert_allclose(fit.coefficients, res.params[m - 1:], atol=1e-6)
    assert abs(fit.coefficients[0] - 0.4) < 0.1  # and it recovers the simulated style effect


def test_sandwich_equals_statsmodels_robust_covariances() -> None:
    m = 5
    b = battles(3000, m, 2)
    res = glm(b, m)
    fit = fit_style(b["ia"], b["ib"], b["y"], m, covariates=b["x"])
    hc0 = res.fit(cov_type="HC0", tol=1e-12).cov_params()
    # our covariance is of the centred ratings: map the GLM's (reference-0) parameters to them
    k = hc0.shape[0]
    jac = np.zeros((m + 2, k))
    jac[1:m, : m - 1] = np.eye(m - 1)
    jac[:m] -= jac[:m].mean(axis=0)
    jac[m:, m - 1:] = np.eye(2)
    np.testing.assert_allclose(fit.covariance, jac @ hc0 @ jac.T, rtol=1e-6, atol=1e-12)
    fit_c = fit_style(b["ia"], b["ib"], b["y"], m, covariates=b["x"], groups=b["prompt"])
    g = np.unique(b["prompt"]).size
    cl = res.fit(cov_type="cluster", cov_kwds={"groups": b["prompt"], "use_correction": False},
                 tol=1e-12).cov_params()
    np.testing.assert_allclose(fit_c.covariance, jac @ cl @ jac.T * g / (g - 1), rtol=1e-6, atol=1e-12)
    assert fit_c.df == g - 1


def test_weighted_fit_equals_a_weighted_glm() -> None:
    m = 5
    b = battles(3000, m, 3)
    fit = fit_style(b["ia"], b["ib"], b["y"], m, covariates=b["x"], weights=b["w"])
    res = glm(b, m, weights=True).fit(tol=1e-12)
    np.testing.assert_allclose(fit.ratings, centred(res.params, m), atol=1e-6)
    np.testing.assert_allclose(fit.coefficients, res.params[m - 1:], atol=1e-6)


def test_without_covariates_it_is_the_packages_bradley_terry() -> None:
    m = 5
    b = battles(2000, m, 4)
    names = [f"m{k}" for k in range(m)]
    winner = np.where(b["y"] == 1, "model_a", np.where(b["y"] == 0, "model_b", "tie"))
    frame = {"model_a": [names[k] for k in b["ia"]], "model_b": [names[k] for k in b["ib"]], "winner": winner}
    ref = lp.bradley_terry(frame)
    fit = fit_style(b["ia"], b["ib"], b["y"], m)
    order = [ref.models.index(nm) for nm in names]
    np.testing.assert_allclose(fit.ratings, np.asarray(ref.ratings)[order], atol=1e-8)
    np.testing.assert_allclose(fit.covariance, np.asarray(ref.covariance)[np.ix_(order, order)], rtol=1e-6,
                               atol=1e-12)


def _frame(b: dict[str, np.ndarray], m: int) -> dict[str, object]:
    names = [f"m{k}" for k in range(m)]
    winner = np.where(b["y"] == 1, "model_a", np.where(b["y"] == 0, "model_b", "tie"))
    return {"model_a": [names[k] for k in b["ia"]], "model_b": [names[k] for k in b["ib"]], "winner": winner,
            "length": b["x"][:, 0], "marks": b["x"][:, 1], "w": b["w"], "prompt": b["prompt"]}


def test_the_public_fit_equals_the_weighted_glm_by_column_names() -> None:
    m = 5
    b = battles(3000, m, 5)
    res = lp.bradley_terry(_frame(b, m), covariates=["length", "marks"], weights="w", cluster="prompt")
    ref = glm(b, m, weights=True).fit(tol=1e-12)
    assert res.models == [f"m{k}" for k in range(m)] and res.covariates == ["length", "marks"]
    np.testing.assert_allclose(res.ratings, centred(ref.params, m), atol=1e-6)
    np.testing.assert_allclose(res.coefficients, ref.params[m - 1:], atol=1e-6)
    direct = fit_style(b["ia"], b["ib"], b["y"], m, covariates=b["x"], weights=b["w"], groups=b["prompt"])
    np.testing.assert_allclose(res.coefficient_covariance, direct.covariance[m:, m:], rtol=1e-10)
    assert res.n_clusters == np.unique(b["prompt"]).size and res.df == res.n_clusters - 1
    # an array works as a column does
    arr = lp.bradley_terry(_frame(b, m), covariates=b["x"], weights=b["w"], cluster="prompt")
    np.testing.assert_allclose(arr.coefficients, res.coefficients, rtol=1e-12)


def test_the_public_fit_refuses_what_it_cannot_fit() -> None:
    m = 4
    b = battles(800, m, 6)
    frame = _frame(b, m)
    with pytest.raises(ValueError, match="ties='half' and method='sandwich'"):
        lp.bradley_terry(frame, covariates=["length"], ties="davidson")
    with pytest.raises(lp.DataError, match="no column 'words'"):
        lp.bradley_terry(frame, covariates=["words"])
    bad = dict(frame, w=np.where(np.arange(800) == 7, 0.0, b["w"]))
    with pytest.raises(lp.DataError, match="battle 7: weights 'w' is 0, not a positive finite weight"):
        lp.bradley_terry(bad, weights="w")
    text = dict(frame, length=["long"] * 800)
    with pytest.raises(lp.DataError, match="column 'length' is not numeric"):
        lp.bradley_terry(text, covariates=["length"])
