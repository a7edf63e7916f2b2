r"""What aggregate scores alone can say: lm-eval ``results_*.json`` without per-item samples.

An aggregate gives a task's score, its standard error and its number of items. That settles one
model's interval (Wilson for a mean of 0/1 scores) and the gap it could detect, but not a paired
comparison of two models: the paired test depends on how often the two models disagree, which
the margins leave open. Between the Fréchet bounds of the joint 2×2 table — the discordance
:math:`\pi_d` ranges over :math:`[|p_A - p_B|,\ \min(p_A + p_B,\ 2 - p_A - p_B)]` — McNemar's
test's p-value and N* take every value in a range; :func:`paired_bounds` reports it. Only per-item
samples (``--log_samples``) settle where in the range the truth is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._core.results import Result
from .._core.validation import check_open_unit
from .._kernel.binomial import wilson_bounds
from .._kernel.quantiles import k_constant, level_quantile, normal_pvalue
from ..intervals import proportion_ci

__all__ = ["PairedBoundsResult", "aggregate_interval", "paired_bounds"]


@dataclass(frozen=True)
class PairedBoundsResult(Result):
    """The range of a paired comparison over the discordance the margins allow.

    ``discordance_low/high``: the Fréchet range of P(models disagree); ``pvalue_low/high``: the
    two-sided McNemar p-value at the least / most discordance (the smallest p comes with the
    least disagreement: McNemar's test looks only at the items the models disagree on);
    ``n_star_low/high``: items needed at (alpha, power) likewise; ``verdict``: "significant"
    (under every admissible joint table), "not significant" (under none) or "undetermined"
    (per-item samples needed).
    """

    p_a: float
    p_b: float
    n: int
    discordance_low: float
    discordance_high: float
    pvalue_low: float
    pvalue_high: float
    n_star_low: float
    n_star_high: float
    alpha: float
    verdict: str

    _repr_fields: ClassVar[tuple[str, ...]] = ("p_a", "p_b", "n", "pvalue_low", "pvalue_high", "verdict")


def paired_bounds(p_a: float, p_b: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> PairedBoundsResult:
    r"""The paired test of two accuracies on the same ``n`` items, over every joint table their
    margins allow.

    The test is McNemar's (continuity-corrected, as ``compare`` and ``diagnose`` use it for 0/1
    scores) on the expected discordant counts :math:`n(\pi_d \pm \delta)/2`:
    :math:`z = (n|\delta| - 1)/\sqrt{n \pi_d}`; :math:`N^* = K(\pi_d - \delta^2)/\delta^2` with
    :math:`K = (z_{1-\alpha/2} + z_{power})^2`, the plug-in N* of the resolution report.

    Examples
    --------
    >>> from llm_power.planning import paired_bounds
    >>> r = paired_bounds(0.62, 0.60, 1000)
    >>> r.verdict, round(r.pvalue_low, 4), round(r.pvalue_high, 3)
    ('undetermined', 0.0, 0.496)
    """
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    for value, name in ((p_a, "p_a"), (p_b, "p_b")):
        if not 0.0 <= value <= 1.0:
            msg = f"`{name}` must be an accuracy in [0, 1]; got {value!r}."
            raise ValueError(msg)
    if int(n) < 1:
        msg = f"`n` must be a positive number of items; got {n!r}."
        raise ValueError(msg)
    delta = p_a - p_b
    lo, hi = abs(delta), min(p_a + p_b, 2.0 - p_a - p_b)
    k = float(k_constant(alpha, power))

    def pvalue(pi: float) -> float:
        if pi <= 0:
            return 1.0
        return float(normal_pvalue(max(n * abs(delta) - 1.0, 0.0) / math.sqrt(n * pi)))

    def n_star(pi: float) -> float:
        return math.inf if delta == 0 else k * max(pi - delta * delta, 0.0) / (delta * delta)

    p_low, p_high = pvalue(lo), pvalue(hi)
    verdict = "significant" if p_high <= alpha else ("not significant" if p_low > alpha else "undetermined")
    return PairedBoundsResult(p_a=p_a, p_b=p_b, n=int(n), discordance_low=lo, discordance_high=hi, pvalue_low=p_low,
                              pvalue_high=p_high, n_star_low=n_star(lo), n_star_high=n_star(hi), alpha=alpha,
                              verdict=verdict)


def aggregate_interval(value: float, n: int, stderr: float | None, level: float) -> tuple[float, float, str]:
    """Wilson for a mean of 0/1 scores (value x n a whole number), else value +- z stderr; without a
    standard error, a mean in [0, 1] gets the Wilson score interval at p = value (``"wilson bound"``):
    a score in [0, 1] with mean p varies by at most p (1 - p) (Bhatia & Davis 2000), the variance the
    Wilson interval inverts, so it is conservative for any such scores (averaged repeats, a score
    rounded by whoever published it).
    """
    k = value * n
    if 0.0 <= value <= 1.0 and abs(k - round(k)) < 1e-6 * max(n, 1):
        ci = proportion_ci(round(k), n, confidence_level=level)
        return float(ci.low), float(ci.high), "wilson"
    if stderr is None:
        if 0.0 <= value <= 1.0 and n >= 1:
            low, high = wilson_bounds(np.array([k]), np.array([float(n)]), level)
            return float(low[0]), float(high[0]), "wilson bound"
        return math.nan, math.nan, "none"
    z = float(level_quantile(level))
    return value - z * stderr, value + z * stderr, "normal"
