"""Style control and sampling weights carried through the arena report (issue 46, parts 2, 3 and 5):
``arena_diagnose(covariates=, weights=)`` and ``llm-power arena --covariate/--weights``.

The oracle is statsmodels' logistic GLM on the same battles (the style-controlled gaps, their robust
variances and the coefficients), and the package's plain ``bradley_terry`` for the raw ratings; the
verdicts are checked against the Wald test they are built on (one verdict).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import statsmodels.api as sm  # a test dependency (pyproject [test])

import llm_power as lp
from llm_power.preferences._arena import ELO

from .._cli import run


def _battles(n: int, m: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, m, n)
    ib = (ia + rng.integers(1, m, n)) % m
    theta = np.linspace(0.5, -0.5, m)
    length = rng.normal(0, 1, n)
    prompt = rng.integers(0, n // 4, n)
    eta = theta[ia] - theta[ib] + 0.6 * length + rng.normal(0, 0.5, n // 4)[prompt]
    y = rng.random(n) < 1 / (1 + np.exp(-eta))
    names = [f"model-{k}" for k in range(m)]
    return pd.DataFrame({"model_a": [names[k] for k in ia], "model_b": [names[k] for k in ib],
                         "winner": np.where(y, "model_a", "model_b"), "length_diff": length,
                         "prompt": prompt, "ipw": rng.uniform(0.5, 2.5, n)})


def _glm(frame: pd.DataFrame, models: list[str], *, weights: bool, cluster: bool) -> object:
    n, m = len(frame), len(models)
    z = np.zeros((n, m))
    idx = {x: k for k, x in enumerate(models)}
    z[np.arange(n), frame["model_a"].map(idx)] += 1
    z[np.arange(n), frame["model_b"].map(idx)] -= 1
    x = np.column_stack([z[:, 1:], frame["length_diff"]])
    y = (frame["winner"] == "model_a").to_numpy(float)
    kw = {"var_weights": frame["ipw"].to_numpy()} if weights else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sm.GLM(y, x, family=sm.families.Binomial(), **kw)
        if cluster:
            return model.fit(cov_type="cluster", cov_kwds={"groups": frame["prompt"].to_numpy(),
                                                             "use_correction": False}, tol=1e-12)
        return model.fit(cov_type="HC0", tol=1e-12)


@pytest.mark.parametrize(("weights", "cluster"), [(False, False), (True, False), (True, True)])
def test_style_controlled_gaps_and_coefficients_equal_the_glm(weights: bool, cluster: bool) -> None:
    frame = _battles(3000, 5, 11)
    diag = lp.arena_diagnose(frame, covariates=["length_diff"], weights="ipw" if weights else None,
                             cluster="prompt" if cluster else None, pairs="all")
    models = sorted(frame["model_a"].unique())
    res = _glm(frame, models, weights=weights, cluster=cluster)
    m = len(models)
    theta = np.r_[0.0, res.params[: m - 1]]
    cov = np.zeros((m, m))
    cov[1:, 1:] = res.cov_params()[: m - 1, : m - 1]
    g = frame["prompt"].nunique()
    scale = g / (g - 1) if cluster else 1.0  # CR1's G/(G-1), without statsmodels' (N-1)/(N-K)
    c = diag.columns
    ia = np.array([models.index(x) for x in c["model_a"]])
    ib = np.array([models.index(x) for x in c["model_b"]])
    np.testing.assert_allclose(c["gap"], theta[ia] - theta[ib], atol=1e-6)
    se = np.sqrt((cov[ia, ia] + cov[ib, ib] - 2 * cov[ia, ib]) * scale)
    np.testing.assert_allclose(c["se_cluster"] if cluster else c["se"], se, rtol=1e-5)
    st = diag.style
    assert st["covariate"] == ["length_diff"]
    np.testing.assert_allclose(st["coefficient"], res.params[m - 1:], atol=1e-6)
    np.testing.assert_allclose(st["se"], np.sqrt(np.diag(res.cov_params())[m - 1:] * scale), rtol=1e-5)
    df = g - 1 if cluster else np.inf
    z = st["coefficient"] / st["se"]
    p = 2 * (stats.t.sf(abs(z), df) if cluster else stats.norm.sf(abs(z)))
    np.testing.assert_allclose(st["pvalue"], np.maximum(p, np.finfo(float).tiny), rtol=1e-8)
    q = stats.t.ppf(0.975, df) if cluster else stats.norm.ppf(0.975)
    np.testing.assert_allclose(st["elo_ci_low"], ELO * (st["coefficient"] - q * st["se"]), rtol=1e-10)
    assert abs(st["coefficient"][0] - 0.6) < 0.15  # the simulated style effect is recovered


def test_raw_elo_is_the_fit_without_covariates_and_the_verdict_is_the_style_controlled_test() -> None:
    frame = _battles(4000, 6, 12)
    diag = lp.arena_diagnose(frame, covariates=["length_diff"], cluster="prompt")
    raw = lp.bradley_terry(frame)
    raw_elo = dict(zip(raw.models, raw.elo(), strict=True))
    np.testing.assert_allclose(diag.ranks["raw_elo"], [raw_elo[x] for x in diag.models], atol=1e-8)
    styled = lp.bradley_terry(frame, covariates=["length_diff"], cluster="prompt")
    elo = dict(zip(styled.models, styled.elo(), strict=True))
    np.testing.assert_allclose(diag.ranks["elo"], [elo[x] for x in diag.models], atol=1e-8)
    c = diag.columns
    # one verdict: each printed interval excludes 0 exactly when its test rejects at 1 - level
    for low, high, p in [("elo_ci_low", "elo_ci_high", "pvalue"),
                         ("cluster_elo_ci_low", "cluster_elo_ci_high", "pvalue_cluster")]:
        excludes = (np.asarray(c[low]) > 0) | (np.asarray(c[high]) < 0)
        np.testing.assert_array_equal(excludes, np.asarray(c[p]) < 0.05)
    for col in ("resolved", "resolved_cluster", "resolved_corrected", "resolved_anytime"):
        assert not np.any(np.asarray(c[col]) & (np.asarray(c["pvalue"]) >= 0.05))  # never resolved untested
    assert not np.any(np.asarray(c["resolved_cluster"]) & ~np.asarray(c["resolved"]))  # never looser than IID
    assert diag.settings["covariates"] == ["length_diff"] and diag.ranks["fragility"] is None


def test_weights_alone_give_a_weighted_arena() -> None:
    frame = _battles(2000, 4, 13)
    diag = lp.arena_diagnose(frame, weights="ipw")
    fit = lp.bradley_terry(frame, weights="ipw")
    elo = dict(zip(fit.models, fit.elo(), strict=True))
    np.testing.assert_allclose(diag.ranks["elo"], [elo[x] for x in diag.models], atol=1e-8)
    assert diag.style["covariate"] == [] and diag.settings["weights"] == "ipw"
    assert "raw_elo" in diag.ranks


def test_the_arena_command_shows_style_control_everywhere(tmp_path: object) -> None:
    frame = _battles(3000, 5, 14)
    frame = frame.replace({"model_a": {"model-0": "<b>x</b>"}, "model_b": {"model-0": "<b>x</b>"}})  # untrusted
    path = tmp_path / "battles.csv"  # type: ignore[operator]
    frame.to_csv(path, index=False)
    out = run(["arena", str(path), "--covariate", "length_diff", "--weights", "ipw", "--cluster", "prompt",
               "--json", tmp_path / "a.json", "--html", tmp_path / "a.html",  # type: ignore[operator]
               "--markdown", tmp_path / "a.md"], env={"COLUMNS": "100"})  # type: ignore[operator]
    assert out.returncode == 0, out.stderr
    assert "raw Elo" in out.stdout and "Style control" in out.stdout and "length_diff" in out.stdout
    assert "style-controlled" in out.stdout and "weighted by 'ipw'" in out.stdout
    payload = json.loads((tmp_path / "a.json").read_text())  # type: ignore[operator]
    api = lp.arena_diagnose(frame, covariates=["length_diff"], weights="ipw", cluster="prompt", rng=0)
    np.testing.assert_allclose(payload["style"]["coefficient"], api.style["coefficient"], rtol=1e-12)
    np.testing.assert_allclose(payload["ranks"]["raw_elo"], api.ranks["raw_elo"], rtol=1e-12)
    html = (tmp_path / "a.html").read_text()  # type: ignore[operator]
    assert 'id="style-table"' in html and "raw Elo" in html and "<b>x</b>" not in html
    md = (tmp_path / "a.md").read_text()  # type: ignore[operator]
    assert "### Style control" in md and "| length\\_diff |" in md


def test_the_arena_command_refuses_what_it_cannot_fit(tmp_path: object) -> None:
    frame = _battles(600, 4, 15)
    path = tmp_path / "battles.csv"  # type: ignore[operator]
    frame.to_csv(path, index=False)
    out = run(["arena", str(path), "--covariate", "lenght_diff"])
    assert out.returncode != 0 and "--covariate 'lenght_diff': the battles have no such column" in out.stderr
    assert "length_diff" in out.stderr  # the hint
    out = run(["arena", str(path), "--covariate", "length_diff", "--ties", "davidson"])
    assert out.returncode != 0 and "--ties half" in out.stderr
    out = run(["arena", str(path), "--weights", "model_a"])
    assert out.returncode != 0 and "not numeric" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_first_position_advantage_of_real_judges_equals_the_glm() -> None:
    """The bundled MT-Bench judge verdicts in both presentation orders: the covariate +1 when model_a was
    shown first (g1), -1 when swapped (g2). The style-controlled fit equals statsmodels' GLM with the
    question-clustered covariance; the judges' first-position advantage is large and resolved.
    """
    from importlib import resources

    with resources.as_file(resources.files("llm_power") / "data" / "mtbench_swap_battles.csv.gz") as path:
        b = pd.read_csv(path)
    b = b[(b["lang"] == "en") & (b["judge"] == "Qwen2.5-7B-Instruct")]
    both = pd.concat([b.assign(winner=b["g1_winner"], first=1.0), b.assign(winner=b["g2_winner"], first=-1.0)],
                     ignore_index=True)
    diag = lp.arena_diagnose(both, covariates=["first"], cluster="question_id", pairs="all")
    models = sorted(set(both["model_a"]) | set(both["model_b"]))
    n, m = len(both), len(models)
    z = np.zeros((n, m))
    z[np.arange(n), both["model_a"].map({x: k for k, x in enumerate(models)})] += 1
    z[np.arange(n), both["model_b"].map({x: k for k, x in enumerate(models)})] -= 1
    y = np.select([both["winner"] == "model_a", both["winner"] == "tie"], [1.0, 0.5], 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties as half a win: a quasi-likelihood to statsmodels
        res = sm.GLM(y, np.column_stack([z[:, 1:], both["first"]]), family=sm.families.Binomial()).fit(
            cov_type="cluster", cov_kwds={"groups": both["question_id"].to_numpy(), "use_correction": False},
            tol=1e-12)
    g = both["question_id"].nunique()
    np.testing.assert_allclose(diag.style["coefficient"], res.params[-1:], atol=1e-6)
    np.testing.assert_allclose(diag.style["se"], np.sqrt(np.asarray(res.cov_params())[-1, -1] * g / (g - 1)), rtol=1e-5)
    theta = np.r_[0.0, res.params[: m - 1]]
    ia = np.array([models.index(x) for x in diag.columns["model_a"]])
    ib = np.array([models.index(x) for x in diag.columns["model_b"]])
    np.testing.assert_allclose(diag.columns["gap"], theta[ia] - theta[ib], atol=1e-6)
    assert diag.style["elo_ci_low"][0] > 200  # Qwen2.5-7B favours the answer shown first: > 200 Elo
