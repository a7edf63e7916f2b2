r"""Resampled means of per-question estimates: the Bayesian bootstrap of :func:`pass_at_k_ci` and the
ordinary bootstrap of :func:`compare_pass_at_k`'s band, both over the *distinct* per-question values.

pass@k of questions with n samples each takes at most n + 1 distinct values per k, so a resample
never needs to touch every question: it only needs a weight per distinct value (per distinct row of
the questions x ks matrix), drawn with the distribution that the questions' own weights would give
it. Both resamplers sort the distinct rows first, so that the draws depend on the questions' values,
not on their order or on the input's dtype.

- The **Bayesian bootstrap** (Rubin 1981) gives the questions Dirichlet(1, ..., 1) weights. Summed
  over the :math:`m_j` questions sharing the value :math:`u_j` they are Dirichlet(:math:`m_1, \dots,
  m_J`): one Gamma(:math:`m_j`) draw per distinct value, normalised. The weighted mean has mean
  :math:`\bar u` (the sample mean) and variance :math:`\hat\sigma^2 / (N + 1)` (:math:`\hat\sigma^2`
  the population variance of the N questions' values), against :math:`\hat\sigma^2 / N` for the
  ordinary bootstrap: the same first-order distribution. With clusters the weights are the
  clusters' (Dirichlet over clusters, clusters with the same sum and size pooled the same way) and a
  resample is the ratio :math:`\sum_g w_g S_g / \sum_g w_g N_g` of the weighted sums and sizes.
- The **ordinary bootstrap** (multinomial counts of the distinct values, or of the clusters) stays
  for the max-t band over k of :func:`compare_pass_at_k`, whose validated critical value it gives.

References
----------
Rubin, D. B. (1981). The Bayesian bootstrap. *The Annals of Statistics* 9(1), 130-134.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bayesian_bootstrap_means", "bootstrap_means"]

#: entries of one block of resample weights (resamples x distinct units): bounds the memory
_BLOCK = 4_000_000


def _units(values: np.ndarray, codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(sums, sizes) of the resampled units: the questions (size 1) or the clusters."""
    if codes is None:
        return values, np.ones(values.shape[0])
    g = int(codes.max()) + 1
    sums = np.zeros((g, values.shape[1]))
    np.add.at(sums, codes, values)
    return sums, np.bincount(codes, minlength=g).astype(float)


def bayesian_bootstrap_means(values: np.ndarray, codes: np.ndarray | None, n_resamples: int,
                             gen: np.random.Generator) -> np.ndarray:
    """Resamples x ks Bayesian-bootstrap means of the questions x ks ``values`` (clusters weighted with ``codes``).

    The distinct (sum, size) rows of the units, sorted, with their multiplicities m: per resample one
    Gamma(m) draw per distinct row, and the mean is (w @ sums) / (w @ sizes).
    """
    sums, sizes = _units(values, codes)
    rows, mult = np.unique(np.column_stack([sums, sizes]), axis=0, return_counts=True)
    uniq_sums, uniq_sizes = rows[:, :-1], rows[:, -1]
    shape = mult.astype(float)
    out = np.empty((n_resamples, values.shape[1]))
    block = max(1, _BLOCK // rows.shape[0])
    for start in range(0, n_resamples, block):
        count = min(block, n_resamples - start)
        w = gen.standard_gamma(shape, size=(count, shape.size))
        out[start:start + count] = (w @ uniq_sums) / (w @ uniq_sizes)[:, None]
    return out


def bootstrap_means(values: np.ndarray, codes: np.ndarray | None, n_resamples: int,
                    gen: np.random.Generator) -> np.ndarray:
    """Resamples x ks means of resampled questions (whole clusters with ``codes``): the ordinary bootstrap.

    Questions: a resample is a multinomial draw of how often each distinct row of ``values`` is drawn,
    the same distribution as drawing questions, in O(distinct rows) instead of O(questions) per
    resample. Clusters: a multinomial draw over the clusters.
    """
    if codes is None:
        return _bootstrap_question_means(values, n_resamples, gen)
    sums, sizes = _units(values, codes)
    units = sums.shape[0]
    out = np.empty((n_resamples, values.shape[1]))
    block = max(1, _BLOCK // units)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        w = gen.multinomial(units, np.full(units, 1.0 / units), size=rows).astype(float)
        out[start:start + rows] = (w @ sums) / (w @ sizes)[:, None]
    return out


def _bootstrap_question_means(values: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """Resampled means of questions as multinomial counts of the distinct rows of ``values`` (sorted,
    so that the resamples depend on the questions' values, not on their order).
    """
    n = values.shape[0]
    uniq, inv = np.unique(values, axis=0, return_inverse=True)
    freq = np.bincount(inv.ravel(), minlength=uniq.shape[0]) / n
    out = np.empty((n_resamples, values.shape[1]))
    block = max(1, _BLOCK // uniq.shape[0])
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        out[start:start + rows] = (gen.multinomial(n, freq, size=rows) @ uniq) / n
    return out
