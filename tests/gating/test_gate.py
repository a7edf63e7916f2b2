"""The regression gate: acceptance on the bundled MMLU-Pro data, tests against independent
oracles (statsmodels' McNemar, scipy's paired t, a numerical restricted MLE for Tango's score
test, compare() for the clustered test), the one-verdict property, and by simulation the error
of a gate checked at 50 looks (anytime-valid vs fixed n).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, stats

from llm_power import gate
from llm_power.cli.main import main


# ---- acceptance: the demo data through the command line ----------------------------------------

@pytest.mark.parametrize(("baseline", "candidate", "margin", "verdict", "code"), [
    ("Meta-Llama-3_1-70B", "Meta-Llama-3_1-70B-Instruct", "0.01", "PASS", 0),
    ("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B", "0.01", "FAIL", 4),
    ("Yi-34B", "mathstral-7B", "0.005", "INCONCLUSIVE", 3),
])
def test_demo_gates(capsys, baseline, candidate, margin, verdict, code):
    assert main(["gate", baseline, candidate, "--demo", "--margin", margin]) == code
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(verdict + " ")
    if verdict == "INCONCLUSIVE":
        more = int(first.split("about ")[1].split(" more items")[0].replace(",", ""))
        # the oracle: N* of the one-sided test of the observed gap against the margin
        res = gate(*_demo(baseline, candidate), margin=float(margin))
        sigma2 = res.n_star * (res.delta + res.margin) ** 2 / (stats.norm.isf(0.05) + stats.norm.ppf(0.8)) ** 2
        assert more == math.ceil(res.n_star) - res.n and 0.1 < sigma2 < 0.5  # sigma^2 of a 0/1 difference


def _demo(baseline, candidate):
    import pandas as pd

    from llm_power.cli.gate import _demo_file

    frame = pd.read_csv(_demo_file())
    return frame[baseline].to_numpy(), frame[candidate].to_numpy()


def test_markdown_and_json_outputs(tmp_path):
    md, js = tmp_path / "comment.md", tmp_path / "gate.json"
    code = main(["gate", "Yi-34B", "mathstral-7B", "--demo", "--margin", "0.005", "--markdown", str(md),
                 "--json", str(js)])
    payload = json.loads(js.read_text())
    assert code == payload["exit_code"] == 3 and payload["verdict"] == "INCONCLUSIVE"
    text = md.read_text()
    assert "**INCONCLUSIVE**" in text and "| items | 12,032 |" in text


def test_two_paths_of_the_same_model_are_two_runs(tmp_path, capsys):
    rng = np.random.default_rng(3)
    base = (rng.random(800) < 0.6).astype(int)
    cand = np.where(rng.random(800) < 0.95, base, 1 - base)
    for name, scores in (("base.csv", base), ("cand.csv", cand)):
        (tmp_path / name).write_text("model,item,score\n" + "".join(f"my-model,q{i},{s}\n"
                                                                    for i, s in enumerate(scores)))
    code = main(["gate", str(tmp_path / "base.csv"), str(tmp_path / "cand.csv"), "--margin", "0.05"])
    out = capsys.readouterr().out
    assert code == gate(base, cand, margin=0.05).exit_code
    assert "my-model (candidate) vs my-model (baseline)" in out.splitlines()[0]


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    assert main(["gate", "Yi-34B", "nope", "--demo"]) == 1
    assert "no model 'nope'" in capsys.readouterr().err
    assert main(["gate", str(tmp_path / "missing.csv"), str(tmp_path / "other.csv")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match="margin"):
        gate([0, 1, 1], [1, 1, 0], margin=-0.1)


# ---- oracles ------------------------------------------------------------------------------------

def test_zero_margin_is_mcnemars_z():
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(5)
    for _ in range(20):
        base = (rng.random(300) < rng.uniform(0.3, 0.8)).astype(int)
        cand = np.where(rng.random(300) < rng.uniform(0.6, 0.95), base, 1 - base)
        res = gate(base, cand, margin=0.0)
        table = [[np.sum((base == 1) & (cand == 1)), np.sum((base == 1) & (cand == 0))],
                 [np.sum((base == 0) & (cand == 1)), np.sum((base == 0) & (cand == 0))]]
        two_sided = mcnemar(table, exact=False, correction=False).pvalue
        assert min(res.pvalue_noninferiority, res.pvalue_inferiority) * 2 == pytest.approx(two_sided, rel=1e-9)


def _tango_oracle(b, c, n, delta0):
    """Tango's score z for H0: p10 - p01 = delta0 with the restricted MLE found numerically."""
    def nll(p01):
        p10 = p01 + delta0
        return -(b * math.log(p10) + c * math.log(p01) + (n - b - c) * math.log(1 - p10 - p01))
    lo, hi = max(0.0, -delta0) + 1e-12, (1 - delta0) / 2 - 1e-12
    p01 = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x
    return (b - c - n * delta0) / math.sqrt(n * (2 * p01 + delta0 * (1 - delta0)))


@pytest.mark.parametrize("margin", [0.01, 0.03, 0.1])
def test_binary_margin_test_is_tangos_score_test(margin):
    rng = np.random.default_rng(6)
    for _ in range(15):
        base = (rng.random(500) < 0.6).astype(int)
        cand = np.where(rng.random(500) < rng.uniform(0.7, 0.97), base, 1 - base)
        b, c = int(np.sum((cand == 1) & (base == 0))), int(np.sum((cand == 0) & (base == 1)))
        z = _tango_oracle(b, c, 500, -margin)
        res = gate(base, cand, margin=margin)
        assert res.pvalue_noninferiority == pytest.approx(stats.norm.sf(z), rel=1e-6, abs=1e-12)
        # one verdict: the interval's bound is on the margin's side exactly when the test rejects
        assert (res.ci_low > -margin) == (res.pvalue_noninferiority <= 0.05)
        assert (res.ci_high < -margin) == (res.pvalue_inferiority <= 0.05)


def test_graded_margin_test_is_scipys_shifted_paired_t():
    rng = np.random.default_rng(7)
    base = rng.normal(0.5, 0.2, 200)
    cand = base + rng.normal(-0.01, 0.05, 200)
    res = gate(base, cand, margin=0.02)
    want = stats.ttest_rel(cand + 0.02, base, alternative="greater").pvalue
    assert res.test == "paired_t" and res.pvalue_noninferiority == pytest.approx(want, rel=1e-10)


def test_clustered_zero_margin_equals_compare():
    from llm_power import compare

    rng = np.random.default_rng(8)
    cl = np.repeat(np.arange(40), 25)
    base = (rng.random(1000) < 0.6).astype(int)
    cand = np.where(rng.random(1000) < 0.9, base, 1 - base)
    res = gate(base, cand, margin=0.0, cluster=cl)
    other = compare(cand, base, cluster=cl, alternative="greater")
    iid = gate(base, cand, margin=0.0)
    # an intersection-union of the cluster-robust t test (compare's, one-sided) and the IID test: clustering
    # only adds caution
    assert res.test == "cluster_t"
    assert res.pvalue_noninferiority == pytest.approx(max(other.pvalue, iid.pvalue_noninferiority), rel=1e-9)
    assert res.ci_low <= min(other.confidence_interval().low, iid.ci_low) + 1e-12


# ---- validity: 50 looks at a gate as items accumulate ------------------------------------------

def _false_fail_rates(replicates: int, looks: int = 50, n_max: int = 2000, margin: float = 0.02,
                      seed: int = 9) -> tuple[float, float]:
    """The candidate is worse by exactly the margin (FAIL is wrong); the gate is checked at every
    look. Returns the share of runs with a FAIL at some look: fixed-n, anytime-valid.
    """
    rng = np.random.default_rng(seed)
    p10, p01 = 0.10, 0.10 + margin  # candidate right only / baseline right only
    sizes = np.linspace(n_max / looks, n_max, looks).astype(int)
    fixed = anytime = 0
    for _ in range(replicates):
        u = rng.random(n_max)
        cand = (u < p10) | ((u >= p10 + p01) & (u < 0.5 + p01))  # concordant items half right, half wrong
        base = ((u >= p10) & (u < p10 + p01)) | ((u >= p10 + p01) & (u < 0.5 + p01))
        cand, base = cand.astype(float), base.astype(float)
        fixed += any(gate(base[:k], cand[:k], margin=margin).verdict == "FAIL" for k in sizes)
        anytime += any(gate(base[:k], cand[:k], margin=margin, anytime=True, horizon=n_max).verdict == "FAIL"
                       for k in sizes)
    return fixed / replicates, anytime / replicates


@pytest.mark.slow
def test_anytime_gate_keeps_its_error_over_50_looks():
    fixed, anytime = _false_fail_rates(replicates=2000)
    se = math.sqrt(0.05 * 0.95 / 2000)
    assert anytime <= 0.05 + 2 * se  # at most alpha over all 50 looks (observed far below)
    assert fixed > 0.05 + 4 * se  # the fixed-n gate checked 50 times is not


def _wrong_pass_rate(kind: str, replicates: int, *, pd: float = 0.04, margin: float = 0.01, n_max: int = 2000,
                     looks: int = 50, seed: int = 5) -> float:
    """The candidate is worse by exactly the margin (PASS is wrong); an anytime gate checked at 50 looks
    from 40 to 2,000 items. ``kind``: "binary" (discordance pd), "graded" (scores in [0, 1]), "clustered"
    (0/1, clusters of 20 items with the discordance varying by cluster)."""
    rng = np.random.default_rng(seed)
    sizes = np.linspace(40, n_max, looks).astype(int)
    groups = np.repeat(np.arange(n_max // 20), 20)
    wrong = 0
    for _ in range(replicates):
        if kind == "graded":  # d = -margin + uniform noise: scores stay inside [0, 1]
            base = 0.2 + 0.6 * rng.beta(2, 2, n_max)
            cand = base - margin + rng.uniform(-0.15, 0.15, n_max)
        else:
            pdg = np.clip(pd * np.exp(rng.normal(0, 1.0, groups.max() + 1)[groups]), margin, 1) if kind == "clustered" \
                else np.full(n_max, pd)
            p10, p01 = (pdg - margin) / 2, (pdg + margin) / 2  # delta = p10 - p01 = -margin on every item
            u = rng.random(n_max)
            cand = ((u < p10) | ((u >= p10 + p01) & (u < 0.5 + p01))).astype(float)
            base = (((u >= p10) & (u < p10 + p01)) | ((u >= p10 + p01) & (u < 0.5 + p01))).astype(float)
        kwargs = {"cluster": groups} if kind == "clustered" else {}
        wrong += any(gate(base[:k], cand[:k], margin=margin, anytime=True, horizon=n_max,
                          **{key: v[:k] for key, v in kwargs.items()}).verdict == "PASS" for k in sizes)
    return wrong / replicates


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "pd"), [("binary", 0.01), ("binary", 0.04), ("binary", 0.2), ("graded", None),
                                          ("clustered", 0.04), ("clustered", 0.2)])
def test_anytime_gate_wrong_pass_at_the_margin_is_at_most_alpha(kind, pd):
    """300 candidates worse by exactly 1 point, each gated at 50 looks: the share wrongly PASSed at some
    look is at most alpha + 2 Monte-Carlo SE (measured on 1,000 runs: 0.000 / 0.022 / 0.023 for
    discordance 0.01 / 0.04 / 0.2 and 0.000 graded, betting sequences; 0.008 / 0.014 clustered). The
    plug-in normal-mixture gate this replaces PASSed 19% of the runs at discordance 0.04."""
    rate = _wrong_pass_rate(kind, 300, pd=pd or 0.04)
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300)


def test_fixed_gate_at_one_look_has_size_alpha():
    """At the margin exactly, the fixed-n gate FAILs (wrongly) with probability about alpha."""
    rng = np.random.default_rng(10)
    fails = 0
    for _ in range(3000):
        u = rng.random(1500)
        cand = ((u < 0.1) | ((u >= 0.22) & (u < 0.62))).astype(float)
        base = (((u >= 0.1) & (u < 0.22)) | ((u >= 0.22) & (u < 0.62))).astype(float)
        fails += gate(base, cand, margin=0.02).verdict == "FAIL"
    se = math.sqrt(0.05 * 0.95 / 3000)
    assert abs(fails / 3000 - 0.05) < 4 * se


def test_pytest_helper_message():
    from llm_power.gating import assert_not_worse

    base, cand = _demo("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B")
    with pytest.raises(AssertionError) as info:
        assert_not_worse(base, cand, names=("70B-Instruct", "70B"))
    assert str(info.value).startswith("FAIL  70B vs 70B-Instruct: -10.36 points")
    base, cand = _demo("Yi-34B", "mathstral-7B")
    with pytest.raises(AssertionError, match="more items would decide it"):
        assert_not_worse(base, cand, margin=0.005)
    assert assert_not_worse(base, cand, margin=0.005, allow_inconclusive=True).verdict == "INCONCLUSIVE"


# ---- several tasks ---------------------------------------------------------------------------

def test_tasks_combine_by_intersection_union_and_holm():
    from statsmodels.stats.multitest import multipletests

    from llm_power.gating import gate_tasks

    rng = np.random.default_rng(11)
    tasks = np.repeat(["a", "b", "c"], 1500)
    base = (rng.random(4500) < 0.6).astype(int)
    redo = rng.random(4500) < 0.1
    cand = np.where(redo, rng.random(4500) < 0.6, base).astype(int)
    res = gate_tasks(base, cand, tasks, margin=0.03)
    singles = {t: gate(base[tasks == t], cand[tasks == t], margin=0.03) for t in "abc"}
    holm0 = multipletests([singles[t].pvalue_inferiority for t in "abc"], method="holm")[1]
    expected = ("PASS" if all(r.verdict == "PASS" for r in singles.values()) else
                "FAIL" if any(h <= 0.05 and singles[t].ci_high < -0.03 for t, h in zip("abc", holm0, strict=True))
                else "INCONCLUSIVE")
    assert res.verdict == expected == "PASS"  # each task re-answers 10% of items as accurately
    assert {t: r.pvalue_inferiority for t, r in res.tasks.items()} == {t: r.pvalue_inferiority
                                                                        for t, r in singles.items()}
    # task c regresses by 8 points: FAIL through Holm over the three inferiority p-values
    cand2 = cand.copy()
    worse = np.flatnonzero((tasks == "c") & (cand2 == 1))[:120]
    cand2[worse] = 0
    res2 = gate_tasks(base, cand2, tasks, margin=0.03)
    p = [gate(base[tasks == t], cand2[tasks == t], margin=0.03).pvalue_inferiority for t in "abc"]
    holm = multipletests(p, method="holm")[1]
    assert res2.pvalue_inferiority_holm == pytest.approx(dict(zip("abc", holm, strict=True)), rel=1e-12)
    assert res2.verdict == "FAIL" and res2.exit_code == 4 and "on c (Holm over 3 tasks)" in res2.sentence()


def test_per_task_command_on_lm_eval_folders(tmp_path, capsys):
    rng = np.random.default_rng(12)
    truth = {t: (rng.random(1200) < 0.6).astype(int) for t in ("alpha", "beta")}
    for name, drop in (("base", 0), ("cand", 150)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "results_2026-01-21T03-44-18.458309.json").write_text(json.dumps({"model_name": "org/m"}))
        for task, scores in truth.items():
            s = scores.copy()
            if task == "beta" and drop:
                s[np.flatnonzero(s == 1)[:drop]] = 0  # the candidate loses 150 items of beta (12.5 points)
            lines = [json.dumps({"doc_id": i, "doc": {}, "target": "x", "filter": "none", "metrics": ["acc"],
                                 "acc": float(v)}) for i, v in enumerate(s)]
            (folder / f"samples_{task}_2026-01-21T03-44-18.458309.jsonl").write_text("\n".join(lines) + "\n")
    code = main(["gate", str(tmp_path / "base"), str(tmp_path / "cand"), "--per-task", "--margin", "0.02"])
    out = capsys.readouterr().out.splitlines()
    assert code == 4 and out[0].startswith("FAIL  org/m (candidate) vs org/m (baseline) on 2 tasks")
    assert "on beta (Holm over 2 tasks)" in out[0] and any(line.strip().startswith("alpha: PASS") for line in out)


def test_lower_is_better_gates_the_improvement():
    """Error scores (error counts): the gap is baseline - candidate, so a candidate with more errors is worse."""
    rng = np.random.default_rng(13)
    base = rng.gamma(2.0, 1.0, 800)
    cand = base + rng.normal(0.3, 0.5, 800)  # 0.3 more error points: a regression
    res = gate(base, cand, margin=0.1, higher_is_better=False)
    want = stats.ttest_rel(base - cand + 0.1, np.zeros(800), alternative="greater").pvalue
    assert res.delta == pytest.approx(np.mean(base - cand), rel=1e-12) and res.verdict == "FAIL"
    assert res.pvalue_noninferiority == pytest.approx(want, rel=1e-10)
    assert "improvement (lower is better)" in res.sentence()


def test_lower_is_better_anytime_reads_the_range_on_the_scale_given():
    """Error counts in [0, 10] with --anytime --score-range 0 10: the gate of the improvement equals
    the higher-is-better gate of the negated scores in [-10, 0] (it refused, checking the range on the
    negated scores); graded errors in [0, 1] need no range at all.
    """
    rng = np.random.default_rng(15)
    base = rng.integers(0, 11, 600).astype(float)
    cand = np.clip(base + rng.integers(-1, 2, 600), 0, 10)
    res = gate(base, cand, margin=0.1, higher_is_better=False, anytime=True, score_range=(0, 10))
    mirror = gate(-base, -cand, margin=0.1, anytime=True, score_range=(-10, 0))
    assert (res.verdict, res.ci_low, res.ci_high) == (mirror.verdict, mirror.ci_low, mirror.ci_high)
    assert res.pvalue_noninferiority == mirror.pvalue_noninferiority
    loss = rng.random(400)
    new = np.clip(loss + rng.normal(0.0, 0.05, 400), 0, 1)
    res = gate(loss, new, margin=0.02, higher_is_better=False, anytime=True)
    mirror = gate(-loss, -new, margin=0.02, anytime=True, score_range=(-1, 0))
    assert (res.ci_low, res.ci_high) == (mirror.ci_low, mirror.ci_high)


@pytest.mark.parametrize("bad", [(1, 0), (0, float("nan")), (0, 0.5)])
def test_a_declared_score_range_is_checked_in_every_mode(bad):
    """--score-range 1 0 (or one the scores leave) was ignored without --anytime."""
    scores = np.linspace(0, 1, 50)
    with pytest.raises(ValueError, match="score_range"):
        gate(scores, scores[::-1], score_range=bad)


def test_anytime_pvalues_agree_with_the_verdict():
    """With --anytime the printed p-values come from the sequence's own e-process: PASS exactly
    when the non-inferiority p is at most alpha, FAIL exactly when the inferiority p is.
    """
    rng = np.random.default_rng(14)
    seen = set()
    for _ in range(300):
        n = int(rng.integers(50, 3000))
        base = (rng.random(n) < 0.6).astype(int)
        shift = rng.uniform(-0.3, 0.1)
        cand = np.where(rng.random(n) < 0.5, rng.random(n) < 0.6 + shift, base).astype(int)
        res = gate(base, cand, margin=0.02, anytime=True, horizon=3000)
        assert (res.verdict == "PASS") == (res.pvalue_noninferiority <= 0.05)
        assert (res.verdict == "FAIL") == (res.pvalue_inferiority <= 0.05)
        seen.add(res.verdict)
    assert seen == {"PASS", "FAIL", "INCONCLUSIVE"}
