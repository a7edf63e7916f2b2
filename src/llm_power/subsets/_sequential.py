"""Sequential subsets: run items in a random order until the full-benchmark score's interval is
narrow enough or a gap's verdict is decided -- anytime-valid, so stopping when it looks good is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.validation import as_float_array, check_int_at_least, check_open_unit, check_option
from .._kernel.betting import BettingSequence
from ._design import TARGETS

__all__ = ["SubsetSequence", "SubsetSequenceResult"]


@dataclass(frozen=True, slots=True, repr=False)
class SubsetSequenceResult(Result):
    """Where a :class:`SubsetSequence` stands.

    Attributes
    ----------
    estimate : float
        The mean of the items run so far.
    ci : ConfidenceInterval
        The confidence sequence of the full-benchmark mean at this look: valid at any number of
        looks and any stopping rule.
    n, n_items : int
    decided : bool
        The sequence leaves out ``against`` (it never comes back in).
    verdict : str
        ``"above <against>"``, ``"below <against>"``, ``"not decided"`` (or without ``against``: "").
    stop : bool
        Decided, or the interval as narrow as ``half_width``, or every item run.
    against : float or None
    half_width : float or None
    target : str
    confidence_level : float
    """

    estimate: float
    ci: ConfidenceInterval
    n: int
    n_items: int
    decided: bool
    verdict: str
    stop: bool
    against: float | None
    half_width: float | None
    target: str
    confidence_level: float

    _repr_fields = ("estimate", "ci", "n", "n_items", "verdict", "stop")

    @public
    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The confidence sequence at this look."""
        return stored_interval(*self.ci, self.confidence_level, confidence_level,
                               recompute="run a SubsetSequence(..., confidence_level=confidence_level)")


class SubsetSequence:
    """Run a benchmark's items in a random order and stop as soon as the answer is known.

    The items must come in a uniformly random order (a random permutation of the benchmark; a
    plan of one stratum from :func:`subset_plan` is one). The sequence is the package's betting
    confidence sequence (Waudby-Smith & Ramdas 2024; the kernel's ``BettingSequence``): at every
    look its interval holds the target with probability ``confidence_level``, whatever the
    stopping rule. The default target is the mean over the population of questions the items
    are a sample of -- what ``compare`` and the sequential monitors infer; with
    ``target="benchmark"`` it is the mean over these ``n_items`` items, the sequence for sampling
    without replacement (Waudby-Smith & Ramdas 2020), which closes on that mean as the items run
    out. Stop when ``half_width`` is reached, or when it leaves out ``against``: that verdict is
    final. For a gap, feed the per-item differences with another model (``low=-1``, ``against=0``).

    Parameters
    ----------
    n_items : int
        Items in the benchmark.
    against : float, optional
        A value to decide against: another model's full-benchmark score.
    half_width : float, optional
        Stop when the interval is this narrow (score units).
    confidence_level : float, default 0.95
    low, high : float, default 0 and 1
        The range of a value (-1 and 1 for the difference of two models' 0/1 scores).
    target : {"population", "benchmark"}, default "population"
        As in :func:`subset_estimate`.
    horizon : int, optional
        Items the bets are tuned for (default: with ``half_width``, the size of a fixed sample
        with that half-width at the widest spread; else a tenth of the benchmark, at least 100).

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> items = (rng.random(10000) < 0.62).astype(float)     # a model's scores on every item
    >>> seq = lp.SubsetSequence(10000, against=0.55, target="benchmark")   # another model's score: 0.55
    >>> order = rng.permutation(10000)
    >>> for start in range(0, 10000, 100):                    # look after every 100 items
    ...     res = seq.add(items[order[start:start + 100]])
    ...     if res.stop:
    ...         break
    >>> res.verdict, res.n < 2000, bool(res.ci.low <= items.mean() <= res.ci.high)
    ('above 0.55', True, True)
    """

    @public
    def __init__(self, n_items: int, *, against: float | None = None, half_width: float | None = None,
                 confidence_level: float = 0.95, low: float = 0.0, high: float = 1.0,
                 target: str = "population", horizon: int | None = None) -> None:
        self.n_items = check_int_at_least(n_items, "n_items", 2)
        self.level = check_open_unit(confidence_level, "confidence_level")
        if not (math.isfinite(low) and math.isfinite(high) and low < high and math.isfinite(high - low)):
            msg = f"need finite low < high (and a finite range high - low); got {low!r}, {high!r}."
            raise ValueError(msg)
        if against is not None and not (low <= against <= high):
            msg = f"`against` {against!r} is outside the values' range [{low:g}, {high:g}]."
            raise ValueError(msg)
        if half_width is not None and not (math.isfinite(half_width) and half_width > 0):
            msg = f"`half_width` must be positive; got {half_width!r}."
            raise ValueError(msg)
        self.against, self.half_width = against, half_width
        self.target = check_option(target, "target", TARGETS)
        if horizon is not None:
            h = horizon
        elif half_width is not None:  # the fixed-size sample of that half-width at the widest spread
            ratio = 1.96 * (high - low) / 2.0 / half_width
            n0 = ratio * ratio if ratio < 1e150 else math.inf  # a half-width far below the range: every item
            h = self.n_items if math.isinf(n0) else max(10, min(self.n_items, round(n0 / (1.0 + n0 / self.n_items))))
        else:
            h = max(100, self.n_items // 10)
        tail = (1.0 - self.level) / 2.0
        self._seq = BettingSequence(float(low), float(high), alpha_lower=tail, alpha_upper=tail,
                                    horizon=check_int_at_least(h, "horizon", 1),
                                    population=self.n_items if self.target == "benchmark" else None)
        self._sum = 0.0

    def add(self, scores: Any) -> SubsetSequenceResult:
        """Add the next items' scores (in their random order) and return where the sequence stands."""
        v = as_float_array(scores, "scores").reshape(-1)
        if not np.all(np.isfinite(v)):
            msg = "`scores` must be finite."
            raise ValueError(msg)
        if self._seq.n + v.size > self.n_items:
            msg = f"{self._seq.n + v.size} items added to a sequence over a benchmark of {self.n_items}"
            raise ValueError(msg)
        self._seq.extend(v)
        self._sum += float(v.sum())
        return self.result()

    def result(self) -> SubsetSequenceResult:
        """Where the sequence stands now."""
        n = self._seq.n
        if n == self.n_items and self.target == "benchmark":
            mean = self._sum / n
            low, high = mean, mean
        else:
            low, high = self._seq.bounds()
        decided, verdict = False, ""
        if self.against is not None:
            decided = bool(low > self.against or high < self.against)
            side = "above" if low > self.against else "below"
            verdict = f"{side} {self.against:g}" if decided else "not decided"
        narrow = self.half_width is not None and n > 0 and (high - low) / 2.0 <= self.half_width
        return SubsetSequenceResult(
            estimate=self._sum / n if n else math.nan, ci=ConfidenceInterval(float(low), float(high)), n=n,
            n_items=self.n_items, decided=decided, verdict=verdict,
            stop=bool(decided or narrow or n == self.n_items), against=self.against, half_width=self.half_width,
            target=self.target, confidence_level=self.level)
