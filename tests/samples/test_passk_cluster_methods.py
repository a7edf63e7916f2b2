"""The clustered test of the repeated-samples wing chosen by ``cluster_method`` (issue 44's choice,
taken by ``compare_pass_at_k``, ``pass_at_k_ci``, ``maj_at_k_ci`` and ``llm-power passk``): the numbers
come from elsewhere -- a leave-one-cluster-out loop written here (CV3), the ``wildboottest`` package
(fully enumerated wild cluster bootstrap) and ``lp.compare`` on the per-question estimates (one kernel
function, one seed convention).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from _cli import run as run_cli
from _wild_oracle import wildboottest_pvalue

pytestmark = pytest.mark.filterwarnings("ignore::llm_power.LLMPowerWarning")


def _samples(g: int, n: int = 150, m: int = 4, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two models' 0/1 samples (questions x m) on questions in g clusters with a cluster effect."""
    rng = np.random.default_rng(seed)
    codes = np.r_[np.arange(g), rng.integers(0, g, n - g)]  # every cluster present
    p = np.clip(rng.beta(1.0, 1.3, n) + rng.normal(0, 0.15, g)[codes], 0, 1)
    a = (rng.random((n, m)) < np.clip(p + 0.06, 0, 1)[:, None]).astype(float)
    b = (rng.random((n, m)) < p[:, None]).astype(float)
    return a, b, codes


def _jackknife_se(values: np.ndarray, codes: np.ndarray) -> float:
    """CV3 by its definition: sqrt((G - 1)/G sum_g (mean without cluster g - mean)^2)."""
    g = codes.max() + 1
    theta = np.array([values[codes != k].mean() for k in range(g)])
    return float(np.sqrt((g - 1) / g * np.sum((theta - values.mean()) ** 2)))




def test_cv3_is_the_leave_one_cluster_out_jackknife_at_every_k() -> None:
    a, b, codes = _samples(10)
    ks = [1, 2, 4]
    g = 10
    res = lp.compare_pass_at_k(a, b, ks, cluster=codes, cluster_method="cv3", rng=0)
    assert res.cluster_method == "cv3" and res.n_clusters == g
    na = np.full(a.shape[0], a.shape[1])
    for j, k in enumerate(ks):
        d = lp.pass_at_k(na, a.sum(axis=1), k) - lp.pass_at_k(na, b.sum(axis=1), k)
        se = _jackknife_se(d, codes)
        assert res.standard_error[j] == pytest.approx(se, rel=1e-10)
        assert res.pvalue[j] == pytest.approx(2 * stats.t.sf(abs(d.mean() / se), g - 1), rel=1e-9)
        half = stats.t.ppf(0.975, g - 1) * se
        assert (res.ci_low[j], res.ci_high[j]) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    # one model's pass@k and maj@k: the same jackknife of the per-question values
    one = lp.pass_at_k_ci(a, ks, cluster=codes, cluster_method="cv3")
    want = [_jackknife_se(lp.pass_at_k(na, a.sum(axis=1), k), codes) for k in ks]
    assert one.standard_error == pytest.approx(want, rel=1e-10)
    assert one.df == g - 1 and one.cluster_method == "cv3"
    answers = np.where(a == 1, "right", np.where(b == 1, "near", "far")).astype(object)
    maj = lp.maj_at_k_ci(answers, ["right"] * a.shape[0], [1, 3], cluster=codes, cluster_method="cv3")
    want = [_jackknife_se(lp.maj_at_k(answers, ["right"] * a.shape[0], k), codes) for k in (1, 3)]
    assert maj.standard_error == pytest.approx(want, rel=1e-10)


def test_the_wild_p_value_is_wildboottests_at_each_k() -> None:
    """12 clusters: Rademacher weights, 2^12 = 4,096 sign vectors <= 9,999 draws, so both enumerate them
    all and the p-values are equal (floored at 1/B as every wild p-value of the package)."""
    a, b, codes = _samples(12, n=160, seed=3)
    ks = [1, 3]
    res = lp.compare_pass_at_k(a, b, ks, cluster=codes, cluster_method="wild", rng=0)
    assert res.cluster_method == "wild"
    na = np.full(a.shape[0], a.shape[1])
    for j, k in enumerate(ks):
        d = lp.pass_at_k(na, a.sum(axis=1), k) - lp.pass_at_k(na, b.sum(axis=1), k)
        assert res.pvalue[j] == pytest.approx(max(wildboottest_pvalue(d, codes), 1 / 4096), abs=1e-12)
        # the SE reported is the CR1 SE that studentises the test: G/(G-1) sum_g r_g^2 / N^2
        r = np.bincount(codes, weights=d - d.mean())
        assert res.standard_error[j] == pytest.approx(np.sqrt(12 / 11 * np.sum(r * r)) / d.size, rel=1e-10)
    # the interval inverts the same test: it excludes 0 exactly when p <= 1 - level
    assert ((res.ci_low > 0) | (res.ci_high < 0)).tolist() == (res.pvalue <= 0.05).tolist()
    assert np.all(res.band_ci_low <= res.ci_low) and np.all(res.band_ci_high >= res.ci_high)


def test_the_wild_interval_of_one_model_bounds_where_wildboottest_starts_rejecting() -> None:
    """pass@k of one model: at the interval's lower bound mu0 the WCR test of mean = mu0 (wildboottest
    on the values minus mu0) switches from not rejecting just inside to rejecting just outside."""
    a, _, codes = _samples(12, n=160, seed=3)
    res = lp.pass_at_k_ci(a, [2], cluster=codes, cluster_method="wild", rng=0)
    assert np.isnan(res.df) and res.cluster_method == "wild"
    values = lp.pass_at_k(np.full(a.shape[0], a.shape[1]), a.sum(axis=1), 2)
    low, high = (float(v[0]) for v in res.confidence_interval())
    eps = 1e-3 * float(res.standard_error[0])
    for bound, inside in ((low, low + eps), (high, high - eps)):
        outside = 2 * bound - inside
        assert wildboottest_pvalue(values - inside, codes) > 0.05
        assert wildboottest_pvalue(values - outside, codes) <= 0.05
    lo90, hi90 = (float(v[0]) for v in res.confidence_interval(0.9))  # another level: the same draws
    assert low < lo90 < hi90 < high


def test_one_seed_one_set_of_weights_across_entry_points() -> None:
    """8 clusters: Webb's weights are drawn, not enumerated, so only the same seed gives the same p;
    ``compare`` on the per-question estimates draws the same weights as ``compare_pass_at_k``."""
    a, b, codes = _samples(8, seed=5)
    res = lp.compare_pass_at_k(a, b, [2], cluster=codes, cluster_method="wild", rng=np.random.default_rng(5))
    again = lp.compare_pass_at_k(a, b, [2], cluster=codes, cluster_method="wild", rng=5)
    assert res.pvalue[0] == again.pvalue[0]
    na = np.full(a.shape[0], a.shape[1])
    pa, pb = lp.pass_at_k(na, a.sum(axis=1), 2), lp.pass_at_k(na, b.sum(axis=1), 2)
    pair = lp.compare(pa, pb, cluster=codes, cluster_method="wild", rng=5)
    assert res.pvalue[0] == pytest.approx(pair.pvalue, rel=1e-12)
    ci = pair.confidence_interval()
    assert (res.ci_low[0], res.ci_high[0]) == pytest.approx((ci.low, ci.high), rel=1e-9)
    other = lp.compare_pass_at_k(a, b, [2], cluster=codes, cluster_method="wild", rng=6)
    assert other.pvalue[0] != res.pvalue[0]
    cv3 = lp.compare(pa, pb, cluster=codes, cluster_method="cv3")
    assert lp.compare_pass_at_k(a, b, [2], cluster=codes, cluster_method="cv3").pvalue[0] == pytest.approx(
        cv3.pvalue, rel=1e-10)


def test_cluster_method_is_checked_at_the_edge() -> None:
    a, b, codes = _samples(8)
    answers = np.where(a == 1, "x", "y").astype(object)
    calls = [lambda **kw: lp.compare_pass_at_k(a, b, [1], **kw), lambda **kw: lp.pass_at_k_ci(a, [1], **kw),
             lambda **kw: lp.maj_at_k_ci(answers, ["x"] * a.shape[0], [1], **kw)]
    for call in calls:
        with pytest.raises(ValueError, match=r"`cluster_method` must be one of 'cr2', 'cv3', 'wild'; got 'cr3'"):
            call(cluster=codes, cluster_method="cr3")
        with pytest.raises(ValueError, match="needs `cluster` labels"):
            call(cluster_method="wild")
    with pytest.raises(ValueError, match="method='t'"):
        lp.pass_at_k_ci(a, [1], cluster=codes, cluster_method="cv3", method="bayesian_bootstrap")


def test_the_command_line_gives_the_apis_numbers(tmp_path) -> None:
    a, b, codes = _samples(9, n=90, seed=6)
    rows = [f"{name},q{i},{s},{int(x[i, s])},s{codes[i]}\n" for name, x in (("a", a), ("b", b))
            for i in range(x.shape[0]) for s in range(x.shape[1])]
    path = tmp_path / "samples.csv"
    path.write_text("model,item,sample,score,subject\n" + "".join(rows))
    out = run_cli(["passk", str(path), "--k", "1", "2", "--cluster", "subject", "--cluster-method", "wild",
                   "--seed", "3", "--format", "json"])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    order = np.argsort([f"q{i}" for i in range(a.shape[0])], kind="stable")  # the reader sorts the questions
    labels = np.array([f"s{c}" for c in codes])[order]
    want = lp.compare_pass_at_k(a[order], b[order], [1, 2], cluster=labels, cluster_method="wild", rng=3)
    cmp = got["comparison"]
    assert cmp["pvalue"] == pytest.approx(want.pvalue.tolist(), rel=1e-12)
    assert cmp["ci_low"] == pytest.approx(want.ci_low.tolist(), rel=1e-9)
    assert (cmp["cluster_method"], cmp["cluster_test"], cmp["n_clusters"]) == ("wild", "wild cluster bootstrap", 9)
    one = lp.pass_at_k_ci(a[order], [1, 2], cluster=labels, cluster_method="wild", rng=3)
    assert got["models"]["a"]["ci_questions"][0] == pytest.approx(one.confidence_interval().low.tolist(), rel=1e-9)
    assert got["models"]["a"]["cluster_method"] == "wild"
    table = run_cli(["passk", str(path), "--k", "1", "--cluster", "subject", "--cluster-method", "cv3"])
    assert table.returncode == 0, table.stderr
    assert "9 clusters of questions, cluster jackknife t" in " ".join(table.stdout.split())
    ranked = run_cli(["passk", str(path), "--cluster", "subject", "--cluster-method", "cv3", "--diagnose", "2",
                      "--format", "json"])  # --diagnose clusters too (it used to drop --cluster)
    assert ranked.returncode == 0, ranked.stderr
    pa = lp.pass_at_k(np.full(a.shape[0], 4), a[order].sum(axis=1), 2)
    pb = lp.pass_at_k(np.full(a.shape[0], 4), b[order].sum(axis=1), 2)
    assert json.loads(ranked.stdout)["diagnosis"]["pvalue_cluster"][0] == pytest.approx(
        lp.compare(pa, pb, cluster=labels, cluster_method="cv3").pvalue, rel=1e-10)
    bad = run_cli(["passk", str(path), "--cluster", "subject", "--cluster-method", "cr3"])
    assert bad.returncode == 2 and "invalid choice: 'cr3'" in bad.stderr
    alone = run_cli(["passk", str(path), "--cluster-method", "wild"])
    assert alone.returncode == 2 and "needs --cluster" in alone.stderr
