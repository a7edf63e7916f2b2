r"""Bradley-Terry ratings of pairwise battles with honest intervals.

A battle is (model_a, model_b, winner in {model_a, model_b, tie}). The Bradley-Terry model
:math:`P(i \text{ beats } j) = \sigma(\theta_i - \theta_j)` is fitted by Newton's method on the
deduplicated outcome counts (one row per ordered pair of models), ties counted as half a win for
each side (``ties="half"``). Point estimates are the full-data MLE (never a bootstrap median).
The covariance is the sandwich :math:`H^{-1} M H^{-1}` — :math:`H` the Fisher information, :math:`M`
the outer products of the per-battle scores — summed within clusters of battles (``cluster``: one
label per battle, e.g. the prompt or the voter) when votes are not independent. Ratings are
identified only up to a constant: they are centred (mean 0), and intervals of rating
*differences* (:meth:`BradleyTerryResult.difference_ci`) need no anchor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ._results import ConfidenceInterval, Result
from ._validation import check_confidence_level, check_option
from .errors import DataError

__all__ = ["AgreementResult", "BradleyTerryResult", "bradley_terry", "judge_agreement"]


@dataclass(frozen=True)
class BradleyTerryResult(Result):
    """Result of :func:`bradley_terry`.

    Attributes
    ----------
    models : list of str
        In the order of ``ratings`` (sorted by name).
    ratings : ndarray
        Log-strengths theta (natural log-odds units), centred to mean 0.
    covariance : ndarray
        Sandwich covariance of ``ratings`` (cluster-robust when fitted with ``cluster``).
    n_battles : int
    n_clusters : int or None
    confidence_level : float
    """

    models: list[str]
    ratings: np.ndarray
    covariance: np.ndarray
    n_battles: int
    n_clusters: int | None
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("n_battles", "n_clusters")

    def _index(self, name: str) -> int:
        try:
            return self.models.index(name)
        except ValueError:
            shown = ", ".join(map(repr, self.models[:8]))
            msg = f"no model {name!r}; models: {shown}"
            raise KeyError(msg) from None

    def difference_ci(self, a: str, b: str, confidence_level: float | None = None) -> ConfidenceInterval:
        """Wald interval of theta_a - theta_b from the (sandwich) covariance: anchor-free."""
        level = self.confidence_level if confidence_level is None else check_confidence_level(confidence_level)
        i, j = self._index(a), self._index(b)
        var = self.covariance[i, i] + self.covariance[j, j] - 2.0 * self.covariance[i, j]
        z = float(special.ndtri(1.0 - (1.0 - level) / 2.0))
        diff = float(self.ratings[i] - self.ratings[j])
        half = z * math.sqrt(max(var, 0.0))
        return ConfidenceInterval(diff - half, diff + half)

    def elo(self, scale: float = 400.0, base: float = 10.0, anchor: tuple[str, float] | None = None) -> np.ndarray:
        """Ratings on the Elo scale: scale / ln(base) x theta, shifted so that ``anchor`` = (model,
        rating) holds (default: mean 1000).
        """
        elo: np.ndarray = scale / math.log(base) * np.asarray(self.ratings, dtype=float)
        if anchor is None:
            return np.asarray(elo - elo.mean() + 1000.0, dtype=float)
        name, value = anchor
        return np.asarray(elo - elo[self._index(name)] + value, dtype=float)

    def strengths(self) -> np.ndarray:
        """exp(theta) normalised to sum 1 (the scale of many published Bradley-Terry scores)."""
        w = np.exp(self.ratings - self.ratings.max())
        return np.asarray(w / w.sum(), dtype=float)

    def to_frame(self) -> Any:
        """One row per model: rating, standard error, Elo, strength (pandas)."""
        import pandas as pd

        se = np.sqrt(np.maximum(np.diag(self.covariance), 0.0))
        return pd.DataFrame({"model": self.models, "rating": self.ratings, "se": se, "elo": self.elo(),
                             "strength": self.strengths()}).sort_values("rating", ascending=False,
                                                                        ignore_index=True)


def _battles(battles: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        a = np.asarray(battles["model_a"], dtype=object)
        b = np.asarray(battles["model_b"], dtype=object)
        w = np.asarray(battles["winner"], dtype=object)
    except (KeyError, TypeError, IndexError):
        msg = "battles need columns model_a, model_b and winner (model_a | model_b | tie)"
        raise DataError(msg) from None
    if not (a.shape == b.shape == w.shape) or a.ndim != 1:
        msg = "battles: model_a, model_b and winner must be 1-D columns of one length"
        raise DataError(msg)
    return a, b, w


def bradley_terry(battles: Any, *, ties: str = "half", cluster: Any = None, confidence_level: float = 0.95,
                  tol: float = 1e-12, max_iter: int = 200) -> BradleyTerryResult:
    r"""Bradley-Terry ratings with a sandwich (optionally cluster-robust) covariance.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (``"model_a"``, ``"model_b"`` or ``"tie"``; the
        winner's name is accepted too).
    ties : {"half"}, default "half"
        A tie counts as half a win for each side.
    cluster : array_like, optional
        One label per battle (prompt, voter): the covariance sums scores within clusters.
    confidence_level : float, default 0.95
        Default level of :meth:`BradleyTerryResult.difference_ci`.

    Examples
    --------
    >>> from llm_power import bradley_terry
    >>> battles = {"model_a": ["x", "x", "y", "x", "z", "y"], "model_b": ["y", "z", "z", "y", "x", "z"],
    ...            "winner": ["model_a", "model_a", "tie", "model_b", "model_b", "model_a"]}
    >>> res = bradley_terry(battles)
    >>> res.models, [round(float(r), 3) for r in res.ratings]
    (['x', 'y', 'z'], [0.862, 0.446, -1.308])
    """
    check_option(ties, "ties", ("half",))
    confidence_level = check_confidence_level(confidence_level)
    a, b, w = _battles(battles)
    if (a == b).any():
        row = int(np.argmax(a == b))
        msg = f"battle {row}: a model against itself ({a[row]!r})"
        raise DataError(msg)
    y = np.where((w == "model_a") | (w == a), 1.0, np.where((w == "model_b") | (w == b), 0.0,
                                                            np.where(w == "tie", 0.5, np.nan)))
    if np.isnan(y).any():
        row = int(np.argmax(np.isnan(y)))
        msg = f"battle {row}: winner {w[row]!r} is none of model_a, model_b, tie"
        raise DataError(msg)
    models = sorted({str(m) for m in np.concatenate([a, b]).tolist()})
    if len(models) < 2:
        msg = "battles between at least two models are needed"
        raise DataError(msg)
    code = {m: k for k, m in enumerate(models)}
    ia = np.array([code[str(m)] for m in a.tolist()], dtype=np.intp)
    ib = np.array([code[str(m)] for m in b.tolist()], dtype=np.intp)
    m = len(models)
    # deduplicated: per ordered pair, battles and points won by the first model
    key = ia * m + ib
    uniq, inv = np.unique(key, return_inverse=True)
    count = np.bincount(inv).astype(float)
    points = np.bincount(inv, weights=y)
    pi, pj = uniq // m, uniq % m
    theta = _newton(pi, pj, count, points, m, tol=tol, max_iter=max_iter)
    # sandwich: H = sum n p (1 - p) x x', scores (y - p) x per battle (summed within clusters)
    p_pair = special.expit(theta[pi] - theta[pj])
    h = np.zeros((m, m))
    wgt = count * p_pair * (1.0 - p_pair)
    np.add.at(h, (pi, pi), wgt)
    np.add.at(h, (pj, pj), wgt)
    np.add.at(h, (pi, pj), -wgt)
    np.add.at(h, (pj, pi), -wgt)
    resid = y - p_pair[inv]
    n_clusters = None
    if cluster is None:
        groups, n_groups = np.arange(y.size), y.size
    else:
        labels = np.asarray(cluster, dtype=object)
        if labels.shape != y.shape:
            msg = f"`cluster` must have one label per battle ({y.size}); got shape {labels.shape}"
            raise ValueError(msg)
        _, groups = np.unique(np.array([str(v) for v in labels.tolist()]), return_inverse=True)
        n_groups = n_clusters = int(groups.max() + 1)
    scores = np.zeros((n_groups, m))
    np.add.at(scores, (groups, ia), resid)
    np.add.at(scores, (groups, ib), -resid)
    meat = scores.T @ scores
    # theta is identified up to a constant: invert on the sum-zero subspace (centred ratings)
    centre = np.eye(m) - 1.0 / m
    h_inv = np.linalg.pinv(h, hermitian=True)
    cov = centre @ h_inv @ meat @ h_inv @ centre
    return BradleyTerryResult(models=models, ratings=theta - theta.mean(), covariance=cov, n_battles=int(y.size),
                              n_clusters=n_clusters, confidence_level=confidence_level)


def _newton(pi: np.ndarray, pj: np.ndarray, count: np.ndarray, points: np.ndarray, m: int, *, tol: float,
            max_iter: int) -> np.ndarray:
    """The MLE of theta (mean 0) by damped Newton steps on the sum-zero subspace."""
    theta = np.zeros(m)
    centre = np.eye(m) - 1.0 / m

    def loglik(t: np.ndarray) -> float:
        d = t[pi] - t[pj]
        return float(np.sum(points * -np.logaddexp(0.0, -d) + (count - points) * -np.logaddexp(0.0, d)))

    for _ in range(max_iter):
        p = special.expit(theta[pi] - theta[pj])
        g_pair = points - count * p
        grad = np.bincount(pi, weights=g_pair, minlength=m) - np.bincount(pj, weights=g_pair, minlength=m)
        wgt = count * p * (1.0 - p)
        h = np.zeros((m, m))
        np.add.at(h, (pi, pi), wgt)
        np.add.at(h, (pj, pj), wgt)
        np.add.at(h, (pi, pj), -wgt)
        np.add.at(h, (pj, pi), -wgt)
        step = centre @ np.linalg.lstsq(h + np.ones((m, m)) / m, grad, rcond=None)[0]
        current = loglik(theta)
        size = 1.0
        while size > 1e-8 and loglik(theta + size * step) < current - 1e-12 * abs(current):
            size /= 2.0
        theta = theta + size * step
        if float(np.max(np.abs(size * step))) < tol:
            break
    else:  # pragma: no cover - a disconnected comparison graph or a model that never loses
        msg = ("Bradley-Terry did not converge: some model never wins or never loses, or the models do not "
               "all connect through battles")
        raise DataError(msg)
    return np.asarray(theta - theta.mean(), dtype=float)


@dataclass(frozen=True)
class AgreementResult(Result):
    """Result of :func:`judge_agreement`: point estimates and bootstrap percentile intervals
    (items resampled) of percent agreement, Cohen's kappa and Krippendorff's alpha (nominal).
    """

    n: int
    agreement: float
    kappa: float
    alpha: float
    agreement_ci: ConfidenceInterval
    kappa_ci: ConfidenceInterval
    alpha_ci: ConfidenceInterval
    categories: list[str]
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("n", "agreement", "kappa", "alpha")


def _agreement_stats(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(agreement, Cohen's kappa, Krippendorff's nominal alpha) of (B x K x K) contingency tables."""
    n = table.sum(axis=(1, 2))
    observed = np.trace(table, axis1=1, axis2=2) / n
    rows, cols = table.sum(axis=2) / n[:, None], table.sum(axis=1) / n[:, None]
    expected = np.sum(rows * cols, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - expected) / (1.0 - expected)
        # Krippendorff: coincidences of the 2n pairable values; D_o = 1 - agreement,
        # D_e = 1 - sum_c n_c (n_c - 1) / (2n (2n - 1)) with n_c the category's count over both raters
        n_c = (rows + cols) * n[:, None]
        total = 2.0 * n
        d_e = 1.0 - np.sum(n_c * (n_c - 1.0), axis=1) / (total * (total - 1.0))
        alpha = 1.0 - (1.0 - observed) / d_e
    return observed, kappa, alpha


def judge_agreement(labels_a: Any, labels_b: Any, *, confidence_level: float = 0.95, n_resamples: int = 2000,
                    rng: Any = None) -> AgreementResult:
    """Agreement of two judges (or a judge and the human majority) labelling the same items:
    percent agreement, Cohen's kappa and Krippendorff's alpha (nominal; "tie" is a category like
    any other), with percentile intervals from resampling items.

    Examples
    --------
    >>> from llm_power import judge_agreement
    >>> a = ["model_a", "model_b", "tie", "model_a", "model_b", "model_a"] * 20
    >>> b = ["model_a", "model_b", "tie", "model_b", "model_b", "model_a"] * 20
    >>> res = judge_agreement(a, b, rng=0)
    >>> round(res.agreement, 4), round(res.kappa, 4)
    (0.8333, 0.7391)
    """
    from ._validation import as_rng, check_int_at_least

    level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 0)
    x = np.array([str(v) for v in np.asarray(labels_a, dtype=object).tolist()], dtype=object)
    y = np.array([str(v) for v in np.asarray(labels_b, dtype=object).tolist()], dtype=object)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        msg = f"labels_a and labels_b must be two 1-D label sequences of one length (>= 2); got {x.shape}, {y.shape}"
        raise ValueError(msg)
    categories = sorted(set(x.tolist()) | set(y.tolist()))
    code = {c: k for k, c in enumerate(categories)}
    k = len(categories)
    cell = np.array([code[v] for v in x.tolist()]) * k + np.array([code[v] for v in y.tolist()])
    table = np.bincount(cell, minlength=k * k).reshape(1, k, k).astype(float)
    agree, kappa, alpha = (float(v[0]) for v in _agreement_stats(table))
    tail = (1.0 - level) / 2.0
    cis = [ConfidenceInterval(math.nan, math.nan)] * 3
    if n_resamples:
        gen = as_rng(rng)
        counts = gen.multinomial(x.size, table.ravel() / x.size, size=n_resamples).reshape(n_resamples, k, k)
        boot = _agreement_stats(counts.astype(float))
        cis = [ConfidenceInterval(*(float(q) for q in np.nanquantile(b, [tail, 1.0 - tail]))) for b in boot]
    return AgreementResult(n=int(x.size), agreement=agree, kappa=kappa, alpha=alpha, agreement_ci=cis[0],
                           kappa_ci=cis[1], alpha_ci=cis[2], categories=categories, confidence_level=level)
