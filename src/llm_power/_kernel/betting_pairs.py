r"""Many betting confidence sequences of paired differences, advanced in one array pass.

A leaderboard monitors every pair of its models with the betting confidence sequence of the
per-item differences (:class:`~llm_power._kernel.betting.BettingSequence` over ``[-w, w]``, each
side at alpha/2, the null mean 0 tracked exactly). :class:`BettingPairs` holds P such sequences
as arrays -- the running mean and variance and the capitals at the null as length-P arrays, the
capitals of the grid of candidate means as (P, grid) arrays -- and :meth:`BettingPairs.extend`
adds the same new rows to all of them at once. It does, element for element, the floating-point
operations of P separate :class:`~llm_power._kernel.betting.BettingSequence` objects in the same
order (the rows in blocks of ``BLOCK_ROWS``, each block's log-capital increments summed down the rows
and then added to the capital), so its bets, capitals, first rejection of the null, sequence and
e-value interval are theirs bit for bit; ``tests/test_sequential_leaderboard.py`` holds a
leaderboard built on it to one :class:`~llm_power.SequentialMonitor` per pair.

Only the candidates still inside a sequence move (``track_all=False``), and only they are kept:
packed one pair after another in flat arrays of their two capitals and grid index, a rejected
one marked by capitals of -inf (it never moves again, as in the separate sequence, where it is
outside the window of candidates still inside and is not read again) and dropped once a quarter
of the packed candidates are rejected. So the work and the memory of a look are the number of
candidates still inside, which shrinks as the sequences narrow, and the arithmetic runs on
contiguous arrays. Per pair the window ``[lo, hi)`` of the grid between the first and the last
candidate inside, and the candidates rejected last (the sequence when none is left), are kept for
:meth:`BettingPairs.bounds`. With ``track_all=True`` (a leaderboard with e-BH, whose e-BY
intervals read every candidate's current capital, :meth:`BettingPairs.bounds_at`) every
candidate moves, as (pairs, grid) arrays, and no rejection is kept. Temporaries are computed in
pieces of at most about ``_ELEMENTS`` values.
"""

from __future__ import annotations

import math

import numpy as np

from .betting import BLOCK_ROWS, MAX_BET

__all__ = ["BettingPairs", "agree_intervals", "bytes_per_pair", "pymax", "pymin"]

#: largest temporary (rows x candidates) formed at once: 8 MB of float64
_ELEMENTS = 1 << 20

#: the most a capital can gain from one value: log(1 + MAX_BET) (every bet is at most MAX_BET, every
#: difference from a candidate at most 1 on the [0, 1] scale)
_MAX_GAIN = math.log1p(MAX_BET)

#: packed candidates moved together through a block of several rows, a row at a time (vectors that
#: stay in the cache)
_PIECE = 1 << 15

#: the null mean of every pair's difference, on the [0, 1] scale: (0 - (-w)) / (w - (-w))
_NULL = 0.5


def pymax(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Python's ``max(a, b)`` elementwise: ``b`` only where it is larger (so ``max(-0.0, 0.0)`` is
    -0.0, as the per-pair code gives, where ``np.maximum`` may give either zero).
    """
    return np.where(b > a, b, a)


def pymin(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Python's ``min(a, b)`` elementwise: ``b`` only where it is smaller."""
    return np.where(b < a, b, a)


def bytes_per_pair(grid: int, *, track_all: bool) -> int:
    """Memory that one pair's sequence keeps at most (before any candidate is rejected): the two
    capitals of every candidate (and, unless ``track_all``, its grid index) and 16 numbers.
    """
    return grid * (16 if track_all else 18) + 16 * 8


def _running(gains: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``start + np.cumsum(gains, axis=0)``, the same sums in the same order, in place: a loop over
    the rows adds contiguous rows (numpy's cumulative sum down the rows of a wide array strides
    across them, several times slower).
    """
    for i in range(1, gains.shape[0]):
        np.add(gains[i - 1], gains[i], out=gains[i])
    gains += start
    return gains


def _grown(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``old`` with ``new`` appended (``new`` itself when ``old`` is empty: no copy of a first, large allocation)."""
    return new if old.size == 0 else np.concatenate([old, new])


class BettingPairs:
    """P betting confidence sequences of differences in ``[-w_p, w_p]`` (:meth:`add`), each side at
    ``alpha / 2``, tuned for ``horizon`` values, on a grid of ``grid`` candidate means, with the
    null mean 0 tracked exactly: the arrays of :class:`~llm_power._kernel.betting.BettingSequence`
    ``(-w, w, alpha_lower=alpha/2, alpha_upper=alpha/2, horizon=horizon, grid=grid, null=0.0,
    track_all=track_all)``, one per pair.

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power._kernel.betting_pairs import BettingPairs
    >>> seqs = BettingPairs(alpha=0.05, horizon=400, grid=2001)
    >>> seqs.add(np.ones(2))  # two pairs of 0/1 models: differences in [-1, 1]
    >>> d = np.c_[np.where(np.arange(400) % 10 < 7, 1.0, 0.0), np.zeros(400)]
    >>> seqs.extend(d)
    >>> low, high = seqs.bounds()
    >>> bool(low[0] > 0), bool(low[1] < 0 < high[1]), seqs.null_side.tolist()
    (True, True, [1, 0])
    """

    def __init__(self, *, alpha: float, horizon: int, grid: int, track_all: bool = False) -> None:
        self.alpha_side = alpha / 2
        self.horizon = int(horizon)
        self.grid = int(grid)
        self.track_all = bool(track_all)
        self.m = np.linspace(0.0, 1.0, self.grid)
        pos = (0.0 - (-1.0)) / (1.0 - (-1.0)) * (self.grid - 1)  # the null is a candidate, as BettingSequence asks
        if abs(pos - round(pos)) > 1e-9 or self.grid > np.iinfo(np.int16).max:
            msg = f"the null 0.0 must be a candidate of the grid ({self.grid} points over the range)"
            raise ValueError(msg)
        self.w = np.zeros(0)
        self.n = np.zeros(0, dtype=np.int64)
        self.total = np.zeros(0)
        self.mu = np.zeros(0)
        self.sig2 = np.zeros(0)
        self.null_up = np.zeros(0)
        self.null_down = np.zeros(0)
        self.null_at = np.zeros(0, dtype=np.int64)  # values seen when the null was first rejected (0: not yet)
        self.null_side = np.zeros(0, dtype=np.int8)  # +1: rejected by the upward bets ("above"), -1: downward
        # track_all: every candidate's capitals, (pairs, grid)
        self.log_up = np.zeros((0, self.grid))
        self.log_down = np.zeros((0, self.grid))
        # else: the candidates not yet dropped, packed pair after pair (segments in pair order): their
        # capitals (-inf once rejected) and grid index; per pair the window [lo, hi) between the first
        # and last candidate inside (lo == hi: none), and the values seen at the latest rejection with
        # the first and last grid index rejected then
        self.up = np.zeros(0)
        self.down = np.zeros(0)
        self.g = np.zeros(0, dtype=np.int16)
        self.seg_pair = np.zeros(0, dtype=np.int64)
        self.seg_len = np.zeros(0, dtype=np.int64)
        self.dead = 0
        self.lo = np.zeros(0, dtype=np.int64)
        self.hi = np.zeros(0, dtype=np.int64)
        self.last_at = np.zeros(0, dtype=np.int64)
        self.last_lo = np.zeros(0, dtype=np.int64)
        self.last_hi = np.zeros(0, dtype=np.int64)
        self._buffers: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def size(self) -> int:
        """The number of sequences."""
        return int(self.w.size)

    def add(self, w: np.ndarray) -> None:
        """Append one sequence per half-width in ``w`` (differences in [-w, w]), before any value."""
        w = np.asarray(w, dtype=float).reshape(-1)
        k, g, p0 = w.size, self.grid, self.size
        zeros, ints = np.zeros(k), np.zeros(k, dtype=np.int64)
        self.w = np.r_[self.w, w]
        self.n, self.total = np.r_[self.n, ints], np.r_[self.total, zeros]
        self.mu, self.sig2 = np.r_[self.mu, np.full(k, 0.5)], np.r_[self.sig2, np.full(k, 0.25)]
        self.null_up, self.null_down = np.r_[self.null_up, zeros], np.r_[self.null_down, zeros]
        self.null_at, self.null_side = np.r_[self.null_at, ints], np.r_[self.null_side, np.zeros(k, dtype=np.int8)]
        if self.track_all:
            self.log_up, self.log_down = (_grown(a, np.zeros((k, g))) for a in (self.log_up, self.log_down))
            return
        self.up, self.down = (_grown(a, np.zeros(k * g)) for a in (self.up, self.down))
        self.g = _grown(self.g, np.tile(np.arange(g, dtype=np.int16), k))
        self.seg_pair = np.r_[self.seg_pair, np.arange(p0, p0 + k, dtype=np.int64)]
        self.seg_len = np.r_[self.seg_len, np.full(k, g, dtype=np.int64)]
        self.lo, self.hi = np.r_[self.lo, ints], np.r_[self.hi, np.full(k, g, dtype=np.int64)]
        self.last_at, self.last_lo, self.last_hi = np.r_[self.last_at, ints], np.r_[self.last_lo, ints], np.r_[
            self.last_hi, ints]

    # -- adding values --------------------------------------------------------------------------
    def extend(self, values: np.ndarray, start: int = 0) -> None:
        """Add rows of differences, in order: ``values`` is (rows, pairs) for the sequences
        ``start, start + 1, ...`` (each column within its pair's [-w, w]; unchecked).
        """
        v = np.asarray(values, dtype=float)
        k, width = v.shape
        if k == 0 or width == 0:
            return
        ps = slice(start, start + width)
        w = self.w[ps]
        y = (v + w) / (w + w)  # (v - low) / (high - low) with low = -w, high = w
        n0 = self.n[ps].copy()
        idx = n0 + np.arange(1, k + 1, dtype=float)[:, None]
        mu = (0.5 + self.total[ps] + np.cumsum(y, axis=0)) / (idx + 1.0)
        prev_mu = np.concatenate([self.mu[None, ps], mu[:-1]])
        # sig2_i (i + 1) = sig2_{i-1} i + (y_i - mu_{i-1})^2: the running regularised variance
        sig2 = (self.sig2[ps] * (n0 + 1) + np.cumsum((y - prev_mu) ** 2, axis=0)) / (idx + 1.0)
        prev_sig2 = np.concatenate([self.sig2[None, ps], sig2[:-1]])
        h = max(self.horizon, 1)
        lam = np.minimum(MAX_BET, np.sqrt(2.0 * math.log(1.0 / self.alpha_side) / (prev_sig2 * h)))
        t = math.log(1.0 / self.alpha_side)
        for first in range(0, k, BLOCK_ROWS):
            rows, bets = y[first:first + BLOCK_ROWS], lam[first:first + BLOCK_ROWS]
            seen = n0 + first  # values of each sequence before this block
            if self.track_all:
                self._move_all(rows, bets, start)
            else:
                self._move_inside(rows, bets, seen, start, t)
                # the next block moves only what is left (a block of many rows: even a few rejected
                # are worth dropping)
                if (4 if rows.shape[0] == 1 else 32) * self.dead > self.up.size:
                    self._drop_rejected()
            self._move_null(rows, bets, seen, ps, t)
        self.n[ps] += k
        self.total[ps] += np.ascontiguousarray(y.T).sum(axis=1)  # each pair's pairwise sum, as y.sum()
        self.mu[ps], self.sig2[ps] = mu[-1], sig2[-1]

    def _move_null(self, rows: np.ndarray, bets: np.ndarray, seen: np.ndarray, ps: slice, t: float) -> None:
        up = _running(np.log1p(bets * (rows - _NULL)), self.null_up[ps])
        down = _running(np.log1p(-bets * (rows - _NULL)), self.null_down[ps])
        self.null_up[ps], self.null_down[ps] = up[-1], down[-1]
        hit = (up >= t) | (down >= t)
        fresh = np.flatnonzero(hit.any(axis=0) & (self.null_side[ps] == 0))
        if fresh.size:
            i = np.argmax(hit[:, fresh], axis=0)
            at = ps.start + fresh
            self.null_at[at] = seen[fresh] + i + 1
            self.null_side[at] = np.where(up[i, fresh] >= t, 1, -1)

    def _scratch(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Two float buffers of at least ``size`` values, kept between looks (a look of one row
        would otherwise map and fault in fresh megabytes twice per pass).
        """
        if self._buffers is None or self._buffers[0].size < size:
            self._buffers = (np.empty(size), np.empty(size))
        return self._buffers[0][:size], self._buffers[1][:size]

    def _move_all(self, rows: np.ndarray, bets: np.ndarray, start: int) -> None:
        """Every candidate's capitals (track_all): (rows, pairs, grid) in pieces of pairs."""
        r, width = rows.shape
        piece = max(1, _ELEMENTS // (r * self.grid))
        for p0 in range(0, width, piece):
            cols = slice(p0, p0 + piece)
            at = slice(start + p0, start + min(p0 + piece, width))
            if r == 1:
                step, gain = (b.reshape(-1, self.grid) for b in self._scratch((at.stop - at.start) * self.grid))
                np.subtract(rows[0, cols, None], self.m, out=step)
                np.multiply(bets[0, cols, None], step, out=step)
                self.log_up[at] += np.log1p(step, out=gain)
                self.log_down[at] += np.log1p(np.negative(step, out=step), out=gain)
            else:
                step = np.subtract(rows[:, cols, None], self.m)
                np.multiply(bets[:, cols, None], step, out=step)
                # the rows' increments added in order down the rows (a sum over the outer axis is
                # sequential, as the last row of their cumulative sum), then to the capital
                gain = np.log1p(step)
                self.log_up[at] += gain.sum(axis=0)
                np.log1p(np.negative(step, out=step), out=gain)
                self.log_down[at] += gain.sum(axis=0)

    def _move_inside(self, rows: np.ndarray, bets: np.ndarray, seen: np.ndarray, start: int, t: float) -> None:
        """The packed candidates of the pairs ``start...``: their capitals, their rejections, and the
        windows of the pairs that lost candidates.
        """
        r, width = rows.shape
        s_a, s_b = (int(s) for s in np.searchsorted(self.seg_pair, [start, start + width]))
        if s_a == s_b:
            return
        lens = self.seg_len[s_a:s_b]
        offset = np.cumsum(self.seg_len) - self.seg_len  # where each segment starts in the packed arrays
        ends = np.cumsum(lens)
        piece = max(self.grid, _ELEMENTS if r == 1 else _PIECE)
        cuts = np.unique(np.r_[0, np.searchsorted(ends, np.arange(piece, int(ends[-1]), piece), side="right"),
                               s_b - s_a])
        for e0, e1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            pair = self.seg_pair[s_a + e0:s_a + e1] - start
            ln = lens[e0:e1]
            c0 = int(offset[s_a + e0])
            cs = slice(c0, c0 + int(ln.sum()))
            up, down = self.up[cs], self.down[cs]  # views: moved in place
            m = self.m[self.g[cs]]
            if r == 1:
                step, gain = self._scratch(up.size)
                np.subtract(np.repeat(rows[0, pair], ln), m, out=step)
                np.multiply(np.repeat(bets[0, pair], ln), step, out=step)
                up += np.log1p(step, out=gain)
                down += np.log1p(np.negative(step, out=step), out=gain)
                new = np.flatnonzero(np.maximum(up, down, out=gain) >= t)
                row = np.zeros(new.size, dtype=np.int64)
            else:  # row by row: the capitals at each row are the start plus the running sums of the gains
                row, new = self._rows_inside(rows, bets, pair, ln, m, up, down, t)
            if new.size:  # rejected for good: never read again
                up[new] = -math.inf
                down[new] = -math.inf
                which = np.searchsorted(np.cumsum(ln), new, side="right")
                self._rejected(start + pair, ln, up, self.g[cs], which, seen[pair[which]] + row + 1, new)

    @staticmethod
    def _rows_inside(rows: np.ndarray, bets: np.ndarray, pair: np.ndarray, ln: np.ndarray,  # noqa: PLR0913, PLR0917
                     m: np.ndarray, up: np.ndarray, down: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Several rows of one piece of packed candidates (``up``, ``down`` moved in place): as
        ``up + np.cumsum(gains, axis=0)`` of the separate sequence, a row at a time on contiguous
        vectors; returns the candidates rejected and the row each first was. A row adds at most
        log(1 + MAX_BET) to a capital, so only the candidates within that many rows of 1/alpha are
        compared with it at each row.
        """
        size, r = up.size, rows.shape[0]
        near = np.flatnonzero(np.maximum(up, down) >= t - r * _MAX_GAIN - 1e-6)
        first = np.full(near.size, -1, dtype=np.int64)
        up_near, down_near = up[near], down[near]
        run_up, run_down, step, gain = (np.empty(size) for _ in range(4))
        for i in range(r):
            np.subtract(np.repeat(rows[i, pair], ln), m, out=step)
            np.multiply(np.repeat(bets[i, pair], ln), step, out=step)
            np.log1p(step, out=gain)
            if i:
                run_up += gain
            else:
                np.copyto(run_up, gain)
            np.log1p(np.negative(step, out=step), out=gain)
            if i:
                run_down += gain
            else:
                np.copyto(run_down, gain)
            if near.size:
                hit = (up_near + run_up[near] >= t) | (down_near + run_down[near] >= t)
                first[hit & (first < 0)] = i
        up += run_up
        down += run_down
        new = np.flatnonzero(first >= 0)
        return first[new], near[new]

    def _rejected(self, pairs: np.ndarray, ln: np.ndarray, up: np.ndarray, g: np.ndarray,  # noqa: PLR0913, PLR0917
                  which: np.ndarray, at: np.ndarray, new: np.ndarray) -> None:
        """Record the candidates ``new`` of a piece (``pairs`` with ``ln`` candidates each, packed
        capitals ``up`` and grid indices ``g``) just rejected after ``at`` values (their segment
        ``which``): each such pair's latest rejections and the window of its candidates left.
        """
        self.dead += new.size
        starts = np.r_[0, np.flatnonzero(np.diff(which)) + 1]
        who = pairs[which[starts]]
        latest = np.maximum.reduceat(at, starts)
        at_latest = at == np.repeat(latest, np.diff(np.r_[starts, which.size]))
        g_new = g[new]
        self.last_at[who] = latest
        self.last_lo[who] = np.minimum.reduceat(np.where(at_latest, g_new, self.grid), starts)
        self.last_hi[who] = np.maximum.reduceat(np.where(at_latest, g_new, -1), starts)
        inside = up > -math.inf
        begins = np.cumsum(ln) - ln
        first = np.minimum.reduceat(np.where(inside, g, self.grid), begins)
        last = np.maximum.reduceat(np.where(inside, g, -1), begins)
        none = first == self.grid
        self.lo[pairs] = np.where(none, 0, first)
        self.hi[pairs] = np.where(none, 0, last + 1)

    def _drop_rejected(self) -> None:
        """Drop the rejected candidates from the packed arrays (and the pairs that have none left)."""
        keep = self.up > -math.inf
        left = np.add.reduceat(keep.view(np.int8), np.cumsum(self.seg_len) - self.seg_len, dtype=np.int64)
        self.up, self.down, self.g = self.up[keep], self.down[keep], self.g[keep]
        self.seg_pair, self.seg_len = self.seg_pair[left > 0], left[left > 0]
        self.dead = 0

    # -- reading --------------------------------------------------------------------------------
    def _scale(self, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        w = self.w[rows]
        return -w, w + w  # low, high - low

    def bounds(self, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """The running intersections (``BettingSequence.bounds``) of the sequences ``rows``, in the
        differences' units: just inside the rejected candidates on either side of those still in the
        sequence; when none is left, the candidates rejected last, moved off the null once it was
        rejected (track_all=False only).
        """
        if self.track_all:
            msg = "bounds needs the candidates' rejections: create the pairs with track_all=False"
            raise ValueError(msg)
        low, scale = self._scale(rows)
        lo_g, hi_g = self.lo[rows], self.hi[rows]
        last = self.grid - 1
        below = self.m[np.maximum(lo_g - 1, 0)]
        above = self.m[np.minimum(hi_g, last)]
        lo = np.where(lo_g > 0, np.nextafter(low + scale * below, math.inf), low)
        hi = np.where(hi_g - 1 < last, np.nextafter(low + scale * above, -math.inf), -low)
        empty = np.flatnonzero(hi_g <= lo_g)
        if empty.size:  # no candidate left: the interval spans those rejected last
            at = np.arange(self.size)[rows][empty]
            e_lo = low[empty] + scale[empty] * self.m[self.last_lo[at]]
            e_hi = low[empty] + scale[empty] * self.m[self.last_hi[at]]
            side = self.null_side[at]
            move = (side != 0) & (e_lo <= 0.0) & (e_hi >= 0.0)
            tiny = math.nextafter(0.0, math.inf)
            up_lo = pymax(e_lo, tiny)
            up_hi = pymax(e_hi, up_lo)
            dn_hi = pymin(e_hi, -tiny)
            dn_lo = pymin(e_lo, dn_hi)
            lo[empty] = np.where(move & (side > 0), up_lo, np.where(move, dn_lo, e_lo))
            hi[empty] = np.where(move & (side > 0), up_hi, np.where(move, dn_hi, e_hi))
        return lo, hi

    def bounds_at(self, alpha: float, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """The e-value intervals at level ``alpha`` from the current capitals
        (``BettingSequence.bounds_at``; track_all=True only): {m : half the larger capital at m < 1/alpha}.
        """
        if not self.track_all:
            msg = "bounds_at needs every candidate's current capital: create the pairs with track_all=True"
            raise ValueError(msg)
        t = math.log(2.0 / alpha)
        low, scale = self._scale(rows)
        up = (self.log_up >= t)[rows]
        down = (self.log_down >= t)[rows]
        top = self.grid - 1 - np.argmax(up[:, ::-1], axis=1)
        bottom = np.argmax(down, axis=1)
        lo = np.where(up.any(axis=1), np.nextafter(low + scale * self.m[top], math.inf), low)
        hi = np.where(down.any(axis=1), np.nextafter(low + scale * self.m[bottom], -math.inf), -low)
        return lo, hi


def agree_intervals(low: np.ndarray, high: np.ndarray, hit: np.ndarray, ahead: np.ndarray, *,
                    exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of gaps made to agree with the decisions ``hit`` (``ahead``: the side of each) -- the
    e-BY intervals of the leaderboard and arena monitors with e-BH -- where the two compare the
    same evidence in other units (the e-value against K / (q k), the log capital against
    log(2K / (q k))) and differ in the last bit: a discovery's interval leaves out 0 on its side
    (``exact``: where the two are the same test -- betting, or the arena's normal mixture), and an
    interval that leaves out 0 for a pair e-BH does not discover is widened to 0 (a superset: still valid).
    """
    out = (low > 0) | (high < 0)
    tiny = math.nextafter(0.0, math.inf)
    move = hit & ~out & exact
    up, down = move & ahead, move & ~ahead
    widen = ~hit & out
    new_low = np.where(up, tiny, np.where(down, pymin(low, -tiny), np.where(widen, pymin(low, 0.0), low)))
    new_high = np.where(up, pymax(high, tiny), np.where(down, -tiny, np.where(widen, pymax(high, 0.0), high)))
    return new_low, new_high
