"""Style control against a second oracle: LMArena's ``arena-rank`` (PyPI, 0.1.1), its
``ContextualBradleyTerry`` (issue 46's "and arena-rank's contextual model where it applies").

arena-rank pins ``jax==0.8.1`` and ``numpy==2.3.3``, so it runs in its own venv,
``<repo>/.venv-oracles/arena-rank`` (gitignored; built once, about 40 s, then reused by the checkout),
in a subprocess fed ``.npz`` battles and read back as JSON. A failed install FAILS the test (never skips).

What arena-rank fits (``arena_rank/models/contextual_bradley_terry.py``, ``rating_system.py``): the loss
``-mean(w * ll) + reg / 2 * sum(beta^2)`` (``ll`` the logistic log-likelihood of
``theta_a - theta_b + x'beta``, outcome 1 / 0 / 0.5) minimised by optax L-BFGS from zeros, stopping when
``max|grad| < gtol`` or the relative change of the loss ``< ftol`` (both 1e-9 by default); the ratings
carry no penalty and keep mean 0 (every gradient's ratings part sums to 0), and it reports
``1000 + 400 / ln 10 * theta`` (Elo scale: ``init_rating`` + ``scale / ln(base)`` x theta), the same as
our ``elo()``, with the coefficients ``beta`` unscaled (log-odds per unit of the feature).
Where it applies:

- ``reg=0``: the unpenalised MLE, ours. Its default ``reg=1.0`` is a ridge of n on the sum scale, not the
  MLE: on these battles it shrinks the length coefficient from 0.361 to 0.069 and moves the ratings by
  up to 0.024 (4 Elo points); it is not compared.
- ``ftol=0, gtol=1e-13`` (max 10,000 iterations): its L-BFGS then reaches the MLE (``max|grad| < 1e-13``;
  measured differences from ours: ratings <= 4e-13, coefficients <= 7e-14, its Elo ratings <= 7e-11),
  so we assert 1e-9. With its defaults (1e-9, 1e-9) the relative-loss rule stops it at
  ``max|grad| ~ 1e-6``: ratings off by 2e-5 here, coefficients by 2e-6 (and by 3e-3 / 1e-5 with 100
  models, ``benchmarks/arena.py``).
- The sandwich: ``H^-1 G H^-1 / n`` with ``H = sum w p(1-p) z z' / n + hessian_reg * I`` and
  ``G = sum (w (y - p))^2 z z' / n`` over battles (``z`` = (e_a - e_b, x)), i.e. our battle-level,
  non-clustered sandwich (``bradley_terry`` without ``cluster``; no small-sample factor in either) *plus*
  the ridge ``hessian_reg = 1e-5`` that makes its singular ratings block invertible (the ridge also picks
  the mean-0 ratings, as our constraint does). It reports only the ratings' ``variances`` (of the Elo
  ratings: x (400 / ln 10)^2); the oracle also forms its full matrix (coefficients too) with its own
  ``compute_hessian_and_covariance``. The bread and meat at our estimates, with its ridge, give that
  matrix to 1e-7 of its largest entry (measured 1.4e-9 unweighted, 1.2e-8 weighted); ours without the
  ridge differs by its first-order effect ``~ 2 hessian_reg / lambda_min`` (``lambda_min``: the smallest
  eigenvalue of the mean information on the mean-0 ratings and coefficients; 0.055 unweighted, 0.097
  weighted here): measured 3.5e-4 / 2.0e-4 of the largest entry, standard errors 1.8e-4 / 1.0e-4
  relative (coefficients' 5e-5 / 3e-5), asserted below ``4 hessian_reg / lambda_min`` (7.3e-4 / 4.1e-4)
  and half that. A smaller ridge does not help: its unprojected inverse (1 / hessian_reg along the
  constant ratings) amplifies rounding in ``G`` (weighted standard errors off by 6e-5 at 1e-7, 7e-3 at
  1e-8, 8 times too large at 1e-10).
- Weights: its ``w`` are per-battle likelihood weights, ours (``weights=``) too: the same MLE and sandwich.
- ``ContextualPairDataset.from_pandas`` (its default ``reweighted=True, normalize_features=True``) builds
  weights ``1 / max(pair count, 50)`` over unordered pairs, divided by their mean, and standardises the
  features (mean 0, population sd 1). Centring is not neutral: it adds the constant ``-mean'beta`` to
  every battle's logit, a different model from the raw features' unless their means are 0 (here the
  ratings move by 3e-3 against only scaling them). Given the same standardised columns and weights,
  ``lp.bradley_terry(frame, covariates=[...], weights=...)`` equals it (to 1e-9; measured 1e-12).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import llm_power as lp
from llm_power.preferences._style import fit_style

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-oracles" / "arena-rank"
REQUIREMENT = "arena-rank==0.1.1"
ALPHA = 400.0 / np.log(10.0)
HESSIAN_REG = 1e-5
M = 8  # models
N = 20_000  # battles
FEATURES = ["length", "markdown", "bold"]

ORACLE = r'''
import json, sys
import jax, jax.numpy as jnp
import numpy as np
import pandas as pd
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset

data, cfg = np.load(sys.argv[1]), json.load(open(sys.argv[2]))
out = {}
for case in cfg["cases"]:
    name = case["name"]
    if case["from_pandas"]:
        frame = pd.DataFrame({"model_a": data["name_a"], "model_b": data["name_b"], "winner": data["winner"]})
        for k, col in enumerate(cfg["features"]):
            frame[col] = data["x"][:, k]
        ds = ContextualPairDataset.from_pandas(frame, cfg["features"])  # its defaults: reweighted, normalised
    else:
        ds = ContextualPairDataset(competitors=[str(c) for c in data["models"]],
                                   pairs=jnp.asarray(np.column_stack([data["ia"], data["ib"]]), dtype=jnp.int32),
                                   outcomes=jnp.asarray(data["y"]), features=jnp.asarray(data["x"]),
                                   weights=jnp.asarray(data["w"] if case["weighted"] else np.ones(data["y"].size)))
    model = ContextualBradleyTerry(len(ds.competitors), ds.n_features, reg=case["reg"],
                                   hessian_reg=case["hessian_reg"], max_iter=case["max_iter"], ftol=case["ftol"],
                                   gtol=case["gtol"])
    res = model.compute_ratings_and_cis(ds, ci_method="sandwich")
    grad = jax.grad(model.loss_function)(model.params, ds.as_dict())
    n = int(ds.pairs.shape[0])
    hess, gcov = model.compute_hessian_and_covariance(
        model.params["ratings"], model.params["coeffs"], ds.pairs, ds.features, ds.outcomes, ds.weights, model.reg,
        model.hessian_reg, model.n_competitors, model.n_features, n)
    inv = jnp.linalg.inv(hess)
    out[name] = {
        "competitors": list(ds.competitors),
        "ratings": np.asarray(res["ratings"]).tolist(), "coeffs": np.asarray(res["coeffs"]).tolist(),
        "variances": np.asarray(res["variances"]).tolist(),
        "covariance": np.asarray(inv @ gcov @ inv / n).tolist(),  # its sandwich, all parameters (unscaled)
        "grad_inf": float(max(float(jnp.max(jnp.abs(v))) for v in jax.tree.leaves(grad))),
        "weights": np.asarray(ds.weights).tolist(), "features": np.asarray(ds.features).tolist(),
        "pairs": np.asarray(ds.pairs).tolist(), "alpha": model.alpha, "init_rating": model.init_rating,
    }
json.dump(out, open(sys.argv[3], "w"))
'''


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def oracle_python() -> Path:
    """The oracle venv's python, building ``.venv-oracles/arena-rank`` once (under a lock: xdist workers)."""
    VENV.parent.mkdir(exist_ok=True)
    stamp = VENV / ".installed"
    with open(VENV.parent / ".arena-rank.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == REQUIREMENT:
            return _bin(VENV, "python")
        shutil.rmtree(VENV, ignore_errors=True)
        start = time.perf_counter()
        steps = [[sys.executable, "-m", "venv", str(VENV)],
                 [str(_bin(VENV, "python")), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  REQUIREMENT]]
        for cmd in steps:
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603
            if done.returncode != 0:
                pytest.fail(f"cannot build the arena-rank oracle venv ({' '.join(cmd)}):\n{done.stderr[-3000:]}")
        stamp.write_text(REQUIREMENT)
        print(f"arena-rank oracle venv built in {time.perf_counter() - start:.1f} s")  # noqa: T201
        return _bin(VENV, "python")


def make_battles(seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, M, N)
    ib = (ia + rng.integers(1, M, N)) % M
    theta = np.linspace(0.8, -0.8, M)
    length = rng.normal(0.3, 1.0, N)  # length difference (standardised; mean not 0)
    markdown = (rng.poisson(2, N) - rng.poisson(2, N)).astype(float)  # markdown-count difference
    bold = rng.normal(0.0, 2.0, N)
    x = np.column_stack([length, markdown, bold])
    eta = theta[ia] - theta[ib] + x @ np.array([0.4, 0.1, -0.05])
    y = np.where(rng.random(N) < 1.0 / (1.0 + np.exp(-eta)), 1.0, 0.0)
    y = np.where(rng.random(N) < 0.1, 0.5, y)  # ties: half a win each, in both
    models = np.array([f"model-{k}" for k in range(M)])
    winner = np.where(y == 1.0, "model_a", np.where(y == 0.0, "model_b", "tie"))
    return {"ia": ia, "ib": ib, "y": y, "x": x, "w": rng.uniform(0.5, 3.0, N), "models": models,
            "name_a": models[ia], "name_b": models[ib], "winner": winner}


def frame(b: dict[str, Any], x: np.ndarray, w: np.ndarray | None = None) -> dict[str, Any]:
    cols: dict[str, Any] = {"model_a": b["name_a"].tolist(), "model_b": b["name_b"].tolist(), "winner": b["winner"]}
    cols.update({name: x[:, k] for k, name in enumerate(FEATURES)})
    if w is not None:
        cols["w"] = w
    return cols


TIGHT = {"reg": 0.0, "hessian_reg": HESSIAN_REG, "max_iter": 10_000, "ftol": 0.0, "gtol": 1e-13}
CASES = [{"name": "plain", "weighted": False, "from_pandas": False, **TIGHT},
         {"name": "weighted", "weighted": True, "from_pandas": False, **TIGHT},
         {"name": "from_pandas", "weighted": False, "from_pandas": True, **TIGHT}]


def run_oracle(python: Path, tmp: Path, b: dict[str, Any]) -> dict[str, Any]:
    out = tmp / "out.json"
    if out.exists():  # another xdist worker of this run has run it
        return dict(json.loads(out.read_text()))
    (tmp / "oracle.py").write_text(ORACLE)
    np.savez(tmp / "battles.npz", **b)
    (tmp / "cases.json").write_text(json.dumps({"cases": CASES, "features": FEATURES}))
    done = subprocess.run([str(python), str(tmp / "oracle.py"), str(tmp / "battles.npz"), str(tmp / "cases.json"),  # noqa: S603
                           str(tmp / "partial.json")], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"the arena-rank oracle failed:\n{done.stderr[-3000:]}")
    (tmp / "partial.json").replace(out)
    return dict(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """The battles and arena-rank's fits of them: run once per test run (xdist workers share the run's
    temporary root, as pytest-xdist documents for once-only fixtures).
    """
    python = oracle_python()
    b = make_battles()
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return b, run_oracle(python, tmp_path_factory.mktemp("arena_rank"), b)
    shared = tmp_path_factory.getbasetemp().parent / "arena_rank"
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return b, run_oracle(python, shared, b)


def ours(b: dict[str, Any], weighted: bool) -> Any:  # noqa: ANN401
    return lp.bradley_terry(frame(b, b["x"], b["w"] if weighted else None), covariates=FEATURES,
                            weights="w" if weighted else None)


@pytest.mark.parametrize("case", ["plain", "weighted"])
def test_mle_equals_arena_ranks_contextual_model(arena: tuple[dict[str, Any], dict[str, Any]], case: str) -> None:
    b, out = arena
    theirs = out[case]
    assert theirs["alpha"] == pytest.approx(ALPHA, rel=1e-15) and theirs["init_rating"] == 1000.0
    assert theirs["grad_inf"] < 1e-11  # its L-BFGS at the MLE (ftol=0, gtol=1e-13)
    res = ours(b, case == "weighted")
    assert res.models == theirs["competitors"]
    # its Elo-scale ratings (mean 1000) are our elo(); back on the log-odds scale to 1e-9
    np.testing.assert_allclose(theirs["ratings"], res.elo(), rtol=0, atol=1e-9 * ALPHA)
    theta = (np.asarray(theirs["ratings"]) - 1000.0) / ALPHA
    np.testing.assert_allclose(theta, res.ratings, rtol=0, atol=1e-9)
    np.testing.assert_allclose(theirs["coeffs"], res.coefficients, rtol=0, atol=1e-9)


@pytest.mark.parametrize("case", ["plain", "weighted"])
def test_sandwich_is_ours_with_its_hessian_ridge(arena: tuple[dict[str, Any], dict[str, Any]], case: str) -> None:
    b, out = arena
    theirs = out[case]
    weighted = case == "weighted"
    w = b["w"] if weighted else np.ones(N)
    res = ours(b, weighted)
    fit = fit_style(b["ia"], b["ib"], b["y"], M, covariates=b["x"], weights=w)
    np.testing.assert_allclose(fit.covariance[:M, :M], res.covariance, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(fit.covariance[M:, M:], res.coefficient_covariance, rtol=1e-10, atol=1e-14)
    cov = np.asarray(theirs["covariance"])
    # its public variances: of the Elo ratings, the diagonal of its sandwich x alpha^2
    np.testing.assert_allclose(np.asarray(theirs["variances"]) / ALPHA**2, np.diag(cov)[:M], rtol=1e-12)
    # the bread and meat at our estimates (dense design z = (e_a - e_b, x)), with its ridge: its covariance
    z = np.zeros((N, M + 3))
    z[np.arange(N), b["ia"]] += 1.0
    z[np.arange(N), b["ib"]] -= 1.0
    z[:, M:] = b["x"]
    prob = 1.0 / (1.0 + np.exp(-(z @ np.r_[fit.ratings, fit.coefficients])))
    bread = z.T @ ((w * prob * (1 - prob))[:, None] * z)
    meat = z.T @ (((w * (b["y"] - prob)) ** 2)[:, None] * z)
    ridged = np.linalg.inv(bread + N * HESSIAN_REG * np.eye(M + 3))
    scale = np.max(np.abs(cov))
    np.testing.assert_allclose(cov, ridged @ meat @ ridged, rtol=0, atol=1e-7 * scale)
    # ours (no ridge): within the ridge's first-order effect, 2 hessian_reg / lambda_min, twice over
    centre = np.eye(M + 3)
    centre[:M, :M] -= 1.0 / M
    lam_min = float(np.linalg.eigvalsh(centre @ bread @ centre / N)[1])  # [0] = 0: the constant ratings
    bound = 4.0 * HESSIAN_REG / lam_min
    se_theirs, se_ours = np.sqrt(np.diag(cov)), np.sqrt(np.diag(fit.covariance))
    assert np.max(np.abs(se_theirs / se_ours - 1.0)) < bound / 2
    np.testing.assert_allclose(cov, fit.covariance, rtol=0, atol=bound * scale)


def test_its_from_pandas_defaults_equal_the_public_fit_by_column_names(
        arena: tuple[dict[str, Any], dict[str, Any]]) -> None:
    b, out = arena
    theirs = out["from_pandas"]
    assert theirs["competitors"] == b["models"].tolist()
    np.testing.assert_array_equal(theirs["pairs"], np.column_stack([b["ia"], b["ib"]]))
    # its preprocessing: standardised features (population sd), weights 1 / max(pair count, 50) over mean
    z = (b["x"] - b["x"].mean(axis=0)) / b["x"].std(axis=0)
    np.testing.assert_allclose(theirs["features"], z, rtol=0, atol=1e-12)
    lo, hi = np.minimum(b["ia"], b["ib"]), np.maximum(b["ia"], b["ib"])
    counts = np.bincount(lo * M + hi, minlength=M * M)[lo * M + hi]
    w = 1.0 / np.maximum(counts, 50)
    np.testing.assert_allclose(theirs["weights"], w / w.mean(), rtol=1e-12)
    res = lp.bradley_terry(frame(b, z, w), covariates=FEATURES, weights="w")  # weights' scale is immaterial
    assert theirs["grad_inf"] < 1e-11
    np.testing.assert_allclose(theirs["ratings"], res.elo(), rtol=0, atol=1e-9 * ALPHA)
    np.testing.assert_allclose(theirs["coeffs"], res.coefficients, rtol=0, atol=1e-9)
    # centring the features is a different model from only scaling them (their means are not 0)
    scaled = lp.bradley_terry(frame(b, b["x"] / b["x"].std(axis=0), w), covariates=FEATURES, weights="w")
    assert np.max(np.abs(scaled.ratings - res.ratings)) > 1e-3
