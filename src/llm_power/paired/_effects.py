"""Paired-difference intervals and effect sizes for two models on the same items.

- :func:`paired_difference_ci` -- confidence interval for p_A - p_B from paired 0/1 data
  (Newcombe's method 10, Tango's score interval, Wald);
- :func:`effect_sizes` -- risk difference, relative risk, odds ratios, Cohen's h and d_z, the
  correlation phi and the paired/unpaired standard-error ratio.

Notation: for 0/1 data, n11 = both right, b = n10 = A right and B wrong, c = n01 = A wrong and
B right, n00 = both wrong; n items; delta = p_A - p_B = (b - c)/n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .._core.params import public
from .._core.results import ConfidenceInterval, Result
from .._core.validation import check_binary, check_confidence_level, check_option, check_paired, is_binary
from .._kernel.paired_intervals import newcombe_arrays, tango_z
from .._kernel.quantiles import level_quantile
from .._kernel.sufficient import paired_counts

__all__ = [
    "PAIRED_CI_METHODS",
    "EffectSizesResult",
    "effect_sizes",
    "paired_counts",
    "paired_difference_ci",
    "paired_difference_ci_from_counts",
]

PAIRED_CI_METHODS = ("newcombe", "tango", "wald")


@public
def paired_difference_ci(
    a: Any,
    b: Any,
    *,
    method: str = "newcombe",
    confidence_level: float = 0.95,
) -> ConfidenceInterval:
    r"""Confidence interval for the accuracy difference p_A - p_B on the same items.

    Parameters
    ----------
    a, b : array_like of 0/1
        Aligned per-item correctness of model A and model B.
    method : {"newcombe", "tango", "wald"}, default "newcombe"
        ``"newcombe"``: Newcombe's (1998) method 10, the square-and-add combination of the
        two Wilson intervals with a correlation correction. ``"tango"``: Tango's (1998)
        score interval (inverts the score test with the restricted MLE). ``"wald"``:
        :math:`\hat\delta \pm z\sqrt{(b+c)/n - \hat\delta^2}/\sqrt n` (poor with few discordant
        pairs; for contrast).
    confidence_level : float, default 0.95

    Returns
    -------
    ConfidenceInterval
        Bounds inside [-1, 1].

    Notes
    -----
    Newcombe (method 10): with Wilson intervals :math:`(l_1, u_1)` for p_A and
    :math:`(l_2, u_2)` for p_B and :math:`\hat\phi` the correlation of the 2x2 table,
    :math:`L = \hat\delta - \sqrt{(p_A-l_1)^2 - 2\hat\phi(p_A-l_1)(u_2-p_B) + (u_2-p_B)^2}`,
    :math:`U = \hat\delta + \sqrt{(u_1-p_A)^2 - 2\hat\phi(u_1-p_A)(p_B-l_2) + (p_B-l_2)^2}`.
    :math:`\hat\phi = (A - n/2)/\sqrt{P}` when A = n11 n00 - b c > n/2, 0 when 0 <= A <= n/2,
    :math:`A/\sqrt P` when A < 0, with P the product of the four margins (0 when a margin is 0).

    Tango: :math:`Z(\delta) = (b - c - n\delta)/\sqrt{n(2\tilde p_{01} + \delta(1-\delta))}` where
    :math:`\tilde p_{01} = [\sqrt{W^2 + 8nc\,\delta(1-\delta)} - W]/(4n)`,
    :math:`W = -b - c + (2n - b + c)\delta`; the interval is :math:`\{\delta : |Z(\delta)| \le z\}`.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Improved confidence intervals for the difference between
       binomial proportions based on paired data. Statistics in Medicine 17, 2635-2650.
    .. [2] Tango, T. (1998). Equivalence test and confidence interval for the difference in
       proportions for the paired-sample design. Statistics in Medicine 17, 891-908.
    .. [3] Fagerland, M. W., Lydersen, S. & Laake, P. (2014). Recommended tests and confidence
       intervals for paired binomial proportions. Statistics in Medicine 33, 2850-2875.

    Examples
    --------
    A right on 150 of 200 items, B on 142; they disagree on 10 items (b = 9, c = 1):

    >>> import numpy as np
    >>> from llm_power import paired_difference_ci
    >>> a = np.r_[np.ones(150), np.zeros(50)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> lo, hi = paired_difference_ci(a, b)
    >>> round(lo, 4), round(hi, 4)
    (0.0076, 0.0734)
    """
    method = check_option(method, "method", PAIRED_CI_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    a_arr, b_arr = check_paired(a, b, min_items=1)
    check_binary(a_arr, "a", why="paired_difference_ci needs correct/incorrect per item")
    check_binary(b_arr, "b", why="paired_difference_ci needs correct/incorrect per item")
    return paired_difference_ci_from_counts(*paired_counts(a_arr, b_arr), method=method,
                                            confidence_level=confidence_level)


@public
def paired_difference_ci_from_counts(
    n11: int, n10: int, n01: int, n00: int, *, method: str = "newcombe", confidence_level: float = 0.95
) -> ConfidenceInterval:
    """:func:`paired_difference_ci` from the 2x2 table (both right, A only, B only, neither).

    Parameters
    ----------
    n11 : int
        Items both models got right.
    n10 : int
        Items only model A got right (b).
    n01 : int
        Items only model B got right (c).
    n00 : int
        Items both got wrong. The four counts are non-negative whole numbers with a positive
        total n.
    method : {"newcombe", "tango", "wald"}, default "newcombe"
        As in :func:`paired_difference_ci`: Newcombe's method 10, Tango's score interval, or Wald.
    confidence_level : float, default 0.95
        Two-sided level of the interval, in (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` of p_A - p_B = (n10 - n01) / n, floats inside [-1, 1].

    Examples
    --------
    Newcombe's (1998) worked example, 20 / 12 / 2 / 16:

    >>> from llm_power import paired_difference_ci_from_counts
    >>> ci = paired_difference_ci_from_counts(20, 12, 2, 16)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0562, 0.3292)
    """
    method = check_option(method, "method", PAIRED_CI_METHODS)
    confidence_level = check_confidence_level(confidence_level)
    cells = []
    for value, name in ((n11, "n11"), (n10, "n10"), (n01, "n01"), (n00, "n00")):
        if isinstance(value, bool) or not float(value).is_integer() or value < 0:
            msg = f"`{name}` must be a non-negative integer count; got {value!r}."
            raise ValueError(msg)
        cells.append(int(value))
    n11, n10, n01, n00 = cells
    n = n11 + n10 + n01 + n00
    if n == 0:
        msg = "the 2x2 table is empty: need at least 1 item."
        raise ValueError(msg)
    z = float(level_quantile(confidence_level))
    delta = (n10 - n01) / n
    if method == "wald":
        half = z * math.sqrt(max((n10 + n01) / n - delta * delta, 0.0) / n)
        return ConfidenceInterval(max(-1.0, delta - half), min(1.0, delta + half))
    if method == "newcombe":
        return _newcombe(n11, n10, n01, n00, confidence_level)
    return _tango(n11, n10, n01, n00, z)


def _newcombe(n11: int, n10: int, n01: int, n00: int, confidence_level: float) -> ConfidenceInterval:
    low, high = newcombe_arrays(np.array([n11]), np.array([n10]), np.array([n01]), np.array([n00]), confidence_level)
    return ConfidenceInterval(float(low[0]), float(high[0]))


def _tango(n11: int, n10: int, n01: int, n00: int, z: float) -> ConfidenceInterval:
    n = n11 + n10 + n01 + n00
    delta = (n10 - n01) / n
    eps = 1e-12

    def f(d: float, target: float) -> float:
        return tango_z(d, n10, n01, n) - target

    if delta <= -1 + eps:
        low = -1.0
    else:
        lo_end = -1.0 + eps
        low = lo_end if f(lo_end, z) < 0 else optimize.brentq(f, lo_end, delta, args=(z,), xtol=1e-13)
    if delta >= 1 - eps:
        high = 1.0
    else:
        hi_end = 1.0 - eps
        high = hi_end if f(hi_end, -z) > 0 else optimize.brentq(f, delta, hi_end, args=(-z,), xtol=1e-13)
    return ConfidenceInterval(float(low), float(high))


# --- effect sizes --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, repr=False)
class EffectSizesResult(Result):
    """Effect sizes of model A versus model B on the same items (see :func:`effect_sizes`)."""

    n: int
    mean_a: float
    mean_b: float
    risk_difference: float
    relative_risk: float
    odds_ratio: float
    conditional_odds_ratio: float
    cohens_h: float
    cohens_dz: float
    phi: float
    se_paired: float
    se_unpaired: float
    se_ratio: float

    _repr_fields = ("n", "risk_difference", "cohens_h", "cohens_dz", "phi", "se_ratio")


def effect_sizes(a: Any, b: Any) -> EffectSizesResult:
    r"""Effect sizes for model A versus model B on the same items.

    Parameters
    ----------
    a, b : array_like
        Aligned per-item scores (0/1 correctness or graded).

    Returns
    -------
    EffectSizesResult
        - ``risk_difference`` = mean(a) - mean(b) (the accuracy gap);
        - ``relative_risk`` = p_A / p_B and ``odds_ratio`` = [p_A/(1-p_A)] / [p_B/(1-p_B)] of the
          marginal accuracies (0/1 data only, else NaN). The odds ratio approximates the
          relative risk only when accuracies are small; at LLM accuracies of 60-90% they differ a
          lot -- report the difference or the ratio you mean, not the OR as a "times better";
        - ``conditional_odds_ratio`` = b / c, the paired (McNemar) odds ratio;
        - ``cohens_h`` = 2 asin sqrt(p_A) - 2 asin sqrt(p_B) (0/1 data);
        - ``cohens_dz`` = mean(D) / sd(D), D = a - b (ddof = 1), the paired standardised effect;
        - ``phi``: the Pearson correlation of a and b (phi for 0/1 data); NaN if either is constant;
        - ``se_paired`` = sd(D)/sqrt(n) and ``se_unpaired`` = sqrt(var(a)/n + var(b)/n) with plug-in
          (ddof = 0) variances, and ``se_ratio`` = se_paired / se_unpaired. With equal variances
          the ratio is sqrt(1 - phi): the share of the unpaired standard error that pairing keeps.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import effect_sizes
    >>> a = np.r_[np.ones(150), np.zeros(50)]
    >>> b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    >>> es = effect_sizes(a, b)
    >>> round(es.risk_difference, 3), round(es.phi, 2), round(es.se_ratio, 2)
    (0.04, 0.88, 0.35)
    """
    a_arr, b_arr = check_paired(a, b)
    n = a_arr.size
    d = a_arr - b_arr
    mean_a, mean_b = float(a_arr.mean()), float(b_arr.mean())
    rd = mean_a - mean_b
    nan = math.nan
    rr = orr = cor = h = nan
    if is_binary(a_arr, b_arr):
        _, n10, n01, _ = paired_counts(a_arr, b_arr)
        with np.errstate(divide="ignore", invalid="ignore"):
            rr = float(np.float64(mean_a) / mean_b)
            orr = float(np.float64(mean_a * (1 - mean_b)) / (mean_b * (1 - mean_a)))
            cor = float(np.float64(n10) / n01)
        h = 2 * math.asin(math.sqrt(mean_a)) - 2 * math.asin(math.sqrt(mean_b))
    sd_d = float(d.std(ddof=1))
    dz = rd / sd_d if sd_d > 0 else (nan if rd == 0 else math.copysign(math.inf, rd))
    va, vb = float(a_arr.var()), float(b_arr.var())
    phi = float(np.mean((a_arr - mean_a) * (b_arr - mean_b)) / math.sqrt(va * vb)) if va > 0 and vb > 0 else nan
    se_p = math.sqrt(float(d.var()) / n)
    se_u = math.sqrt(va / n + vb / n)
    ratio = se_p / se_u if se_u > 0 else nan
    return EffectSizesResult(n=n, mean_a=mean_a, mean_b=mean_b, risk_difference=rd, relative_risk=rr,
                       odds_ratio=orr, conditional_odds_ratio=cor, cohens_h=h, cohens_dz=dz, phi=phi,
                       se_paired=se_p, se_unpaired=se_u, se_ratio=ratio)
