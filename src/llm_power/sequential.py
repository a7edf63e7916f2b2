"""Anytime-valid testing for continuously updated leaderboards.

A leaderboard that re-tests "is A better than B?" every time new items arrive, and stops when
the answer looks significant, inflates the type-I error far beyond alpha. Time-uniform tests
fix that: an e-process E_t (a nonnegative supermartingale under H0 with E_0 = 1) satisfies
P(exists t: E_t >= 1/alpha) <= alpha by Ville's inequality, so one may look after every item and
stop whenever E_t >= 1/alpha.

Two constructions, both mixtures of likelihood ratios (Robbins 1970):

- **0/1 correctness** (:func:`beta_mixture_log_evalue`): under H0 (equal accuracy) each
  discordant item favours A with probability 1/2 whatever happened before. Mixing the
  likelihood ratio of theta (the share of discordant items A wins) over a Beta(a, a) prior gives

      E = 2^m B(a + b, a + c) / B(a, a)        (m = b + c discordant items so far),

  an exact martingale under H0.
- **bounded scores** (:func:`normal_mixture_boundary`): the per-item differences D_i lie in an
  interval of length 2w, so under H0 (mean 0) they are sub-Gaussian with variance proxy
  sigma^2 = w^2 (Hoeffding's lemma). Mixing exp(lambda S_t - lambda^2 v_t / 2) over
  lambda ~ N(0, 1/rho), with S_t = sum D_i and v_t = t sigma^2, gives
  E_t = sqrt(rho / (v_t + rho)) exp(S_t^2 / (2 (v_t + rho))) and the two-sided boundary

      |S_t| >= u(v_t) = sqrt((v_t + rho) log((v_t + rho) / (rho alpha^2)))

  (Howard, Ramdas, McAuliffe & Sekhon 2021, the normal-mixture boundary), which also gives a
  confidence sequence for the mean difference: delta_hat_t +- u(v_t) / t.

The monitors use by default a third, tighter construction: **betting** (Waudby-Smith & Ramdas
2024; :mod:`llm_power._kernel.betting`). Two capital processes bet on the next difference being
above or below a candidate mean, with predictable bets that adapt to the variance seen so far; the
candidates whose capital has reached 2/alpha form the complement of the confidence sequence (its
running intersection), and half the larger of the two capitals at 0 -- at most their average, a
test martingale under "equally good" -- is the pair's e-process: at any stopping time an
e-value, the input of e-BH over a leaderboard's pairs (:func:`llm_power.e_bh`).

For the resolution ratio, the fixed-n critical value z_{1-alpha/2} is replaced by the boundary in
z units, u(v)/sqrt(v), with rho chosen so that the boundary is tightest at the benchmark's own
size (rho = r* v, :func:`anytime_critical_value`): 3.04 instead of 1.96 at alpha = 0.05.

References
----------
.. [1] Robbins, H. (1970). Statistical methods related to the law of the iterated logarithm.
   Annals of Mathematical Statistics 41, 1397-1409.
.. [2] Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021). Time-uniform,
   nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49, 1055-1080.
.. [3] Ramdas, A., Grunwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and
   safe anytime-valid inference. Statistical Science 38, 576-601.
.. [4] Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
   betting. JRSS B 86, 1-27.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import special

from ._core.files import MB, check_size
from ._core.params import public
from ._core.results import ConfidenceInterval, Result, stored_interval
from ._core.validation import as_float_array, check_open_unit, fail
from ._kernel.betting_pairs import BettingPairs, agree_intervals, bytes_per_pair, pymax, pymin

__all__ = [
    "LeaderboardMonitor",
    "LeaderboardMonitorResult",
    "MonitorResult",
    "SequentialMonitor",
    "anytime_critical_value",
    "beta_mixture_log_evalue",
    "normal_mixture_boundary",
    "normal_mixture_log_evalue",
]

#: how a SequentialMonitor builds its e-process and confidence sequence
MONITOR_METHODS = ("mixture", "betting")


def normal_mixture_boundary(v: Any, *, alpha: float = 0.05, rho: float) -> Any:
    r"""Two-sided normal-mixture boundary :math:`u(v) = \sqrt{(v+\rho)\log((v+\rho)/(\rho\alpha^2))}`.

    ``v`` is the intrinsic time (variance proxy accumulated so far), ``rho`` > 0 the precision of
    the mixing distribution. P(exists t: |S_t| >= u(v_t)) <= alpha under H0.

    Examples
    --------
    >>> from llm_power.sequential import normal_mixture_boundary
    >>> round(float(normal_mixture_boundary(100.0, rho=100.0)), 2)
    36.57
    """
    alpha = check_open_unit(alpha, "alpha")
    if not rho > 0:
        msg = "rho"
        raise fail(msg, "positive", rho)
    v = np.asarray(v, dtype=float)
    out = np.sqrt((v + rho) * np.log((v + rho) / (rho * alpha * alpha)))
    return float(out) if out.ndim == 0 else out


def normal_mixture_log_evalue(s: Any, v: Any, *, rho: float) -> Any:
    """Log E_t of the normal-mixture e-process for sum S_t and intrinsic time v_t."""
    s = np.asarray(s, dtype=float)
    v = np.asarray(v, dtype=float)
    out = 0.5 * np.log(rho / (v + rho)) + s * s / (2.0 * (v + rho))
    return float(out) if out.ndim == 0 else out


def beta_mixture_log_evalue(b: Any, c: Any, *, a: float = 0.5) -> Any:
    r"""Log E of the Beta(a, a)-mixture likelihood ratio on the discordant items.

    :math:`\log E = m\log 2 + \log B(a + b, a + c) - \log B(a, a)`, m = b + c. An exact
    martingale under H0 (equal accuracy), so P(sup E >= 1/alpha) <= alpha.

    Examples
    --------
    30 discordant items, 22 won by A:

    >>> import math
    >>> from llm_power.sequential import beta_mixture_log_evalue
    >>> round(math.exp(beta_mixture_log_evalue(22, 8, a=5.0)), 2)
    6.41
    """
    if not np.all(np.asarray(a) > 0):
        msg = "a"
        raise fail(msg, "positive", a)
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    out = (b + c) * math.log(2.0) + special.betaln(a + b, a + c) - special.betaln(a, a)
    return float(out) if out.ndim == 0 else out


@lru_cache(maxsize=64)
@public
def anytime_critical_value(alpha: float = 0.05) -> tuple[float, float]:
    r"""The normal-mixture boundary in z units at the time it is tuned for, and the tuning.

    With :math:`\rho = r v`, :math:`u(v)/\sqrt v = \sqrt{(1+r)\log((1+r)/(r\alpha^2))}`, which
    depends on r only; it is minimised over r. Returns ``(z, r)``: the anytime-valid critical
    value that replaces :math:`z_{1-\alpha/2}` in N*, and the ratio r = rho / v.

    Examples
    --------
    >>> from llm_power.sequential import anytime_critical_value
    >>> z, r = anytime_critical_value(0.05)
    >>> round(z, 3), round(r, 3)
    (3.035, 0.122)
    """
    from ._kernel.quantiles import mixture_tuning

    return mixture_tuning(check_open_unit(alpha, "alpha"))


@dataclass(frozen=True, slots=True, repr=False)
class MonitorResult(Result):
    """The current anytime-valid verdict of a :class:`SequentialMonitor`.

    Attributes
    ----------
    n : int
        Items seen.
    delta : float
        Mean difference A - B so far.
    e_value : float
        Current value of the e-process (evidence against "A and B are equally good"). The verdict
        is sticky and this is the current value: after a decision it may fall back below the
        threshold (an e-value is read at the look it is taken, the decision at the first look it
        crossed).
    threshold : float
        1 / alpha.
    verdict : str
        ``"A better"``, ``"B better"`` (once E has reached 1/alpha; sticky) or ``"undecided"``.
    decided_at : int or None
        The number of items at which E first reached 1/alpha.
    confidence_sequence : tuple
        Time-uniform (1 - alpha) confidence interval for the mean difference at this n.
    b, c : int or None
        Discordant counts (0/1 data).
    """

    n: int
    delta: float
    e_value: float
    threshold: float
    verdict: str
    decided_at: int | None
    confidence_sequence: ConfidenceInterval
    b: int | None
    c: int | None

    _repr_fields = ("n", "delta", "e_value", "verdict", "decided_at")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The confidence-sequence interval at the current n (valid at any stopping time), at the
        monitor's 1 - alpha (``confidence_level``: None).
        """
        return stored_interval(*self.confidence_sequence, None, confidence_level,
                               recompute="monitor with SequentialMonitor(alpha=1 - confidence_level)")


class SequentialMonitor:
    r"""Streaming, anytime-valid comparison of two models as per-item results arrive.

    Parameters
    ----------
    alpha : float, default 0.05
        Time-uniform type-I error: the chance that the monitor ever declares a winner when the
        models are equally good, however often it is looked at.
    binary : bool, optional
        0/1 correctness (differences in [-1, 1]; with ``method="mixture"`` the Beta-mixture
        e-process on discordant items) or bounded scores (differences within the score range's
        width). By default decided from the first batch and then enforced.
    score_range : (float, float), default (0, 1)
        Bounds of graded scores (checked on every update): the differences' range.
    tuned_for : int, default 1000
        Number of items at which the test is tuned to be most sensitive (the bets' horizon, or the
        mixing prior's spread); validity does not depend on it.
    expected_discordance : float, default 0.25
        ``method="mixture"``, 0/1 data: the anticipated share of items the two models disagree
        on, used with ``tuned_for`` to fix the Beta(a, a) prior in advance (a = (r* m0 - 1)/2 with
        m0 = tuned_for x expected_discordance). Fixed before any data is seen, as validity
        requires.
    method : {"betting", "mixture"}, default "betting"
        ``"betting"``: the betting confidence sequence of the per-item differences (Waudby-Smith
        & Ramdas 2024; :mod:`llm_power._kernel.betting`): the bets adapt to the variance seen so
        far, so the sequence is 2.5-6 times narrower than the mixture's at 1,000 items and decides
        a 4-point gap in a fraction of the items (docs/rankings.md, "Live leaderboards"); the
        verdict is the sequence excluding 0 (each side at alpha/2; sticky, as the sequence is the
        running intersection), the e-value half the larger of the two capitals at 0 (at most their
        average, a test martingale). ``"mixture"``:
        the Beta-mixture e-process on the discordant items (0/1) or the normal mixture with
        Hoeffding's variance proxy (graded), and the normal-mixture sequence.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import SequentialMonitor
    >>> rng = np.random.default_rng(0)
    >>> mon = SequentialMonitor(tuned_for=2000)
    >>> for _ in range(10):   # 10 batches of 200 items; A is truly 6 points better
    ...     a = (rng.random(200) < 0.76).astype(int)
    ...     b = np.where(rng.random(200) < 0.7, a, (rng.random(200) < 0.70).astype(int))
    ...     state = mon.update(a, b)
    >>> state.verdict, state.decided_at is not None
    ('A better', True)
    """

    @public
    def __init__(self, *, alpha: float = 0.05, binary: bool | None = None,
                 score_range: tuple[float, float] = (0.0, 1.0), tuned_for: int = 1000,
                 expected_discordance: float = 0.25, method: str = "betting") -> None:
        self.alpha = check_open_unit(alpha, "alpha")
        if method not in MONITOR_METHODS:
            msg = f"`method` must be one of {', '.join(map(repr, MONITOR_METHODS))}; got {method!r}."
            raise ValueError(msg)
        self.method = method
        self._seq: Any = None  # the betting sequence of the differences (method="betting")
        self._track_all = False  # keep every candidate's capital (a leaderboard's e-BY intervals)
        lo, hi = (float(x) for x in score_range)
        if not hi > lo:
            msg = f"`score_range` must be (low, high) with high > low; got {score_range!r}."
            raise ValueError(msg)
        self.score_range = (lo, hi)
        if isinstance(tuned_for, bool) or not isinstance(tuned_for, (int, np.integer)) or tuned_for < 1:
            msg = "tuned_for"
            raise fail(msg, "a positive integer (items)", tuned_for)
        self.tuned_for = int(tuned_for)
        self.expected_discordance = check_open_unit(expected_discordance, "expected_discordance")
        _, r = anytime_critical_value(self.alpha)
        # Beta(a, a) prior on the share of discordant items A wins: for +-1 increments the
        # normal-mixture precision is rho = 2a + 1; tuned at m0 expected discordant items.
        self.beta_a = max(0.5, (r * self.tuned_for * self.expected_discordance - 1.0) / 2.0)
        self.binary = binary
        self.n = 0
        self.sum_d = 0.0
        self.b = 0
        self.c = 0
        self.decided_at: int | None = None
        self._decision: str | None = None

    # -- internals ------------------------------------------------------------------------------
    def _variance_proxy(self) -> float:
        if self.binary:
            return 1.0  # D in {-1, 0, 1}: an interval of length 2
        lo, hi = self.score_range
        return (hi - lo) ** 2

    def _rho(self) -> float:
        _, r = anytime_critical_value(self.alpha)
        return r * self.tuned_for * self._variance_proxy()

    def _half_range(self) -> float:
        return 1.0 if self.binary else self.score_range[1] - self.score_range[0]

    def _betting(self) -> Any:
        from ._kernel.betting import BettingSequence

        if self._seq is None:
            w = self._half_range()
            self._seq = BettingSequence(-w, w, alpha_lower=self.alpha / 2, alpha_upper=self.alpha / 2,
                                        horizon=self.tuned_for, null=0.0, track_all=self._track_all,
                                        grid=501 if self._track_all else 2001)  # every capital kept: a coarser grid
        return self._seq

    def _log_e(self) -> float:
        if self.method == "betting":
            e = self._betting().null_e_value()  # 0.0 once both capitals are below e^-745: log -inf, not an error
            return math.log(e) if e > 0.0 else -math.inf
        if self.binary:
            return float(beta_mixture_log_evalue(self.b, self.c, a=self.beta_a)) if self.b + self.c else 0.0
        return float(normal_mixture_log_evalue(self.sum_d, self.n * self._variance_proxy(), rho=self._rho()))

    # -- public ---------------------------------------------------------------------------------
    def update(self, a: Any, b: Any) -> MonitorResult:
        """Add the per-item results of new items (aligned arrays) and return the current state."""
        x = as_float_array(a, "a").reshape(-1)
        y = as_float_array(b, "b").reshape(-1)
        if x.size != y.size:
            msg = f"`a` and `b` must have the same number of new items; got {x.size} and {y.size}."
            raise ValueError(msg)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            msg = "new scores must be finite (no NaN or inf)."
            raise ValueError(msg)
        batch_binary = bool(np.all((x == 0) | (x == 1)) and np.all((y == 0) | (y == 1)))
        if self.binary is None:
            self.binary = batch_binary
        elif self.binary and not batch_binary:
            msg = "this monitor is for 0/1 correctness; got a graded score. Create it with binary=False."
            raise ValueError(msg)
        lo, hi = self.score_range
        if not self.binary and (np.any(x < lo) or np.any(x > hi) or np.any(y < lo) or np.any(y > hi)):
            msg = (
                f"scores must lie in `score_range` {self.score_range}; the time-uniform "
                             "guarantee depends on the bounds."
            )
            raise ValueError(msg)
        # Evaluate the e-process item by item within the batch so a crossing is seen when it
        # happens (the guarantee is for looks after every item).
        d = x - y
        if self.method == "betting":
            hit = self._betting().extend(d)
            if self._decision is None and hit is not None:
                self.decided_at = hit
                self._decision = "A better" if self._seq.null_rejected == "above" else "B better"
            self._add(d)
        elif self._decision is None and d.size:
            self._scan(d)
        else:
            self._add(d)
        return self.state()

    def _add(self, d: np.ndarray) -> None:
        self.n += d.size
        self.sum_d += float(d.sum())
        self.b += int(np.count_nonzero(d > 0)) if self.binary else 0
        self.c += int(np.count_nonzero(d < 0)) if self.binary else 0

    def _scan(self, d: np.ndarray) -> None:
        threshold = math.log(1.0 / self.alpha)
        n0, s0, b0, c0 = self.n, self.sum_d, self.b, self.c
        ns = n0 + np.arange(1, d.size + 1)
        sums = s0 + np.cumsum(d)
        if self.binary:
            bs = b0 + np.cumsum(d > 0)
            cs = c0 + np.cumsum(d < 0)
            log_e = np.where(bs + cs > 0, beta_mixture_log_evalue(bs, cs, a=self.beta_a), 0.0)
        else:
            log_e = normal_mixture_log_evalue(sums, ns * self._variance_proxy(), rho=self._rho())
        hit = np.flatnonzero(np.asarray(log_e) >= threshold)
        if hit.size:
            i = int(hit[0])
            self.decided_at = int(ns[i])
            self._decision = "A better" if sums[i] > 0 else "B better"
        self._add(d)

    def leans_a(self) -> bool:
        """Whether the evidence is on A's side: with betting the larger capital at 0 bets on A (the
        side a decision or an e-BH discovery comes from, which the plain mean need not share);
        with the mixtures the sign of the mean difference.
        """
        if self.method == "betting" and self._seq is not None:
            return bool(self._seq.null_log_up >= self._seq.null_log_down)
        return self.sum_d > 0

    @public
    def interval_at(self, alpha: float) -> ConfidenceInterval:
        """An anytime-valid interval for the gap at level ``alpha`` from the current evidence: the
        e-value interval {gap : e-value of the gap < 1/alpha} (betting: needs every candidate's
        capital kept, as a :class:`LeaderboardMonitor` with e-BH keeps them for its pairs -- a
        monitor of one pair keeps only those inside its sequence, so this raises; mixture: the
        normal-mixture boundary at ``alpha``). The e-BY interval of a selection (Xu, Wang and
        Ramdas 2022) is this at alpha x selected / pairs.
        """
        if self.n == 0:
            return ConfidenceInterval(-math.inf, math.inf)
        if self.method == "betting":
            return ConfidenceInterval(*self._betting().bounds_at(alpha))
        half = normal_mixture_boundary(self.n * self._variance_proxy(), alpha=alpha, rho=self._rho()) / self.n
        delta, width = self.sum_d / self.n, self._half_range()
        return ConfidenceInterval(max(-width, delta - half), min(width, delta + half))

    def state(self) -> MonitorResult:
        """The current verdict, e-value and confidence sequence."""
        n = self.n
        if n == 0:
            inf = ConfidenceInterval(-math.inf, math.inf)
            return MonitorResult(0, math.nan, 1.0, 1 / self.alpha, "undecided", None, inf, None, None)
        delta = self.sum_d / n
        if self.method == "betting":  # the running intersection: excludes 0 exactly when decided
            cs = ConfidenceInterval(*self._betting().bounds())
        else:
            v = n * self._variance_proxy()
            half = normal_mixture_boundary(v, alpha=self.alpha, rho=self._rho()) / n
            width = self._half_range()
            cs = ConfidenceInterval(max(-width, delta - half), min(width, delta + half))
        return MonitorResult(
            n=n, delta=delta, e_value=float(math.exp(min(self._log_e(), 700.0))), threshold=1 / self.alpha,
            verdict=self._decision or "undecided", decided_at=self.decided_at, confidence_sequence=cs,
            b=self.b if self.binary else None, c=self.c if self.binary else None,
        )


@dataclass(frozen=True, slots=True, repr=False)
class LeaderboardMonitorResult(Result):
    """Current state of a :class:`LeaderboardMonitor`.

    Attributes
    ----------
    n : int
        Items seen (by the models there from the start).
    models : list of str
        Ranked by the current mean score, best first.
    means : list of float
        In that order.
    pairs : mapping
        ``(model_a, model_b) -> MonitorResult`` for every pair (model_a listed first as given), in
        the order the pairs were added: a read-only mapping (``keys()``, ``items()``, ``[pair]``,
        equal to the dict of the same items) whose results are built when read, from arrays kept
        for this look (a look costs no Python object per pair).
    decided : list of tuple
        Pairs with a verdict, as (winner, loser): with Bonferroni (or none) those whose e-process
        has reached 1/alpha_per_pair (sticky); with e-BH the current e-BH discoveries.
    alpha_per_pair : float
        The level each pair is monitored at (alpha / number of pairs with Bonferroni).
    correction : str or None
    n_items : list of int
        Items seen by each model (in ``models`` order): a model added later has fewer.
    provisional : list of str
        Models with fewer than ``min_items`` items: their rank is not yet worth reading.
    """

    n: int
    models: list[Any]
    means: list[Any]
    pairs: Mapping[tuple[str, str], Any]
    decided: list[Any]
    alpha_per_pair: float
    correction: str | None = "bonferroni"
    n_items: list[int] | None = None
    provisional: list[Any] | None = None

    _repr_fields = ("n", "models", "decided")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (used by the CLI and the reports)."""
        return {"n": self.n, "models": list(self.models), "means": list(self.means),
                "decided": [list(p) for p in self.decided], "alpha_per_pair": self.alpha_per_pair,
                "correction": self.correction, "n_items": list(self.n_items or []),
                "provisional": list(self.provisional or []),
                "pairs": {f"{a} vs {b}": s.to_dict() for (a, b), s in self.pairs.items()}}


#: a pair's verdict by its code in a look's arrays
_VERDICTS = {0: "undecided", 1: "A better", -1: "B better"}


class PairStates(Mapping):  # type: ignore[type-arg]
    """The ``pairs`` of a :class:`LeaderboardMonitorResult`: ``(model_a, model_b) -> MonitorResult``
    for every pair, in the monitor's pair order. The look's numbers are kept as arrays (one entry
    per pair) and each :class:`MonitorResult` is built when it is read; the mapping equals the dict
    of its items, and prints as that dict.
    """

    __slots__ = ("_cols", "_i", "_j", "_keys", "_names", "_size", "_threshold")

    def __init__(self, names: tuple[str, ...], i: np.ndarray, j: np.ndarray, keys: dict[tuple[str, str], int],
                 threshold: float, cols: dict[str, np.ndarray]) -> None:
        self._names, self._i, self._j, self._keys = names, i, j, keys
        self._size, self._threshold, self._cols = int(cols["n"].size), threshold, cols

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Any:
        names = self._names
        return ((names[a], names[b]) for a, b in zip(self._i[:self._size].tolist(), self._j[:self._size].tolist(),
                                                      strict=True))

    def _index(self, key: Any) -> int:
        try:
            p = self._keys.get(key)
        except TypeError:  # an unhashable key is not a pair
            p = None
        if p is None or p >= self._size:
            raise KeyError(key)
        return p

    def __contains__(self, key: object) -> bool:
        try:
            self._index(key)
        except KeyError:
            return False
        return True

    def __getitem__(self, key: tuple[str, str]) -> MonitorResult:
        return self._state(self._index(key))

    def values(self) -> Any:
        """Every pair's :class:`MonitorResult`, in pair order."""
        return [self._state(p) for p in range(self._size)]

    def items(self) -> Any:
        """``(pair, MonitorResult)`` for every pair, in pair order."""
        return list(zip(self, self.values(), strict=True))

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> Any:
        return (self.__class__, (self._names, self._i, self._j, self._keys, self._threshold, self._cols))

    def _state(self, p: int) -> MonitorResult:
        col = self._cols
        n = int(col["n"][p])
        if n == 0:
            return MonitorResult(0, math.nan, 1.0, self._threshold, "undecided", None,
                                 ConfidenceInterval(-math.inf, math.inf), None, None)
        binary = bool(col["binary"][p])
        at = int(col["decided_at"][p])
        return MonitorResult(
            n=n, delta=float(col["delta"][p]), e_value=float(col["e_value"][p]), threshold=self._threshold,
            verdict=_VERDICTS[int(col["verdict"][p])], decided_at=at or None,
            confidence_sequence=ConfidenceInterval(float(col["low"][p]), float(col["high"][p])),
            b=int(col["b"][p]) if binary else None, c=int(col["c"][p]) if binary else None)


def _beta_mixture_table(b: np.ndarray, c: np.ndarray, a: float) -> np.ndarray:
    """The Beta-mixture log e-values (0 with no discordant item) at the counts ``b``, ``c``: from a
    table over the counts that occur when it is much smaller than they are (the first batches of a
    large leaderboard: every pair's counts within a few hundred), else directly; the same values.
    """
    b0, c0 = int(b.min()), int(c.min())
    shape = (int(b.max()) - b0 + 1, int(c.max()) - c0 + 1)
    if 4 * shape[0] * shape[1] > b.size:
        return np.asarray(np.where(b + c > 0, beta_mixture_log_evalue(b, c, a=a), 0.0))
    tb, tc = np.arange(b0, b0 + shape[0])[:, None], np.arange(c0, c0 + shape[1])[None, :]
    table = np.where(tb + tc > 0, beta_mixture_log_evalue(tb, tc, a=a), 0.0)
    return np.asarray(table[b - b0, c - c0])


def _exp(x: np.ndarray) -> np.ndarray:
    """``math.exp`` of each value (numpy's exp can differ from it in the last bit; the per-pair
    monitor's e-values are ``math.exp``'s).
    """
    return np.fromiter(map(math.exp, x.tolist()), dtype=float, count=x.size)


def _log(x: np.ndarray) -> np.ndarray:
    """``math.log`` of each value (as :func:`_exp`), -inf at 0 (an e-value below the smallest double)."""
    if x.size and not x.min() > 0.0:
        return np.fromiter((math.log(v) if v > 0.0 else -math.inf for v in x.tolist()), dtype=float, count=x.size)
    return np.fromiter(map(math.log, x.tolist()), dtype=float, count=x.size)


#: how a LeaderboardMonitor controls its errors over the pairs
MONITOR_CORRECTIONS = ("bonferroni", "e-bh")

#: the numbers (and the share of the pair list and names) a LeaderboardMonitor keeps per pair
#: besides the betting grid
_PAIR_BYTES = 512

#: largest (items x pairs) block of differences formed at once by an update
_BLOCK = 1 << 18


class LeaderboardMonitor:
    r"""Anytime-valid monitoring of a whole leaderboard as new items are scored.

    Every pair of models gets the e-process and confidence sequence of a
    :class:`SequentialMonitor` (by default its betting confidence sequence), the evidence against
    "the two models are equally good", valid however often it is looked at. The pairs are held as
    arrays -- each pair's counts, sums, running mean and variance and capitals -- so one
    :meth:`update` is one array pass over them; each pair's numbers are those its own
    :class:`SequentialMonitor` would give, bit for bit. Over the pairs:

    - ``correction="bonferroni"`` (default): each pair at alpha / (number of pairs); the chance
      that *any* pair is ever declared different when all models are equally good stays below
      alpha (family-wise, a union bound over time-uniform tests). Verdicts are sticky.
    - ``correction="e-bh"``: the e-BH procedure (Wang and Ramdas 2022) on the pairs' current
      e-values at level ``alpha``: at any stopping time -- whenever the leaderboard is read -- the
      expected share of false "A beats B" claims among those made is at most alpha, under any
      dependence between the pairs. Far more powerful than Bonferroni with many pairs;
      ``decided`` is the current discoveries (not sticky), and each pair's interval the e-BY
      interval (Xu, Wang and Ramdas 2022) at alpha x discoveries / pairs, which leaves out 0
      exactly for the discoveries.
    - ``None``: each pair at alpha (no control over the pairs).

    What stays quadratic in the number of models is the pairs' state: a few numbers per pair, and
    with ``method="betting"`` the capitals of the sequence's candidate gaps -- 2,001 per pair (36
    kB), of which only those still inside the sequence are kept and moved, so the memory and the
    work of a look shrink as the sequences narrow; with e-BH all 501 of a coarser grid (8 kB), as
    its intervals read every candidate. It is sized before anything is allocated (at creation
    and at :meth:`add_model`): more pairs than ``LLM_POWER_MAX_MONITOR_PAIRS`` (20,000: 200
    models), or a state larger than ``LLM_POWER_MAX_MONITOR_MB`` (1,024 MB), is refused with the
    variable that raises the limit.

    Parameters
    ----------
    models : sequence of str
        Model names, in the column order of the score matrices given to :meth:`update`.
    alpha : float, default 0.05
        Family-wise level (Bonferroni), or the false discovery rate (e-BH).
    correction : {"bonferroni", "e-bh", None}, default "bonferroni"
    min_items : int, default 100
        A model with fewer items is *provisional* (``provisional`` of the state).
    **kwargs
        The options of each pair's :class:`SequentialMonitor` (``binary``, ``score_range``,
        ``tuned_for``, ``expected_discordance``, ``method``). With ``binary`` unset, each pair is
        0/1 or graded by its two models' first batch, as its own monitor would be.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import LeaderboardMonitor
    >>> rng = np.random.default_rng(1)
    >>> board = LeaderboardMonitor(["a", "b", "c"], tuned_for=3000)
    >>> for _ in range(15):
    ...     state = board.update((rng.random((200, 3)) < [0.80, 0.70, 0.69]).astype(int))
    >>> state.models[0], ("a", "c") in state.decided
    ('a', True)

    A model joins later: its pairs start when it does, and it is provisional for a while.

    >>> board.add_model("d")
    >>> state = board.update((rng.random((50, 4)) < [0.80, 0.70, 0.69, 0.9]).astype(int))
    >>> state.provisional, state.n_items[state.models.index("d")]
    (['d'], 50)
    """

    @public
    def __init__(self, models: Any, *, alpha: float = 0.05, correction: str | None = "bonferroni",
                 min_items: int = 100, **kwargs: Any) -> None:
        self.models = [str(m) for m in models]
        if len(self.models) < 2 or len(set(self.models)) != len(self.models):
            msg = "`models` must name at least 2 distinct models."
            raise ValueError(msg)
        self.alpha = check_open_unit(alpha, "alpha")
        if correction not in (*MONITOR_CORRECTIONS, None):
            msg = f"`correction` must be 'bonferroni', 'e-bh' or None; got {correction!r}."
            raise ValueError(msg)
        if isinstance(min_items, bool) or not isinstance(min_items, (int, np.integer)) or min_items < 0:
            msg = "min_items"
            raise fail(msg, "a non-negative integer (items)", min_items)
        self.correction = correction
        self.min_items = int(min_items)
        self.kwargs = kwargs
        k = len(self.models)
        pairs = k * (k - 1) // 2
        self.alpha_per_pair = self.alpha / pairs if correction == "bonferroni" else self.alpha
        self._check_pairs(k)
        # the settings every pair's monitor would have (its checks of the options run once, here)
        self._spec = SequentialMonitor(alpha=self.alpha_per_pair, **kwargs)
        self._check_memory(k)
        i, j = np.triu_indices(k, 1)
        self.pair_index = list(zip(i.tolist(), j.tolist(), strict=True))
        self._i, self._j = i.astype(np.int64), j.astype(np.int64)
        self._keys = {(self.models[a], self.models[b]): p for p, (a, b) in enumerate(self.pair_index)}
        spec = self._spec
        lo, hi = spec.score_range
        self._width = hi - lo  # a graded pair's half-range; a 0/1 pair's is 1
        self._proxy = (hi - lo) ** 2  # a graded pair's variance proxy; a 0/1 pair's is 1
        _, r = anytime_critical_value(spec.alpha)
        self._rho = (r * spec.tuned_for * 1.0, r * spec.tuned_for * self._proxy)  # (0/1, graded)
        # per pair: items, sum of the differences, discordant counts (0/1), 0/1 or not (-1: not yet
        # known), and the sticky verdict (1: A better, -1: B better) with the items it was reached at
        self._n = np.zeros(pairs, dtype=np.int64)
        self._sum_d = np.zeros(pairs)
        self._b = np.zeros(pairs, dtype=np.int64)
        self._c = np.zeros(pairs, dtype=np.int64)
        self._binary = np.full(pairs, -1 if spec.binary is None else int(bool(spec.binary)), dtype=np.int8)
        self._decision = np.zeros(pairs, dtype=np.int8)
        self._decided_at = np.zeros(pairs, dtype=np.int64)
        self._seqs: Any = None
        if spec.method == "betting":
            track_all = correction == "e-bh"  # e-BY intervals need every candidate's current capital
            self._seqs = BettingPairs(alpha=spec.alpha, horizon=spec.tuned_for, grid=self._grid(),
                                      track_all=track_all)
        self.sums = np.zeros(k)
        self.counts = np.zeros(k, dtype=np.int64)
        self.n = 0

    # -- sizes ----------------------------------------------------------------------------------
    def _grid(self) -> int:
        return 501 if self.correction == "e-bh" else 2001  # as SequentialMonitor's sequence

    @staticmethod
    def _check_pairs(models: int) -> None:
        """Refuse more pairs than ``LLM_POWER_MAX_MONITOR_PAIRS``, before anything is allocated."""
        check_size(models * (models - 1) // 2, "LLM_POWER_MAX_MONITOR_PAIRS",
                   f"{models:,} models are pairs to monitor at every look")

    def _check_memory(self, models: int) -> None:
        """Refuse a state of the pairs larger than ``LLM_POWER_MAX_MONITOR_MB``, before it is allocated."""
        pairs = models * (models - 1) // 2
        per = _PAIR_BYTES
        if self._spec.method == "betting":
            per += bytes_per_pair(self._grid(), track_all=self.correction == "e-bh")
        check_size(math.ceil(pairs * per / MB), "LLM_POWER_MAX_MONITOR_MB",
                   f"the state of {models:,} models' {pairs:,} pairs ({per:,} bytes each with "
                   f"method={self._spec.method!r}), in MB")

    def add_model(self, name: Any) -> None:
        """A new model joins: from the next :meth:`update` the score matrices have one more column
        (last). Its pairs' e-processes start now, so they stay valid; with Bonferroni every pair's
        level stays the one fixed at the start (the new pairs are monitored at it too, which keeps
        the union bound only for the pairs planned then). The pairs are sized against the limits
        first (:class:`LeaderboardMonitor`).
        """
        name = str(name)
        if name in self.models:
            msg = f"model {name!r} is already on the leaderboard."
            raise ValueError(msg)
        k, pairs = len(self.models), len(self.pair_index)
        self._check_pairs(k + 1)
        self._check_memory(k + 1)
        self.models.append(name)
        for a in range(k):
            self.pair_index.append((a, k))
            self._keys[self.models[a], name] = pairs + a
        self._i = np.r_[self._i, np.arange(k, dtype=np.int64)]
        self._j = np.r_[self._j, np.full(k, k, dtype=np.int64)]
        self._n = np.r_[self._n, np.zeros(k, dtype=np.int64)]
        self._sum_d = np.r_[self._sum_d, np.zeros(k)]
        self._b = np.r_[self._b, np.zeros(k, dtype=np.int64)]
        self._c = np.r_[self._c, np.zeros(k, dtype=np.int64)]
        self._binary = np.r_[self._binary, np.full(k, self._binary_start(), dtype=np.int8)]
        self._decision = np.r_[self._decision, np.zeros(k, dtype=np.int8)]
        self._decided_at = np.r_[self._decided_at, np.zeros(k, dtype=np.int64)]
        self.sums = np.append(self.sums, 0.0)
        self.counts = np.append(self.counts, 0)

    def _binary_start(self) -> int:
        return -1 if self._spec.binary is None else int(bool(self._spec.binary))

    # -- adding items ---------------------------------------------------------------------------
    def _check_batch(self, x: np.ndarray) -> np.ndarray:
        """Each pair's 0/1-ness after this batch, or the error its own monitor would raise (the first
        pair's, in pair order) -- before anything changes.
        """
        i, j = self._i, self._j
        finite = np.asarray(np.isfinite(x).all(axis=0))
        zero_one = np.asarray(((x == 0) | (x == 1)).all(axis=0))
        lo, hi = self._spec.score_range
        within = np.asarray(((x >= lo) & (x <= hi)).all(axis=0))
        batch = zero_one[i] & zero_one[j]
        binary = np.where(self._binary < 0, batch, self._binary == 1)
        bad_finite = ~(finite[i] & finite[j])
        bad_binary = np.asarray((self._binary == 1) & ~batch)
        bad = bad_finite | bad_binary | (~binary & ~(within[i] & within[j]))
        if bad.any():
            p = int(np.argmax(bad))
            if bad_finite[p]:
                msg = "new scores must be finite (no NaN or inf)."
            elif bad_binary[p]:
                msg = "this monitor is for 0/1 correctness; got a graded score. Create it with binary=False."
            else:
                msg = (f"scores must lie in `score_range` {self._spec.score_range}; the time-uniform "
                       "guarantee depends on the bounds.")
            raise ValueError(msg)
        return np.asarray(binary)

    def update(self, scores: Any) -> LeaderboardMonitorResult:
        """Add new items: an (n_new, n_models) matrix (or DataFrame with the model columns)."""
        if hasattr(scores, "columns") and hasattr(scores, "to_numpy"):
            missing = [m for m in self.models if m not in [str(c) for c in scores.columns]]
            if missing:
                msg = f"the new scores have no column for model {missing[0]!r}."
                raise ValueError(msg)
            scores = scores[self.models].to_numpy(dtype=float)
        x = as_float_array(scores, "scores")
        if x.ndim != 2 or x.shape[1] != len(self.models):
            msg = f"`scores` must have shape (n_new, {len(self.models)}); got {x.shape}."
            raise ValueError(msg)
        binary = self._check_batch(x)
        self._binary[:] = binary
        k, pairs = x.shape[0], len(self.pair_index)
        seqs = self._seqs
        if seqs is not None and seqs.size < pairs:  # the new pairs' sequences start with their first batch
            seqs.add(np.where(binary[seqs.size:], 1.0, self._width))
        piece = max(1, _BLOCK // max(k, 1))
        for p0 in range(0, pairs, piece):
            ps = slice(p0, min(p0 + piece, pairs))
            d = x[:, self._i[ps]] - x[:, self._j[ps]]
            if seqs is not None:
                seqs.extend(d, p0)
            elif k:
                self._scan(d, ps)
            self._add(d, ps)
        if seqs is not None:  # decided once the sequence leaves out 0: the first rejection of the null
            self._decision[:] = seqs.null_side
            self._decided_at[:] = seqs.null_at
        self.sums += x.sum(axis=0)
        self.counts += k
        self.n = int(self.counts[0])
        return self.state()

    def _add(self, d: np.ndarray, ps: slice) -> None:
        self._n[ps] += d.shape[0]
        self._sum_d[ps] += np.ascontiguousarray(d.T).sum(axis=1)  # each pair's pairwise sum, as d.sum()
        binary = self._binary[ps] == 1
        self._b[ps] += np.where(binary, np.count_nonzero(d > 0, axis=0), 0)
        self._c[ps] += np.where(binary, np.count_nonzero(d < 0, axis=0), 0)

    def _scan(self, d: np.ndarray, ps: slice) -> None:
        """The mixture e-processes of the undecided pairs item by item within the batch, so a
        crossing of 1/alpha is seen when it happens (the guarantee is for looks after every item).
        """
        open_ = np.flatnonzero(self._decision[ps] == 0)
        if open_.size == 0:
            return
        at = ps.start + open_
        d = d[:, open_]
        ns = self._n[at] + np.arange(1, d.shape[0] + 1)[:, None]
        sums = self._sum_d[at] + np.cumsum(d, axis=0)
        log_e = np.empty_like(sums)
        binary = self._binary[at] == 1
        zo, gr = np.flatnonzero(binary), np.flatnonzero(~binary)
        if zo.size:
            bs = self._b[at[zo]] + np.cumsum(d[:, zo] > 0, axis=0)
            cs = self._c[at[zo]] + np.cumsum(d[:, zo] < 0, axis=0)
            log_e[:, zo] = _beta_mixture_table(bs, cs, self._spec.beta_a)
        if gr.size:
            log_e[:, gr] = normal_mixture_log_evalue(sums[:, gr], ns[:, gr] * self._proxy, rho=self._rho[1])
        hit = log_e >= math.log(1.0 / self._spec.alpha)
        found = np.flatnonzero(hit.any(axis=0))
        if found.size:
            row = np.argmax(hit[:, found], axis=0)
            self._decided_at[at[found]] = ns[row, found]
            self._decision[at[found]] = np.where(sums[row, found] > 0, 1, -1)

    # -- reading --------------------------------------------------------------------------------
    def _log_e(self, seen: np.ndarray | slice, binary: np.ndarray) -> np.ndarray:
        """The log e-values of the pairs ``seen`` (as SequentialMonitor's ``_log_e``)."""
        if self._seqs is not None:  # half the larger capital at 0
            top = pymin(pymax(self._seqs.null_up[seen], self._seqs.null_down[seen]), 700.0)
            return _log(0.5 * _exp(top))
        zo = binary[seen]
        b, c = self._b[seen], self._c[seen]
        with np.errstate(all="ignore"):
            mix01 = np.where(b + c > 0, beta_mixture_log_evalue(b, c, a=self._spec.beta_a), 0.0)
            graded = normal_mixture_log_evalue(self._sum_d[seen], self._n[seen] * self._proxy, rho=self._rho[1])
        return np.where(zo, mix01, graded)

    def _mixture_cs(self, seen: np.ndarray | slice, binary: np.ndarray, delta: np.ndarray,
                    alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """The normal-mixture sequences at ``alpha`` of the pairs ``seen``, clipped to the range."""
        zo, n = binary[seen], self._n[seen]
        v = n * np.where(zo, 1.0, self._proxy)
        rho = np.where(zo, self._rho[0], self._rho[1])
        half = np.sqrt((v + rho) * np.log((v + rho) / (rho * alpha * alpha))) / n  # normal_mixture_boundary / n
        width = np.where(zo, 1.0, self._width)
        return pymax(-width, delta - half), pymin(width, delta + half)

    def state(self) -> LeaderboardMonitorResult:
        """The current ranking and the pairs decided so far (e-BH: decided now)."""
        from .multiplicity import e_bh

        means = self.sums / np.maximum(self.counts, 1)
        order = np.argsort(-means, kind="stable")
        pairs, betting = len(self.pair_index), self._seqs is not None
        n, binary = self._n.copy(), self._binary == 1
        started = np.flatnonzero(n > 0)
        seen: np.ndarray | slice = slice(None) if started.size == pairs else started  # every pair: no copies
        delta = np.full(pairs, math.nan)
        delta[seen] = self._sum_d[seen] / n[seen]
        e_value = np.ones(pairs)
        e_value[seen] = _exp(pymin(self._log_e(seen, binary), 700.0))
        low, high = np.full(pairs, -math.inf), np.full(pairs, math.inf)
        if self.correction == "e-bh":  # each pair's verdict is e-BH's, now (not its own test at alpha)
            found = e_bh(e_value, q=self.alpha)
            # e-BY (Xu, Wang and Ramdas 2022): each pair's interval at alpha x discoveries / pairs, from
            # the current evidence -- it leaves out 0 exactly for the e-BH discoveries, and the
            # discoveries' intervals keep the false coverage rate at alpha
            level = self.alpha * max(int(found.sum()), 1) / max(pairs, 1)
            low[seen], high[seen] = (self._seqs.bounds_at(level, seen) if betting
                                     else self._mixture_cs(seen, binary, delta[seen], level))
            ahead = self._sum_d > 0
            if betting:  # the side of the larger capital at 0, once the pair's sequence has started
                begun = slice(0, self._seqs.size)
                ahead[begun] = self._seqs.null_up >= self._seqs.null_down
            low, high = agree_intervals(low, high, found, ahead, exact=betting)
            verdict = np.where(found, np.where(ahead, 1, -1), 0).astype(np.int8)
            decided_at = np.zeros(pairs, dtype=np.int64)
        else:
            low[seen], high[seen] = (self._seqs.bounds(seen) if betting
                                     else self._mixture_cs(seen, binary, delta[seen], self._spec.alpha))
            verdict, decided_at = self._decision.copy(), self._decided_at.copy()
        names = self.models
        decided = [(names[a], names[b]) if v > 0 else (names[b], names[a])
                   for a, b, v in zip(self._i[verdict != 0].tolist(), self._j[verdict != 0].tolist(),
                                      verdict[verdict != 0].tolist(), strict=True)]
        view = PairStates(tuple(names), self._i, self._j, self._keys, 1 / self._spec.alpha,
                          {"n": n, "delta": delta, "e_value": e_value, "verdict": verdict, "decided_at": decided_at,
                           "low": low, "high": high, "b": self._b.copy(), "c": self._c.copy(), "binary": binary})
        ranked = [names[k] for k in order]
        return LeaderboardMonitorResult(n=self.n, models=ranked, means=[float(means[k]) for k in order], pairs=view,
                                        decided=decided, alpha_per_pair=self.alpha_per_pair,
                                        correction=self.correction,
                                        n_items=[int(self.counts[k]) for k in order],
                                        provisional=[names[k] for k in order if self.counts[k] < self.min_items])
