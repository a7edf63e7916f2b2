"""Tests beyond one pair on one split: Cochran's Q for several models on the same items, and
Dietterich's 5x2cv paired t test for models compared by cross-validation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from .._core.errors import DegenerateDataWarning, warn
from .._core.validation import as_float_array, check_binary
from ._tests import TestResult

__all__ = ["cochran_q", "five_by_two_cv"]


def cochran_q(scores: Any) -> TestResult:
    r"""Cochran's Q test: do three or more models have the same accuracy on the same items?

    Parameters
    ----------
    scores : array_like, shape (n_items, n_models)
        0/1 correctness; a pandas DataFrame with one column per model is accepted.

    Returns
    -------
    TestResult
        ``statistic`` = Q, ``df`` = n_models - 1 (chi-square reference distribution).

    Notes
    -----
    With column totals :math:`C_j`, row totals :math:`R_i`, total N and k models:
    :math:`Q = (k-1)\,[k\sum_j C_j^2 - N^2] / [kN - \sum_i R_i^2]`. Items answered the same by
    every model do not change Q. With two models Q is McNemar's uncorrected chi-square.

    References
    ----------
    .. [1] Cochran, W. G. (1950). The comparison of percentages in matched samples.
       Biometrika 37(3/4), 256-266.

    Examples
    --------
    >>> from llm_power import cochran_q
    >>> res = cochran_q([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0], [1, 1, 0]])
    >>> round(res.statistic, 3), res.df, round(res.pvalue, 4)
    (6.0, 2.0, 0.0498)
    """
    x = as_float_array(scores, "scores")
    if x.ndim != 2:
        msg = f"`scores` must be a 2-D (n_items, n_models) matrix; got shape {x.shape}."
        raise ValueError(msg)
    n_items, k = x.shape
    if k < 2:
        msg = f"`scores` needs at least 2 model columns; got {k}."
        raise ValueError(msg)
    if n_items < 2:
        msg = f"need at least 2 items; got {n_items}."
        raise ValueError(msg)
    if not np.all(np.isfinite(x)):
        msg = "`scores` must not contain NaN or inf."
        raise ValueError(msg)
    check_binary(x.reshape(-1), "scores", why="Cochran's Q needs correct/incorrect per item")
    col = x.sum(axis=0)
    row = x.sum(axis=1)
    total = col.sum()
    denom = k * total - np.sum(row**2)
    if denom == 0:
        warn("every item is answered the same by all models: Q is undefined; p = 1.",
                      DegenerateDataWarning)
        return TestResult(statistic=0.0, pvalue=1.0, method="cochran_q", n=n_items, df=float(k - 1))
    q = (k - 1) * (k * np.sum(col**2) - total**2) / denom
    return TestResult(statistic=float(q), pvalue=float(stats.chi2.sf(q, k - 1)), method="cochran_q",
                      n=n_items, df=float(k - 1))


def five_by_two_cv(scores_a: Any, scores_b: Any) -> TestResult:
    r"""Dietterich's (1998) 5x2cv paired t test from per-fold scores.

    For users who can *retrain* both models: five replications of 2-fold cross-validation, each
    model trained on one half and scored on the other. Rarely applicable to fixed LLM outputs
    (there is nothing to retrain); use :func:`mcnemar` or :func:`paired_t` on items instead.

    Parameters
    ----------
    scores_a, scores_b : array_like, shape (5, 2)
        Score of each model on fold j of replication i.

    Returns
    -------
    TestResult
        ``statistic`` = :math:`t = p_1^{(1)} / \sqrt{\tfrac15\sum_i s_i^2}` with 5 df, where
        :math:`p_i^{(j)}` is the A - B difference on fold j of replication i,
        :math:`\bar p_i` its mean over the two folds and
        :math:`s_i^2 = (p_i^{(1)} - \bar p_i)^2 + (p_i^{(2)} - \bar p_i)^2`; two-sided p-value.

    References
    ----------
    .. [1] Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
       classification learning algorithms. Neural Computation 10(7), 1895-1923.

    Examples
    --------
    >>> from llm_power import five_by_two_cv
    >>> a = [[0.81, 0.79], [0.80, 0.82], [0.78, 0.80], [0.83, 0.81], [0.79, 0.80]]
    >>> b = [[0.78, 0.77], [0.79, 0.78], [0.77, 0.78], [0.80, 0.79], [0.78, 0.79]]
    >>> res = five_by_two_cv(a, b)
    >>> round(res.statistic, 3), res.df
    (2.739, 5.0)
    """
    pa = as_float_array(scores_a, "scores_a")
    pb = as_float_array(scores_b, "scores_b")
    for arr, name in ((pa, "scores_a"), (pb, "scores_b")):
        if arr.shape != (5, 2):
            msg = f"`{name}` must have shape (5, 2): 5 replications x 2 folds; got {arr.shape}."
            raise ValueError(msg)
        if not np.all(np.isfinite(arr)):
            msg = f"`{name}` must not contain NaN or inf."
            raise ValueError(msg)
    diff = pa - pb
    mean = diff.mean(axis=1, keepdims=True)
    s2 = np.sum((diff - mean) ** 2, axis=1)
    denom = math.sqrt(s2.mean())
    if denom == 0:
        warn("zero variance across folds: the 5x2cv statistic is undefined.",
                      DegenerateDataWarning)
        t = math.nan if diff[0, 0] == 0 else math.copysign(math.inf, diff[0, 0])
        p = 1.0 if math.isnan(t) else 0.0
    else:
        t = float(diff[0, 0] / denom)
        p = float(2.0 * stats.t.sf(abs(t), 5))
    return TestResult(statistic=t, pvalue=p, method="five_by_two_cv", n=10, df=5.0,
                      estimate=float(diff.mean()))
