"""Bradley-Terry on arena battles: llm-power against evalica, LMArena's arena-rank, choix and the
FastChat scikit-learn logistic regression, side by side in one process (interleaved, best of 3).

Synthetic LMArena-like battles: 150 models (300 for the largest row) with normal log-strengths,
uneven exposure (Dirichlet model weights), 10% ties, and a prompt id shared by 20 battles on
average (the clusters). Every tool gets a pandas DataFrame with string columns, as read from a
battles file, and does its own encoding.

- llm-power: ``lp.bradley_terry`` (the point fit **and** the sandwich covariance), and
  ``method="bootstrap"``.
- evalica: ``evalica.bradley_terry`` (Rust; the point fit only), tolerance 1e-12 so its ratings
  can be compared to 1e-8.
- arena-rank (LMArena): ``PairDataset.from_pandas`` + ``BradleyTerry.compute_ratings_and_cis``
  (JAX L-BFGS; sandwich or bootstrap).
- choix: ``ilsr_pairwise`` on (winner, loser) pairs (ties dropped: choix has no ties), point only.
- FastChat's ``compute_elo_mle_with_tie`` method (a scikit-learn logistic regression on a dense
  design), written as a user would, point only, at 100 k battles (its dense design is 2.4 GB at 1 M).

Style control (``--style-sizes``, default 100 k and 1 M battles, 100 models, 2 covariates: length and
markdown-count differences that move the outcome): ``lp.bradley_terry(df, covariates=[...])`` (damped
Newton, fit + sandwich) against arena-rank's ``ContextualPairDataset.from_pandas`` (raw features, no
reweighting) + ``ContextualBradleyTerry(reg=0)`` (its unpenalised MLE) ``.compute_ratings_and_cis``
(sandwich), with its default L-BFGS tolerances (ftol = gtol = 1e-9: it stops at a gradient of ~1e-6,
ratings ~3e-3 off) and with ftol = 0, gtol = 1e-12 (the MLE to ~1e-9); the largest rating and
coefficient differences on the log-odds scale (ratings centred). Loaded: the sizes up to 200 k, one run.

Run: ``python benchmarks/arena.py [--load K] [--sizes 100000,1000000] [--style-sizes 100000,1000000]
[--big]`` from the bench environment (``make bench`` builds it). ``--big`` adds the 10 M battles x 300
models row (llm-power alone: time and peak RSS).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, interleaved, loaded, md_table, peak_rss_mb  # noqa: E402


def _pairs(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-strengths and the two models of each battle: uneven exposure (Dirichlet weights), no self-play."""
    theta = rng.normal(0, 1, m)
    w = rng.dirichlet(np.full(m, 2.0))
    a = rng.choice(m, n, p=w)
    b = rng.choice(m, n, p=w)
    same = a == b
    b[same] = (a[same] + 1 + rng.integers(0, m - 1, int(same.sum()))) % m
    return theta, a, b


def battles(n: int, m: int = 150, seed: int = 0):  # noqa: ANN201
    import pandas as pd

    rng = np.random.default_rng(seed)
    theta, a, b = _pairs(rng, n, m)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    outcome = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    names = pd.Series([f"model-{k:03d}" for k in range(m)], dtype="str")
    winners = pd.Series(["model_a", "model_b", "tie"], dtype="str")
    return pd.DataFrame({"model_a": names.iloc[a].reset_index(drop=True), "model_b": names.iloc[b].reset_index(drop=True),
                         "winner": winners.iloc[outcome].reset_index(drop=True),
                         "question_id": rng.integers(0, max(n // 20, 2), n)})


def ours(df, **kw):  # noqa: ANN001, ANN201
    import llm_power as lp

    return lp.bradley_terry(df, **kw)


def evalica_fit(df):  # noqa: ANN001, ANN201
    import evalica

    code = {"model_a": evalica.Winner.X, "model_b": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    winners = [code[w] for w in df["winner"]]
    return evalica.bradley_terry(df["model_a"], df["model_b"], winners, tolerance=1e-12, limit=10_000)


def arena_rank_fit(df, ci: str, b: int = 100):  # noqa: ANN001, ANN201
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(df)
    model = BradleyTerry(n_competitors=len(ds.competitors))
    return ds, model.compute_ratings_and_cis(ds, ci_method=ci, num_bootstrap=b)  # n_jobs: every core


def choix_fit(df):  # noqa: ANN001, ANN201
    import choix
    import pandas as pd

    codes, uniq = pd.factorize(pd.concat([df["model_a"], df["model_b"]], ignore_index=True))
    a, b = codes[: len(df)], codes[len(df):]
    w = df["winner"].to_numpy()
    keep = w != "tie"
    win = np.where(w[keep] == "model_a", a[keep], b[keep])
    lose = np.where(w[keep] == "model_a", b[keep], a[keep])
    return uniq, choix.ilsr_pairwise(len(uniq), list(zip(win.tolist(), lose.tolist(), strict=True)), alpha=1e-6)


def fastchat_fit(df):  # noqa: ANN001, ANN201
    """FastChat's ``compute_elo_mle_with_tie`` method, as a user writes it: a logistic regression
    without intercept on a dense +-1 design, every battle twice so that a tie is one win each.
    """
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    codes, uniq = pd.factorize(pd.concat([df["model_a"], df["model_b"]], ignore_index=True))
    n = len(df)
    a, b = np.tile(codes[:n], 2), np.tile(codes[n:], 2)
    x = np.zeros((2 * n, len(uniq)))
    x[np.arange(2 * n), a] = 1.0
    x[np.arange(2 * n), b] = -1.0
    w = df["winner"].to_numpy()
    y = np.tile(w == "model_a", 2).astype(float)
    y[:n][w == "tie"] = 1.0  # the first copy of a tie is a win of a, the second a win of b
    lr = LogisticRegression(fit_intercept=False, tol=1e-10, max_iter=1000, C=1e12)
    lr.fit(x, y)
    return uniq, lr.coef_[0]


def centred(values: np.ndarray) -> np.ndarray:
    return values - values.mean()


def agreement(res, df) -> str:  # noqa: ANN001
    """max |llm-power rating - evalica's log-score| (both centred, natural log scale)."""
    ev = evalica_fit(df)
    theirs = np.log(ev.scores.reindex(res.models).to_numpy())
    return f"{np.max(np.abs(centred(res.ratings) - centred(theirs))):.1e}"


def point_rows(sizes: list[int], load: int | None) -> list[list[str]]:
    rows = []
    for n in sizes:
        df = battles(n)
        ours(df.head(5_000))  # imports
        jobs = {"llm-power": lambda df=df: ours(df), "evalica": lambda df=df: evalica_fit(df),
                "arena-rank sandwich": lambda df=df: arena_rank_fit(df, "sandwich")}
        if n <= 200_000:
            jobs["choix"] = lambda df=df: choix_fit(df)
            jobs["FastChat sklearn"] = lambda df=df: fastchat_fit(df)
        with loaded(load):
            times, results = interleaved(jobs, repeat=3 if n <= 1_000_000 else 1)
        res = results["llm-power"]
        ds, ar = results["arena-rank sandwich"]
        alpha = 400 / math.log(10)
        ar_ratings = np.asarray(ar["ratings"]) / alpha
        ar_index = [ds.competitors.index(x) for x in res.models]
        diff_ar = np.max(np.abs(centred(res.ratings) - centred(ar_ratings[ar_index])))
        ev = results["evalica"]
        diff_ev = np.max(np.abs(centred(res.ratings) - centred(np.log(ev.scores.reindex(res.models).to_numpy()))))
        cond = "loaded" if load else "idle"
        for name, t in times.items():
            if name == "llm-power":
                continue
            rows.append([f"{n:,}", cond, fmt_s(times["llm-power"]), name, fmt_s(t), f"{times['llm-power'] / t:.2f}x"])
        rows.append([f"{n:,}", cond, "", "max rating difference", f"evalica {diff_ev:.1e}",
                     f"arena-rank {diff_ar:.1e}"])
    return rows


def style_battles(n: int, m: int = 100, seed: int = 0):  # noqa: ANN201
    """Arena-like battles whose outcome also depends on two style covariates (a - b differences)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    theta, a, b = _pairs(rng, n, m)
    length = rng.normal(0.2, 1.0, n)  # standardised length difference
    markdown = (rng.poisson(3, n) - rng.poisson(3, n)).astype(float)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b] + 0.3 * length + 0.05 * markdown)))
    outcome = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    names = pd.Series([f"model-{k:03d}" for k in range(m)], dtype="str")
    winners = pd.Series(["model_a", "model_b", "tie"], dtype="str")
    return pd.DataFrame({"model_a": names.iloc[a].reset_index(drop=True), "model_b": names.iloc[b].reset_index(drop=True),
                         "winner": winners.iloc[outcome].reset_index(drop=True), "length": length,
                         "markdown": markdown})


STYLE = ["length", "markdown"]


def arena_rank_style_fit(df, **tolerances):  # noqa: ANN001, ANN003, ANN201
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset

    ds = ContextualPairDataset.from_pandas(df, STYLE, reweighted=False, normalize_features=False)
    model = ContextualBradleyTerry(n_competitors=len(ds.competitors), n_features=len(STYLE), reg=0.0, **tolerances)
    return ds, model.compute_ratings_and_cis(ds, ci_method="sandwich")


#: arena-rank's L-BFGS stopping rules: its defaults, and tight enough to agree with the MLE to ~1e-9
STYLE_PEERS = {"arena-rank (defaults)": {},
               "arena-rank (ftol=0, gtol=1e-12)": {"ftol": 0.0, "gtol": 1e-12, "max_iter": 10_000}}


def style_rows(sizes: list[int], load: int | None) -> list[list[str]]:
    rows = []
    alpha = 400 / math.log(10)
    for n in sizes:
        df = style_battles(n)
        ours(df.head(5_000), covariates=STYLE)  # imports
        arena_rank_style_fit(df.head(5_000))  # JAX's import; its L-BFGS is jitted anew by every fit (timed)
        jobs = {"llm-power": lambda df=df: ours(df, covariates=STYLE)}
        jobs.update({name: lambda df=df, kw=kw: arena_rank_style_fit(df, **kw) for name, kw in STYLE_PEERS.items()})
        with loaded(load):
            times, results = interleaved(jobs, repeat=1 if load else 3)
        res = results["llm-power"]
        cond = "loaded" if load else "idle"
        for name in STYLE_PEERS:
            ds, ar = results[name]
            index = [ds.competitors.index(x) for x in res.models]
            diff_r = np.max(np.abs(centred(res.ratings) - centred(np.asarray(ar["ratings"])[index] / alpha)))
            diff_c = np.max(np.abs(np.asarray(res.coefficients) - np.asarray(ar["coeffs"])))
            rows.append([f"{n:,}", cond, fmt_s(times["llm-power"]), name, fmt_s(times[name]),
                         f"{times['llm-power'] / times[name]:.2f}x", f"{diff_r:.1e}", f"{diff_c:.1e}"])
    return rows


def bootstrap_rows(n: int, b: int, load: int | None) -> list[list[str]]:
    df = battles(n)
    jobs = {"llm-power": lambda: ours(df, method="bootstrap", n_resamples=b, rng=0),
            "arena-rank": lambda: arena_rank_fit(df, "bootstrap", b)}
    with loaded(load):
        times, _ = interleaved(jobs, repeat=2)
    cond = "loaded" if load else "idle"
    return [[f"{n:,}", cond, f"B = {b}", fmt_s(times["llm-power"]), fmt_s(times["arena-rank"]),
             f"{times['llm-power'] / times['arena-rank']:.2f}x"]]


def big_row(n: int = 10_000_000, m: int = 300) -> list[str]:
    import time

    df = battles(n, m=m)
    start = time.perf_counter()
    res = ours(df)
    sandwich = time.perf_counter() - start
    start = time.perf_counter()
    ours(df, cluster="question")
    clustered = time.perf_counter() - start
    return [f"{n:,} x {m}", fmt_s(sandwich), fmt_s(clustered), f"{peak_rss_mb():,.0f} MB",
            f"{int(np.isfinite(res.ratings).sum())} rated"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--style-sizes", default="100000,1000000")
    parser.add_argument("--boot", type=int, default=1_000_000)
    parser.add_argument("--big", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    sizes = [int(x) for x in args.sizes.split(",")]
    print("### Point fit (+ sandwich for llm-power and arena-rank), 150 models\n")
    rows = point_rows(sizes, None) + point_rows(sizes, args.load)
    print(md_table(["battles", "machine", "llm-power", "peer", "peer time", "llm-power / peer"], rows))
    print(f"\nLoaded: {args.load} busy processes on the 2 cores.\n")
    style = [int(x) for x in args.style_sizes.split(",")]
    print("### Style control: Bradley-Terry with 2 covariates (+ sandwich), 100 models\n")
    print(md_table(["battles", "machine", "llm-power", "ContextualBradleyTerry (reg=0)", "its time", "llm-power / it",
                    "max rating difference", "max coefficient difference"],
                   style_rows(style, None) + style_rows([n for n in style if n <= 200_000], args.load)))
    print(f"\nLoaded: {args.load} busy processes on the 2 cores.\n")
    print(f"### Bootstrap, {args.boot:,} battles, 150 models\n")
    print(md_table(["battles", "machine", "resamples", "llm-power", "arena-rank", "llm-power / arena-rank"],
                   bootstrap_rows(args.boot, 100, None)))
    if args.big:
        print("\n### LMArena scale and beyond: llm-power alone\n")
        print(md_table(["battles x models", "sandwich fit", "clustered (prompt) fit", "peak RSS", "models"],
                       [big_row()]))


if __name__ == "__main__":
    import multiprocessing

    multiprocessing.set_start_method("spawn")  # arena-rank's worker pool deadlocks when forked after JAX starts
    main()
