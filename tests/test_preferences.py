"""Bradley-Terry: ratings against evalica's published golden file on the LLMFAO crowd votes,
the sandwich covariance against statsmodels' GLM (HC0, and clustered without small-sample
correction) on the same design, and coverage of rating-difference intervals by simulation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from llm_power import bradley_terry
from llm_power.errors import DataError


@pytest.fixture
def llmfao(shared_data):
    return pd.read_csv(shared_data / "preferences" / "llmfao" / "battles.csv.gz")


def test_ratings_equal_evalicas_golden_file(llmfao, shared_data):
    crowd = llmfao[llmfao["judge"].str.startswith("crowd")]
    res = bradley_terry(crowd)
    gold = pd.read_csv(shared_data / "preferences" / "llmfao" / "evalica_golden.csv")
    gold = gold[gold["algorithm"] == "bradley_terry"].set_index("item")["score"]
    ours = pd.Series(res.strengths(), index=res.models)
    assert sorted(gold.index) == res.models
    np.testing.assert_allclose(ours[gold.index].to_numpy(), gold.to_numpy(), rtol=1e-6)


def _design(frame, models):
    code = {m: k for k, m in enumerate(models)}
    x = np.zeros((len(frame), len(models)))
    x[np.arange(len(frame)), [code[m] for m in frame["model_a"]]] += 1.0
    x[np.arange(len(frame)), [code[m] for m in frame["model_b"]]] -= 1.0
    y = frame["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    return x, y


@pytest.mark.parametrize("clustered", [False, True])
def test_sandwich_equals_statsmodels_glm(llmfao, clustered):
    import statsmodels.api as sm

    battles = llmfao[llmfao["judge"] == "gpt-4"].reset_index(drop=True)
    groups = battles["question_id"].to_numpy()
    res = bradley_terry(battles, cluster=groups if clustered else None)
    x, y = _design(battles, res.models)
    ref = len(res.models) - 1  # statsmodels: the last model is the reference (coefficient 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"cov_type": "cluster", "cov_kwds": {"groups": groups, "use_correction": False}} if clustered \
            else {"cov_type": "HC0"}
        fit = sm.GLM(y, x[:, :ref], family=sm.families.Binomial()).fit(tol=1e-13, **kwargs)
    diff = np.eye(len(res.models))[:ref] - np.eye(len(res.models))[ref]  # theta_k - theta_ref
    np.testing.assert_allclose(diff @ res.ratings, fit.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(diff @ res.covariance @ diff.T, fit.cov_params(), rtol=1e-7, atol=1e-12)
    lo, hi = res.difference_ci(res.models[0], res.models[ref])
    se = float(np.sqrt(fit.cov_params()[0, 0]))
    assert (lo, hi) == pytest.approx((fit.params[0] - 1.959963984540054 * se, fit.params[0] + 1.959963984540054 * se))


def test_elo_scale_and_anchor():
    battles = {"model_a": ["x", "x", "y", "x", "z", "y"], "model_b": ["y", "z", "z", "y", "x", "z"],
               "winner": ["model_a", "model_a", "tie", "model_b", "model_b", "model_a"]}
    res = bradley_terry(battles)
    elo = res.elo(anchor=("z", 800.0))
    assert elo[2] == 800.0
    np.testing.assert_allclose(np.diff(elo), 400 / np.log(10) * np.diff(res.ratings), rtol=1e-12)
    assert res.elo().mean() == pytest.approx(1000.0)


def test_bad_battles_are_one_line_errors():
    with pytest.raises(DataError, match="winner 'left'"):
        bradley_terry({"model_a": ["x"], "model_b": ["y"], "winner": ["left"]})
    with pytest.raises(DataError, match="against itself"):
        bradley_terry({"model_a": ["x"], "model_b": ["x"], "winner": ["tie"]})
    with pytest.raises(DataError, match="columns model_a"):
        bradley_terry({"a": [1]})


def test_difference_intervals_cover_in_simulation():
    """Six models, 3,000 iid battles per arena: the 95% interval of theta_0 - theta_5 covers the
    true difference in 0.94-0.96 of 1,000 arenas (Monte-Carlo SE 0.007).
    """
    rng = np.random.default_rng(21)
    theta = np.array([0.6, 0.3, 0.1, 0.0, -0.4, -0.6])
    names = [f"m{k}" for k in range(6)]
    hits = 0
    for _ in range(1000):
        i = rng.integers(0, 6, 3000)
        j = (i + rng.integers(1, 6, 3000)) % 6
        p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
        win = rng.random(3000) < p
        res = bradley_terry({"model_a": np.array(names, dtype=object)[i], "model_b": np.array(names, dtype=object)[j],
                             "winner": np.where(win, "model_a", "model_b")})
        lo, hi = res.difference_ci("m0", "m5")
        hits += lo <= theta[0] - theta[5] <= hi
    assert 0.94 <= hits / 1000 <= 0.96


def _arena(rng, prompts, per=40, sd=0.8):
    """Battles on prompts that shift each model's strength (model x prompt effects, SD ``sd``):
    votes on one prompt are not independent.
    """
    theta = np.array([0.4, 0.2, 0.0, -0.2, -0.4])
    names = np.array([f"m{k}" for k in range(5)], dtype=object)
    q = np.repeat(np.arange(prompts), per)
    i = rng.integers(0, 5, prompts * per)
    j = (i + rng.integers(1, 5, prompts * per)) % 5
    u = rng.normal(0, sd, (prompts, 5))
    win = rng.random(prompts * per) < 1 / (1 + np.exp(-(theta[i] - theta[j] + u[q, i] - u[q, j])))
    return {"model_a": names[i], "model_b": names[j], "winner": np.where(win, "model_a", "model_b")}, q


@pytest.mark.slow
def test_clustered_intervals_cover_where_iid_ones_do_not():
    """60 prompts x 40 battles with prompt effects, 1,000 arenas. The estimand is the Bradley-Terry
    difference the fit targets under this distribution (its pseudo-true value, from one arena of
    50,000 prompts): the prompt-clustered 95% interval covers it (observed 0.950), the iid one
    does not (observed 0.773).
    """
    star = bradley_terry(_arena(np.random.default_rng(0), 50_000)[0])
    true = star.ratings[0] - star.ratings[4]
    rng = np.random.default_rng(23)
    iid = clustered = 0
    for _ in range(1000):
        battles, prompts = _arena(rng, 60)
        lo, hi = bradley_terry(battles).difference_ci("m0", "m4")
        iid += lo <= true <= hi
        lo, hi = bradley_terry(battles, cluster=prompts).difference_ci("m0", "m4")
        clustered += lo <= true <= hi
    assert 0.93 <= clustered / 1000 <= 0.97  # Monte-Carlo SE 0.007
    assert iid / 1000 < 0.90


# ---- judge agreement -------------------------------------------------------------------------

def _krippendorff_by_definition(a, b):
    """Nominal alpha from its definition: disagreement within items over all pairs of values."""
    values = np.concatenate([a, b])
    d_o = np.mean(a != b)  # each item: 2 ordered pairs, disagreeing or not
    n = values.size
    d_e = (np.sum(values[:, None] != values[None, :])) / (n * (n - 1))
    return 1.0 - d_o / d_e


def test_kappa_reproduces_pandalm_and_statsmodels(shared_data):
    from statsmodels.stats.inter_rater import cohens_kappa

    from llm_power import judge_agreement

    frame = pd.read_csv(shared_data / "preferences" / "pandalm_testset" / "battles.csv.gz")
    wide = frame.pivot(index="item_id", columns="judge", values="winner")
    published = {("annotator1", "annotator2"): 0.85, ("annotator1", "annotator3"): 0.88,
                 ("annotator2", "annotator3"): 0.86}  # PandaLM README
    for (a, b), kappa in published.items():
        res = judge_agreement(wide[a], wide[b], rng=0)
        assert round(res.kappa, 2) == kappa
        table = pd.crosstab(wide[a], wide[b]).reindex(index=res.categories, columns=res.categories, fill_value=0)
        assert res.kappa == pytest.approx(cohens_kappa(table.to_numpy()).kappa, rel=1e-12)
        assert res.agreement == pytest.approx(np.mean(wide[a] == wide[b]), rel=1e-12)
        assert res.alpha == pytest.approx(_krippendorff_by_definition(wide[a].to_numpy(), wide[b].to_numpy()),
                                          rel=1e-9)
        assert res.kappa_ci.low < res.kappa < res.kappa_ci.high


def test_agreement_intervals_cover_in_simulation():
    """Two noisy judges of 300 items (true agreement 0.8 with a 3-label truth): the 95% bootstrap
    interval of percent agreement covers the population value in 0.93-0.97 of 400 panels.
    """
    from llm_power import judge_agreement

    rng = np.random.default_rng(24)
    labels = np.array(["model_a", "model_b", "tie"], dtype=object)
    hits = 0
    for _ in range(400):
        truth = rng.choice(3, 300, p=[0.45, 0.45, 0.10])
        a = np.where(rng.random(300) < 0.9, truth, rng.integers(0, 3, 300))
        b = np.where(rng.random(300) < 0.9, truth, rng.integers(0, 3, 300))
        res = judge_agreement(labels[a], labels[b], n_resamples=1000, rng=rng)
        # P(agree) = P(both keep) + P(one keeps, other redraws the same) + P(both redraw equal)
        p = 0.81 + 2 * 0.9 * 0.1 / 3 + 0.01 / 3
        hits += res.agreement_ci.low <= p <= res.agreement_ci.high
    assert 0.93 <= hits / 400 <= 0.97
