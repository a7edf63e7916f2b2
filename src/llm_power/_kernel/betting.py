r"""Betting confidence sequences for the mean of bounded values (Waudby-Smith & Ramdas 2024).

Values ``x_i`` in a known range ``[low, high]`` are rescaled to ``y_i in [0, 1]``. For a candidate
mean ``m`` two capital processes bet on the next value being above or below it,

.. math:: K^+_t(m) = \prod_{i \le t} (1 + \lambda_i (y_i - m)), \qquad
          K^-_t(m) = \prod_{i \le t} (1 - \lambda_i (y_i - m)),

with predictable bets :math:`\lambda_i = \min(c,\ \sqrt{2\log(1/\alpha) / (\hat\sigma^2_{i-1} h)})`
(the predictable plug-in of WSR 2024, §3, tuned for ``h`` = ``horizon`` values; :math:`\hat\sigma^2`
the regularised running variance, ``c = 1/2``). Under :math:`E[y_i \mid \text{past}] \le m`
:math:`K^+(m)` is a nonnegative supermartingale, so by Ville's inequality
:math:`P(\exists t: K^+_t(m) \ge 1/\alpha) \le \alpha` -- at any number of looks, with no variance
estimate plugged into the boundary (zero observed variance gives a wide sequence, never a
zero-width one). Because the bets do not depend on ``m``, :math:`K^+_t(m)` decreases in ``m``, so

- the lower confidence bound at time t is the largest ``m`` with :math:`K^+_t(m) \ge 1/\alpha`, found
  by bisection, and
- the anytime-valid p-value of :math:`H_0: \text{mean} \le m_0` at time t is :math:`\min(1, 1/K^+_t(m_0))`;

the two agree exactly: the bound clears :math:`m_0` iff that p-value is at most alpha. Both are
valid at any stopping time t (the look at which they are read). ``running=True`` takes the running
maximum of the capital instead (the running intersection of the sequence: never looser, but it
depends on the items' order, and a file sorted by category makes it report a bias of the order as
evidence); the batch gate reads the capital at its own look, which depends on the order only
through the bets. Since :math:`K^+ K^- = \prod (1 - \lambda_i^2 (y_i - m)^2) \le 1`, the lower bound
never passes the upper one.

References
----------
.. [1] Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
   betting. Journal of the Royal Statistical Society B 86, 1-27.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["BettingSequence", "bets", "betting_bound", "betting_pvalue"]

#: the largest bet (capital factors stay >= 1 - c > 0 for every value and candidate mean)
MAX_BET = 0.5


def bets(y: np.ndarray, alpha: float, horizon: int) -> np.ndarray:
    """The predictable bets lambda_i for values ``y`` in [0, 1] (each uses only the values before it)."""
    n = y.size
    idx = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(y)) / (idx + 1.0)  # mu_i after i values
    prev_mu = np.r_[0.5, mu[:-1]]
    sig2 = (0.25 + np.cumsum((y - prev_mu) ** 2)) / (idx + 1.0)  # sigma^2_i after i values
    prev_sig2 = np.r_[0.25, sig2[:-1]]
    lam = np.sqrt(2.0 * math.log(1.0 / alpha) / (prev_sig2 * max(int(horizon), 1)))
    return np.asarray(np.minimum(lam, MAX_BET), dtype=float)


def _log_capital(y: np.ndarray, lam: np.ndarray, m: float, sign: float, running: bool) -> float:
    """Log K^sign_t(m) at the last value, or its running maximum (0 before any value)."""
    if y.size == 0:
        return 0.0
    path = np.cumsum(np.log1p(sign * lam * (y - m)))
    return float(max(0.0, np.max(path))) if running else float(path[-1])


def betting_pvalue(y: np.ndarray, lam: np.ndarray, m0: float, side: str, *, running: bool = False) -> float:
    """Anytime-valid p-value of H0: mean <= m0 (``side="greater"``) or >= m0 (``"less"``)."""
    log_k = _log_capital(y, lam, m0, 1.0 if side == "greater" else -1.0, running)
    return float(min(1.0, math.exp(-log_k)))


def betting_bound(y: np.ndarray, lam: np.ndarray, alpha: float, side: str, *, running: bool = False,
                  tol: float = 1e-10) -> float:
    """The one-sided bound at level ``alpha`` in [0, 1]: the lower bound (``side="lower"``) is the
    largest m that the upward bets reject (0 when none), the upper one mirrored.
    """
    sign = 1.0 if side == "lower" else -1.0
    target = math.log(1.0 / alpha)

    def rejected(m: float) -> bool:
        return _log_capital(y, lam, m, sign, running) >= target

    lo, hi = (0.0, 1.0)
    if side == "lower":
        if not rejected(0.0):
            return 0.0
        while hi - lo > tol:  # rejected(lo) holds, rejected(hi) does not (or hi = 1)
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
        return lo
    if not rejected(1.0):
        return 1.0
    while hi - lo > tol:  # rejected(hi) holds
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if rejected(mid) else (mid, hi)
    return hi


@dataclass
class BettingSequence:
    """A betting confidence sequence updated one value at a time, on a grid of candidate means
    (``grid`` points over [low, high]; once a candidate is rejected it stays rejected: the running
    intersection). ``alpha_lower`` / ``alpha_upper``: the level of each side.

    The bounds are conservative to the grid's spacing: the lower bound is the largest rejected grid
    point, the upper the smallest rejected one above the mean (the range ends when none).

    Examples
    --------
    >>> from llm_power._kernel.betting import BettingSequence
    >>> seq = BettingSequence(0.0, 1.0, alpha_lower=0.025, alpha_upper=0.025, horizon=400)
    >>> for k in range(400):
    ...     seq.update(float(k % 10 < 7))
    >>> low, high = seq.bounds()
    >>> 0.6 < low < 0.7 < high < 0.8
    True
    """

    low: float
    high: float
    alpha_lower: float
    alpha_upper: float
    horizon: int
    grid: int = 2001

    def __post_init__(self) -> None:
        self.m = np.linspace(0.0, 1.0, self.grid)
        self.log_up = np.zeros(self.grid)
        self.log_down = np.zeros(self.grid)
        self.rej_up = np.zeros(self.grid, dtype=bool)
        self.rej_down = np.zeros(self.grid, dtype=bool)
        self.n, self.total, self.mu, self.sig2 = 0, 0.0, 0.5, 0.25

    def update(self, value: float) -> None:
        """Add one value (must lie in [low, high])."""
        if not self.low <= value <= self.high:
            msg = f"value {value!r} is outside the sequence's range [{self.low:g}, {self.high:g}]"
            raise ValueError(msg)
        y = (value - self.low) / (self.high - self.low)
        lam_up = min(MAX_BET, math.sqrt(2.0 * math.log(1.0 / self.alpha_lower) / (self.sig2 * max(self.horizon, 1))))
        lam_dn = min(MAX_BET, math.sqrt(2.0 * math.log(1.0 / self.alpha_upper) / (self.sig2 * max(self.horizon, 1))))
        self.log_up += np.log1p(lam_up * (y - self.m))
        self.log_down += np.log1p(-lam_dn * (y - self.m))
        self.rej_up |= self.log_up >= math.log(1.0 / self.alpha_lower)
        self.rej_down |= self.log_down >= math.log(1.0 / self.alpha_upper)
        self.n += 1
        self.total += y
        self.sig2 = (self.sig2 * self.n + (y - self.mu) ** 2) / (self.n + 1)
        self.mu = (0.5 + self.total) / (self.n + 1)

    def bounds(self) -> tuple[float, float]:
        """(lower, upper) bound of the mean in the values' units."""
        up = np.nonzero(self.rej_up)[0]
        dn = np.nonzero(self.rej_down)[0]
        lo = float(self.m[up.max()]) if up.size else 0.0
        hi = float(self.m[dn.min()]) if dn.size else 1.0
        scale = self.high - self.low
        return self.low + scale * lo, self.low + scale * hi
