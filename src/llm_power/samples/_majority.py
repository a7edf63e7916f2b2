"""maj@k: the probability that a majority vote of k samples is right, per question and over a
benchmark with its interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .._core.errors import DataError
from .._core.params import public
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least
from ._passk import PassAtKResult, check_cluster_method, question_cluster_codes, question_summary

__all__ = ["maj_at_k", "maj_at_k_ci"]


def maj_at_k(answers: Any, correct: Any, k: int) -> np.ndarray:
    """Unbiased maj@k of each question from its sampled final answers.

    ``answers``: questions x samples labels (``None`` or NaN = no answer, never a majority);
    ``correct``: the right label per question. maj@k is the probability that, among k samples
    drawn without replacement from the n, the correct answer has the most votes; a tie for the
    most votes counts as a share 1/(number tied) (a fair random tie-break). Exact, by a dynamic
    programme over the other answers' vote counts (multivariate hypergeometric).

    Parameters
    ----------
    answers : array_like (questions x samples)
        The sampled final answers per question (any hashable labels, e.g. extracted numbers as
        strings); ``None`` or NaN marks a sample without an answer: it counts among the n samples
        but votes for nothing.
    correct : array_like
        The right label per question (one per row of ``answers``; else a ValueError).
    k : int
        Votes per majority, at least 1 and at most the samples of every question (else a
        DataError).

    Returns
    -------
    ndarray
        Shape (questions,): each question's maj@k in [0, 1] (0 when no sample gives the correct
        label).

    Examples
    --------
    >>> from llm_power import maj_at_k
    >>> maj_at_k([["4", "4", "5", "4", "5"]], ["4"], 3).round(4)
    array([0.7])
    """
    rows = [list(r) for r in np.asarray(answers, dtype=object)]
    truth = list(np.asarray(correct, dtype=object).ravel())
    if len(rows) != len(truth):
        msg = f"answers has {len(rows)} questions but correct has {len(truth)}"
        raise ValueError(msg)
    k = check_int_at_least(k, "k", 1)
    out = np.empty(len(rows))
    for q, (row, right) in enumerate(zip(rows, truth, strict=True)):
        labels = [a for a in row if not (a is None or (isinstance(a, float) and math.isnan(a)))]
        n = len(row)
        if k > n:
            msg = f"question {q}: k = {k} but only {n} samples"
            raise DataError(msg)
        counts: dict[Any, int] = {}
        for a in labels:
            counts[a] = counts.get(a, 0) + 1
        n_right = counts.pop(right, 0)
        others = list(counts.values())
        out[q] = _maj_probability(n, n_right, others, k)
    return out


def _maj_probability(n: int, n_right: int, others: list[int], k: int) -> float:
    """P(the correct label wins the plurality vote of a k-subset), ties shared; unanswered samples
    (n - n_right - sum(others)) vote for nothing.
    """
    total = 0.0
    log_all = float(special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1))
    n_blank = n - n_right - sum(others)
    for a in range(1, min(k, n_right) + 1):
        # table[t, s]: ways for the other labels (and blanks) to take s samples with t labels tied at a
        table = np.zeros((len(others) + 1, k - a + 1))
        table[0, :] = [math.comb(n_blank, s) for s in range(k - a + 1)]
        for m in others:
            new = np.zeros_like(table)
            for b in range(min(a, m, k - a) + 1):
                ways = math.comb(m, b)
                if b < a:
                    new[:, b:] += ways * table[:, : table.shape[1] - b]
                else:  # b == a: one more label tied with the correct one
                    new[1:, b:] += ways * table[:-1, : table.shape[1] - b]
            table = new
        share = table[:, k - a] / np.arange(1, len(others) + 2)
        total += math.comb(n_right, a) * float(share.sum())
    return total / math.exp(log_all) if total else 0.0


@public
def maj_at_k_ci(answers: Any, correct: Any, k: Any, *, cluster: Any = None, confidence_level: float = 0.95,
                cluster_method: str = "cr2", rng: SeedLike = None) -> PassAtKResult:
    """maj@k of a benchmark (the mean over questions of :func:`maj_at_k`) with its interval for new
    questions: the standard error over questions (cluster-robust with ``cluster``), t interval.

    Parameters
    ----------
    answers : array_like (questions x samples)
        The sampled final answers per question (``None`` or NaN = no answer), as in
        :func:`maj_at_k`; at least 2 questions.
    correct : array_like
        The right label per question.
    k : int or sequence of int
        One or several k (each at least 1 and at most the samples of every question).
    cluster : array_like, optional
        A group per question (task, subject): cluster-robust standard error (CR2, Imbens-Kolesar
        degrees of freedom, unless ``cluster_method`` says otherwise), at least 2 clusters. Default
        None: independent questions.
    confidence_level : float, default 0.95
        In (0, 1): the default level of the result's ``confidence_interval()``.
    cluster_method : {"cr2", "cv3", "wild"}, default "cr2"
        With ``cluster``, the clustered interval (as :func:`~llm_power.compare`'s ``cluster_method``):
        t on the CR2 variance, t on the cluster jackknife's (CV3, G - 1 df), or the restricted wild
        cluster bootstrap's test inverted (``standard_error`` then its CR1 SE, ``df`` NaN). A method
        other than "cr2" needs ``cluster`` (else a ValueError).
    rng : seed or Generator, optional
        For ``cluster_method="wild"``: its weights are drawn from ``wild_seed`` of this generator
        (the same seed, the same interval).

    Returns
    -------
    PassAtKResult
        ``metric="maj@k"``, ``population="questions"``, ``method="t"``; ``k``, ``estimate`` and
        ``standard_error`` of shape (len(k),), ``n_questions``, ``n_clusters``, ``df``
        (questions - 1, or the cluster df) and ``cluster_method``; ``confidence_interval()`` gives the
        interval per k.

    Examples
    --------
    >>> from llm_power import maj_at_k_ci
    >>> answers = [["4", "4", "5", "4"], ["7", "1", "1", "7"], ["2", "2", "2", "3"], ["9", "8", "6", "9"]]
    >>> res = maj_at_k_ci(answers, ["4", "7", "2", "6"], [1, 3])
    >>> res.estimate.round(3)
    array([0.562, 0.667])
    """
    level = check_confidence_level(confidence_level)
    cluster_method = check_cluster_method(cluster_method, cluster)
    gen = as_rng(rng)
    ks = np.atleast_1d(np.asarray(k)).astype(np.int64)
    values = np.column_stack([maj_at_k(answers, correct, int(kk)) for kk in ks])
    if values.shape[0] < 2:
        msg = f"an interval over questions needs at least 2 questions; got {values.shape[0]}"
        raise DataError(msg)
    codes = question_cluster_codes(cluster, values.shape[0])
    mean, se, df, g, wild = question_summary(values, codes, cluster_method, gen, level)
    return PassAtKResult(metric="maj@k", k=ks, estimate=mean, standard_error=se, population="questions",
                         n_questions=int(values.shape[0]), n_clusters=g, df=df, method="t", confidence_level=level,
                         cluster_method=None if codes is None else cluster_method, _wild=wild)
