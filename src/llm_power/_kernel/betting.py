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

#: values added at once by :meth:`BettingSequence.extend` (rows x candidates still inside)
BLOCK_ROWS = 128

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
    intersection). ``alpha_lower`` / ``alpha_upper``: the level of each side. ``null``: a mean (in
    the values' units) whose capitals are also tracked exactly, for the e-value and the first
    rejection of "the mean is ``null``" (:meth:`null_e_value`). ``track_all``: keep every
    candidate's current capital (else only those still inside the sequence move), for
    :meth:`bounds_at`.

    ``population``: the values are drawn without replacement from a finite population of this
    many (the items of a benchmark, run in a random order), and the sequence is that of the
    population's mean (Waudby-Smith & Ramdas 2020): the candidate ``m`` is bet against the mean of
    the values not yet drawn, :math:`m_i = (N m - S_{i-1}) / (N - i + 1)` (``S`` the sum so far),
    which makes each capital a test martingale again; a candidate whose remaining values would
    have to average outside the range is rejected outright. At ``N`` values the sequence is the
    population's mean itself.

    The bounds are conservative to the grid's spacing: the lower bound is just above the largest
    rejected grid point, the upper just below the smallest rejected one above the mean (the range
    ends when none), so a rejected candidate -- the null of a test -- is never inside.

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
    null: float | None = None
    track_all: bool = False
    population: int | None = None

    def __post_init__(self) -> None:
        self.m = np.linspace(0.0, 1.0, self.grid)
        self.log_up = np.zeros(self.grid)
        self.log_down = np.zeros(self.grid)
        self.rej_up = np.zeros(self.grid, dtype=bool)
        self.rej_down = np.zeros(self.grid, dtype=bool)
        # the number of values seen when each candidate left the sequence (by either side; 0: inside).
        # It does not depend on how the values were batched, as it is fixed at the first rejection
        self.rej_at = np.zeros(self.grid, dtype=np.int64)
        if self.null is not None:
            pos = (self.null - self.low) / (self.high - self.low) * (self.grid - 1)
            if abs(pos - round(pos)) > 1e-9:
                msg = f"the null {self.null!r} must be a candidate of the grid ({self.grid} points over the range)"
                raise ValueError(msg)
        self.n, self.total, self.mu, self.sig2 = 0, 0.0, 0.5, 0.25
        self.null_log_up = self.null_log_down = 0.0
        self.null_rejected: str | None = None  # "above" / "below": the side that first rejected the null

    def update(self, value: float) -> None:
        """Add one value (must lie in [low, high])."""
        self.extend(np.array([value], dtype=float))

    def extend(self, values: np.ndarray) -> int | None:
        """Add values in order (each in [low, high]; vectorised: the same capitals, bets, sequence
        and bounds as one :meth:`update` per value). With ``null`` set, returns the number of values
        seen when the null mean was first rejected by either side within these values (else None).
        """
        v = np.asarray(values, dtype=float).reshape(-1)
        if v.size == 0:
            return None
        if self.population is not None and self.n + v.size > self.population:
            msg = (f"{self.n + v.size} values drawn without replacement from a population of "
                   f"{self.population}: more than it holds")
            raise ValueError(msg)
        bad = ~((v >= self.low) & (v <= self.high))
        if bad.any():
            value = float(v[np.argmax(bad)])
            msg = f"value {value!r} is outside the sequence's range [{self.low:g}, {self.high:g}]"
            raise ValueError(msg)
        y = (v - self.low) / (self.high - self.low)
        k, n0 = y.size, self.n
        idx = n0 + np.arange(1, k + 1, dtype=float)
        mu = (0.5 + self.total + np.cumsum(y)) / (idx + 1.0)
        prev_mu = np.r_[self.mu, mu[:-1]]
        # sig2_i (i + 1) = sig2_{i-1} i + (y_i - mu_{i-1})^2: the running regularised variance
        sig2 = (self.sig2 * (n0 + 1) + np.cumsum((y - prev_mu) ** 2)) / (idx + 1.0)
        prev_sig2 = np.r_[self.sig2, sig2[:-1]]
        h = max(self.horizon, 1)
        lam_up = np.minimum(MAX_BET, np.sqrt(2.0 * math.log(1.0 / self.alpha_lower) / (prev_sig2 * h)))
        lam_dn = np.minimum(MAX_BET, np.sqrt(2.0 * math.log(1.0 / self.alpha_upper) / (prev_sig2 * h)))
        t_up, t_dn = math.log(1.0 / self.alpha_lower), math.log(1.0 / self.alpha_upper)
        y0 = None if self.null is None else (self.null - self.low) / (self.high - self.low)
        first: int | None = None
        # S_{i-1} of every row, once (not per block of rows: that was quadratic in the values added)
        drawn = self.total + np.r_[0.0, np.cumsum(y)[:-1]]
        for start in range(0, k, BLOCK_ROWS):
            sl = slice(start, start + BLOCK_ROWS)
            # only the candidates still inside the sequence move: the rejected ones are the two ends
            # of the grid (the capitals are monotone in m) and stay rejected, so the work shrinks
            # with the sequence's width
            inside = (self.rej_at == 0) | self.track_all
            if inside.any():
                a, b = int(np.argmax(inside)), self.grid - int(np.argmax(inside[::-1]))
                delta, low_out, high_out = self._deltas(y, sl, self.m[a:b], n0, start, drawn)
                up = self.log_up[a:b] + np.cumsum(np.log1p(lam_up[sl, None] * delta), axis=0)
                dn = self.log_down[a:b] + np.cumsum(np.log1p(-lam_dn[sl, None] * delta), axis=0)
                if low_out is not None and high_out is not None:  # impossible candidates: rejected for good
                    up[low_out] = np.inf
                    dn[high_out] = np.inf
                hit_up, hit_dn = up >= t_up, dn >= t_dn
                self.rej_up[a:b] |= hit_up.any(axis=0)
                self.rej_down[a:b] |= hit_dn.any(axis=0)
                out = hit_up | hit_dn
                new = out.any(axis=0) & (self.rej_at[a:b] == 0)
                self.rej_at[a:b][new] = n0 + start + np.argmax(out, axis=0)[new] + 1
                self.log_up[a:b], self.log_down[a:b] = up[-1], dn[-1]
            if y0 is not None:  # the same sums as a grid point at the null, added in the same order
                d0, lo0, hi0 = self._deltas(y, sl, np.array([y0]), n0, start, drawn)
                up0 = self.null_log_up + np.cumsum(np.log1p(lam_up[sl] * d0[:, 0]))
                dn0 = self.null_log_down + np.cumsum(np.log1p(-lam_dn[sl] * d0[:, 0]))
                if lo0 is not None and hi0 is not None:
                    up0[lo0[:, 0]] = np.inf
                    dn0[hi0[:, 0]] = np.inf
                self.null_log_up, self.null_log_down = float(up0[-1]), float(dn0[-1])
                hit = np.flatnonzero((up0 >= t_up) | (dn0 >= t_dn))
                if hit.size and first is None:
                    i = int(hit[0])
                    first = n0 + start + i + 1
                    if self.null_rejected is None:
                        self.null_rejected = "above" if up0[i] >= t_up else "below"
        self.n += k
        self.total += float(y.sum())
        self.mu, self.sig2 = float(mu[-1]), float(sig2[-1])
        return first

    def _deltas(self, y: np.ndarray, sl: slice, m: np.ndarray, n0: int,  # noqa: PLR0913, PLR0917
                start: int, drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """y_i - m_i for the rows ``sl`` and candidates ``m`` (m_i = m with replacement; the mean of
        the values not yet drawn without), and the masks of candidates already impossible (their
        remaining values would average below 0 / above 1; once impossible, always: None with
        replacement).
        """
        rows = y[sl]
        if self.population is None:
            return rows[:, None] - m, None, None
        big_n = float(self.population)
        before = drawn[sl]  # S_{i-1}
        left = big_n - (n0 + start + np.arange(rows.size, dtype=float))  # N - i + 1
        m_i = (big_n * m[None, :] - before[:, None]) / left[:, None]
        low_out = np.logical_or.accumulate(m_i < -1e-12, axis=0)
        high_out = np.logical_or.accumulate(m_i > 1.0 + 1e-12, axis=0)
        return np.clip(rows[:, None] - m_i, -1.0, 1.0), low_out, high_out

    def null_e_value(self) -> float:
        """The two-sided e-value of "the mean is ``null``" now: half the larger of the two capitals
        at the null. Each capital is a test martingale under the null, so their average is one, and
        half the larger is at most the average: read at any stopping time it is an e-value (the
        input of e-BH), and it reaches 1/alpha exactly when a side's capital reaches 2/alpha -- when
        the sequence at level alpha (each side alpha/2) leaves out the null. 1 before any value.
        """
        if self.null is None:
            msg = "this sequence tracks no null mean (create it with null=...)"
            raise ValueError(msg)
        return 0.5 * math.exp(min(max(self.null_log_up, self.null_log_down), 700.0))

    def bounds_at(self, alpha: float) -> tuple[float, float]:
        """The sequence at level ``alpha`` (each side alpha/2) from the current capitals -- not the
        running intersection: the e-value interval {m : half the larger capital at m < 1/alpha},
        valid at any stopping time, at any level (the e-BY intervals of a selection; Xu, Wang &
        Ramdas 2022). Needs ``track_all=True`` (every candidate's capital kept current).
        """
        if not self.track_all:
            msg = "bounds_at needs every candidate's current capital: create the sequence with track_all=True"
            raise ValueError(msg)
        t = math.log(2.0 / alpha)
        up = np.nonzero(self.log_up >= t)[0]
        dn = np.nonzero(self.log_down >= t)[0]
        scale = self.high - self.low
        lo = math.nextafter(self.low + scale * float(self.m[up.max()]), math.inf) if up.size else self.low
        hi = math.nextafter(self.low + scale * float(self.m[dn.min()]), -math.inf) if dn.size else self.high
        return lo, hi

    def bounds(self) -> tuple[float, float]:
        """(lower, upper) bound of the mean in the values' units: just inside the rejected
        candidates on either side of those still in the sequence (the range's ends when none).

        When no candidate is left -- the values are not those of one mean (a drift; for a fixed
        mean this happens with probability at most alpha) -- the interval spans the candidates
        rejected last (a superset of the empty sequence, so still valid), moved off the null when
        the null is among them and was rejected (the verdict stands).
        """
        scale = self.high - self.low
        inside = np.flatnonzero(self.rej_at == 0)
        if inside.size:
            a, b = int(inside[0]), int(inside[-1])
            lo = math.nextafter(self.low + scale * float(self.m[a - 1]), math.inf) if a > 0 else self.low
            hi = math.nextafter(self.low + scale * float(self.m[b + 1]), -math.inf) if b < self.grid - 1 else self.high
            return lo, hi
        last = np.flatnonzero(self.rej_at == self.rej_at.max())
        lo, hi = (self.low + scale * float(self.m[i]) for i in (last[0], last[-1]))
        if self.null is not None and self.null_rejected is not None and lo <= self.null <= hi:
            if self.null_rejected == "above":
                lo = max(lo, math.nextafter(self.null, math.inf))
                hi = max(hi, lo)
            else:
                hi = min(hi, math.nextafter(self.null, -math.inf))
                lo = min(lo, hi)
        return lo, hi
