r"""Bradley-Terry ratings of pairwise battles with honest intervals.

A battle is (model_a, model_b, winner in {model_a, model_b, tie}). The Bradley-Terry model
:math:`P(i \text{ beats } j) = \sigma(\theta_i - \theta_j)` is fitted by Newton's method on the
deduplicated outcome counts (one row per ordered pair of models and outcome). Ties count as half a
win for each side (``ties="half"``) or follow Davidson's (1970) model
:math:`P(\text{tie}) = \nu\sqrt{\pi_i\pi_j}/(\pi_i + \pi_j + \nu\sqrt{\pi_i\pi_j})`
(``ties="davidson"``, :math:`\nu` estimated). Point estimates are the full-data MLE (never a
bootstrap median). The covariance is the sandwich :math:`H^{-1} M H^{-1}` — :math:`H` the Fisher
information, :math:`M` the outer products of the per-battle scores — summed within clusters of
battles (``cluster``: the prompt or the voter) when votes are not independent, or the covariance of
bootstrap refits (``method="bootstrap"``: battles, or whole clusters, resampled). Ratings are
identified only up to a constant: they are centred (mean 0), and intervals of rating
*differences* (:meth:`BradleyTerryResult.difference_ci`) need no anchor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.blas import one_blas_thread
from .._core.errors import DataError, DegenerateDataWarning, warn
from .._core.params import public
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least, check_option
from ._battles import Battles, battle_cluster_codes, encode_battles
from ._fit import Cells, bootstrap_cells, cells_sandwich, count_cells, fit_cells
from ._ratings import BradleyTerryResult, sandwich_result, separation, with_separated

__all__ = ["BradleyTerryResult", "bradley_terry"]


@public
def bradley_terry(battles: Any, *, ties: str = "half", cluster: Any = None, method: str = "sandwich",  # noqa: PLR0913
                  confidence_level: float = 0.95, n_resamples: int = 1000, rng: SeedLike = None, tol: float = 1e-10,
                  max_iter: int = 200, covariates: Any = None, weights: Any = None,
                  count: str | None = None) -> BradleyTerryResult:
    r"""Bradley-Terry ratings with a sandwich (optionally cluster-robust) or bootstrap covariance.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (``"model_a"``, ``"model_b"`` or ``"tie"``; the
        winner's name is accepted too), e.g. from :func:`llm_power.read_battles`.
    ties : {"half", "davidson"}, default "half"
        ``"half"``: a tie counts as half a win for each side. ``"davidson"``: Davidson's tie
        model, with its tie parameter nu estimated (``tie_parameter``).
    cluster : str or array_like, optional
        A column of ``battles`` (``"question"`` finds ``question_id``; ``"judge"``) or one label
        per battle: scores are summed within clusters (sandwich) or whole clusters resampled
        (bootstrap), for votes that share a prompt or a voter.
    method : {"sandwich", "bootstrap"}, default "sandwich"
        ``"bootstrap"`` refits ``n_resamples`` resamples; the point estimate stays the full-data
        MLE, the covariance is that of the refits, and ``difference_ci`` gives percentile intervals.
    confidence_level : float, default 0.95
        Default level of the intervals.
    n_resamples : int, default 1000
        Bootstrap refits (``method="bootstrap"``), at least 2; refits without a finite fit are
        dropped (fewer than two left is a DataError).
    rng : seed or Generator, optional
        For the bootstrap. Unused with ``method="sandwich"``.
    tol : float, default 1e-10
        Convergence tolerance of the damped Newton iterations of the full-data fit: they stop when
        the largest step in the log-strengths (and Davidson's log nu) is below ``tol``.
    max_iter : int, default 200
        Most Newton iterations of the full-data fit; not converging within them is a DataError.
    covariates : list of str or array_like (n_battles, p), optional
        Style control: numeric columns of ``battles`` (or an array), each battle's covariate as
        model_a's minus model_b's (length difference, markdown counts, ...); the model is
        logit P(a beats b) = theta_a - theta_b + x'beta, the ratings then the style-controlled ones and
        ``coefficients`` the betas, with the same (clustered) sandwich. ``ties="half"``,
        ``method="sandwich"`` only.
    weights : str or array_like (n_battles,), optional
        A column (or array) of positive battle weights, e.g. inverse sampling probabilities of
        unevenly sampled pairs: the weighted likelihood, with a sandwich that accounts for them.
    count : str, optional
        A column of battle counts: each row stands for that many identical battles (whole numbers
        >= 0), e.g. (model_a, model_b, winner[, covariate buckets]) -> count. The fit, the
        coefficients and the sandwich equal those of the battles written out one per row (frequency
        weights: a row of count n enters the per-battle meat as n battles). With ``cluster`` each row
        must be within one cluster; counts pooled over prompts carry no cluster information, so fit
        them without ``cluster`` (the per-battle sandwich). ``method="sandwich"`` only. For battles
        too many for memory see :func:`bradley_terry_shards`.

    Returns
    -------
    BradleyTerryResult
        ``models`` (sorted by name), ``ratings`` (log-strengths, mean 0; +-inf / NaN for a
        separated model), ``covariance`` (models x models), ``n_battles``, ``n_clusters``,
        ``tie_parameter`` (Davidson's nu or None), ``df``, ``not_estimable`` and ``separated``;
        :meth:`~BradleyTerryResult.difference_ci`, :meth:`~BradleyTerryResult.elo`,
        :meth:`~BradleyTerryResult.rank_intervals` and :meth:`~BradleyTerryResult.to_frame`
        build on them.

    Examples
    --------
    >>> from llm_power import bradley_terry
    >>> battles = {"model_a": ["x", "x", "y", "x", "z", "y"], "model_b": ["y", "z", "z", "y", "x", "z"],
    ...            "winner": ["model_a", "model_a", "tie", "model_b", "model_b", "model_a"]}
    >>> res = bradley_terry(battles)
    >>> res.models, [round(float(r), 3) for r in res.ratings]
    (['x', 'y', 'z'], [0.862, 0.446, -1.308])
    """
    check_option(ties, "ties", ("half", "davidson"))
    check_option(method, "method", ("sandwich", "bootstrap"))
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 2)
    if count is not None:
        return _counted(battles, count, cluster=cluster, covariates=covariates, weights=weights, ties=ties,
                        method=method, confidence_level=confidence_level, tol=tol, max_iter=max_iter)
    enc = encode_battles(battles)
    groups = battle_cluster_codes(cluster, battles, enc.n)
    if covariates is not None or weights is not None:
        return fit_styled(enc, groups, battles, covariates, weights, ties=ties, method=method,
                          confidence_level=confidence_level, tol=tol, max_iter=max_iter)
    return fit_battles(enc, groups, ties=ties, method=method, confidence_level=confidence_level,
                       n_resamples=n_resamples, rng=rng, tol=tol, max_iter=max_iter)


def _counted(battles: Any, count: str, *, cluster: Any, covariates: Any, weights: Any, ties: str,  # noqa: PLR0913
             method: str, confidence_level: float, tol: float, max_iter: int) -> BradleyTerryResult:
    """The fit of a table of battle counts: through the counted cells (:mod:`._sharded`, one shard), or
    with covariates or weights the style fit with frequency weights.
    """
    import pandas as pd

    from ._sharded import count_column, fit_counted, run_local

    if not isinstance(count, str):
        msg = f"`count` must be a column name of the battles; got {type(count).__name__}."
        raise TypeError(msg)
    if method != "sandwich":
        msg = "`count` is fitted with method='sandwich' (a bootstrap resamples battles: write the counts out for it)"
        raise ValueError(msg)
    try:
        frame = battles if isinstance(battles, pd.DataFrame) else pd.DataFrame(dict(battles))
    except (TypeError, ValueError):
        msg = "battles: model_a, model_b, winner and the count must be 1-D columns of one length"
        raise DataError(msg) from None
    freq, keep = count_column(frame, count)

    def rows(values: Any) -> Any:  # an array given per row, without the rows of count 0
        if values is None or isinstance(values, str) or (
                isinstance(values, (list, tuple)) and all(isinstance(v, str) for v in values)):
            return values
        arr = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
        if arr.shape[0] != len(frame):
            msg = f"{arr.shape[0]} values for {len(frame)} rows of battles"
            raise ValueError(msg)
        return arr if keep is None else arr[keep]

    cluster, covariates, weights = rows(cluster), rows(covariates), rows(weights)
    if keep is not None:
        frame = frame.loc[keep].reset_index(drop=True)
    if covariates is None and weights is None:
        if cluster is not None and not isinstance(cluster, str):
            frame, cluster = frame.assign(**{"cluster label": cluster}), "cluster label"
        return fit_counted([frame], run_local, cluster=cluster, count=count, davidson=ties == "davidson",
                           confidence_level=confidence_level, tol=tol, max_iter=max_iter)
    enc = encode_battles(frame)
    return fit_styled(enc, battle_cluster_codes(cluster, frame, enc.n), frame, covariates, weights, ties=ties,
                      method=method, confidence_level=confidence_level, tol=tol, max_iter=max_iter, frequency=freq)


def fit_styled(enc: Battles, groups: np.ndarray | None, battles: Any, covariates: Any, weights: Any, *,  # noqa: PLR0913
               ties: str, method: str, confidence_level: float, tol: float, max_iter: int,
               frequency: np.ndarray | None = None) -> BradleyTerryResult:
    """The fit with battle covariates and weights (:mod:`._style`)."""
    from ._style import battle_columns, fit_style

    if ties != "half" or method != "sandwich":
        msg = "`covariates` and `weights` are fitted with ties='half' and method='sandwich'"
        raise ValueError(msg)
    x, names = battle_columns(battles, covariates, enc.n, "covariates")
    w = None
    if weights is not None:
        w_cols, _ = battle_columns(battles, [weights] if isinstance(weights, str) else
                                   np.asarray(weights, dtype=object).reshape(-1, 1), enc.n, "weights")
        w = None if w_cols is None else w_cols[:, 0]
    m = len(enc.models)
    cells_at = count_cells(enc)
    _, _, separated = separation(Cells.from_cell_counts(m, cells_at[0], cells_at[1]), enc.models)
    if separated:
        shown = ", ".join(f"{k} ({v})" for k, v in list(separated.items())[:5])
        msg = f"style control needs every model to win and to lose among the rest: {shown}"
        raise DataError(msg)
    y = np.array([1.0, 0.0, 0.5])[enc.outcome]
    with one_blas_thread():
        fit = fit_style(enc.ia, enc.ib, y, m, covariates=x, weights=w, frequency=frequency, groups=groups, tol=tol,
                        max_iter=max_iter)
    cov, coef_cov = fit.covariance[:m, :m], fit.covariance[m:, m:]
    if fit.not_estimable is not None:
        cov, coef_cov = np.full_like(cov, np.nan), np.full_like(coef_cov, np.nan)
        warn(f"Bradley-Terry: {fit.not_estimable}; every interval and test is NaN", DegenerateDataWarning)
    n_battles = enc.n if frequency is None else int(round(float(np.sum(frequency))))
    return BradleyTerryResult(models=enc.models, ratings=fit.ratings, covariance=cov, n_battles=n_battles,
                              n_clusters=fit.n_clusters, confidence_level=confidence_level, df=fit.df,
                              not_estimable=fit.not_estimable, sandwich_parts=fit.parts, covariates=names,
                              coefficients=fit.coefficients, coefficient_covariance=coef_cov)


def fit_battles(enc: Battles, groups: np.ndarray | None, *, ties: str = "half", method: str = "sandwich",  # noqa: PLR0913
                confidence_level: float = 0.95, n_resamples: int = 1000, rng: SeedLike = None, tol: float = 1e-10,
                max_iter: int = 200) -> BradleyTerryResult:
    """:func:`bradley_terry` on encoded battles and cluster codes (checked by the caller).

    A comparison graph in pieces is a DataError naming them; models that never lose (never win)
    against the rest get +inf (-inf) and a SeparationWarning, the others are fitted among
    themselves (the limit of the likelihood as the separated ratings run off).
    """
    m = len(enc.models)
    cells_at = count_cells(enc)
    cells = Cells.from_cell_counts(m, cells_at[0], cells_at[1])
    main, outside, separated = separation(cells, enc.models)
    if separated:
        keep = main[enc.ia] & main[enc.ib]
        index = np.cumsum(main) - 1
        sub = Battles(models=[x for x, ok in zip(enc.models, main, strict=True) if ok], ia=index[enc.ia[keep]],
                      ib=index[enc.ib[keep]], outcome=enc.outcome[keep])
        part = fit_battles(sub, None if groups is None else np.unique(groups[keep], return_inverse=True)[1],
                           ties=ties, method=method, confidence_level=confidence_level, n_resamples=n_resamples,
                           rng=rng, tol=tol, max_iter=max_iter)
        return with_separated(part, enc.models, enc.n, main, outside, separated)
    davidson = ties == "davidson"
    with one_blas_thread():
        return _fit_connected(enc, cells, cells_at, groups, davidson=davidson, method=method,
                              confidence_level=confidence_level, n_resamples=n_resamples, rng=rng, tol=tol,
                              max_iter=max_iter)


def _fit_connected(enc: Battles, cells: Cells, cells_at: tuple[np.ndarray, np.ndarray, np.ndarray],  # noqa: PLR0913
                   groups: np.ndarray | None, *, davidson: bool, method: str, confidence_level: float,
                   n_resamples: int, rng: SeedLike, tol: float, max_iter: int) -> BradleyTerryResult:
    """The fit, covariance and result of battles whose models all win and lose among themselves."""
    ties = "davidson" if davidson else "half"
    theta, tau = fit_cells(cells, davidson=davidson, tol=tol, max_iter=max_iter)
    n_clusters = None if groups is None else int(groups.max()) + 1
    if method == "sandwich":
        return sandwich_result(enc.models, enc.n, theta, tau, cells_sandwich(enc, cells, theta, tau, groups, cells_at),
                               confidence_level)
    reps = bootstrap_cells(enc, cells_at, groups, n_resamples, as_rng(rng), davidson=davidson, start=(theta, tau))
    replicates = reps[np.all(np.isfinite(reps), axis=1)]
    if replicates.shape[0] < 2:
        msg = "bootstrap: fewer than two resamples had a finite Bradley-Terry fit"
        raise DataError(msg)
    if replicates.shape[0] < reps.shape[0]:
        dropped = reps.shape[0] - replicates.shape[0]
        warn(f"Bradley-Terry bootstrap: {dropped:,} of {reps.shape[0]:,} resamples have no finite fit (a "
             "model without a win or without a loss in the resample) and are dropped; the covariance is "
             "that of the others (method='sandwich' needs no resampling)", DegenerateDataWarning)
    return BradleyTerryResult(models=enc.models, ratings=theta, covariance=np.cov(replicates, rowvar=False),
                              n_battles=enc.n, n_clusters=n_clusters, confidence_level=confidence_level, ties=ties,
                              tie_parameter=None if tau is None else math.exp(tau), method=method,
                              replicates=replicates)
