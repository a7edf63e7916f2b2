"""Which items to run: a stratified random subset with Neyman allocation, sized for a budget, a
target half-width or a gap to resolve, written as a file of item ids and weights.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._core.errors import DataError
from .._core.files import MB, allow_long_csv_fields, check_size, csv_error_text, limit, read_regular_bytes
from .._core.params import public
from .._core.results import Result
from .._core.validation import as_float_array, as_rng, check_open_unit, check_option
from .._kernel.quantiles import k_constant, level_quantile
from .._kernel.verdict import check_cluster_labels

__all__ = ["SubsetPlan", "read_subset_plan", "subset_plan"]

#: the columns of a plan file, in order
PLAN_COLUMNS = ("item_id", "stratum", "weight", "order")

#: items run per stratum at least (the fewest that estimate its variance), or all of a smaller one
MIN_PER_STRATUM = 2


@dataclass(frozen=True, slots=True, repr=False)
class SubsetPlan(Result):
    """Items to run, and what they are expected to give (see :func:`subset_plan`).

    Attributes
    ----------
    items : list of str
        The ids of the items to run, in a random run order (run them in this order to stop early
        with :class:`SubsetSequence`, which needs a simple random sample: one stratum).
    positions : list of int
        Their positions among the benchmark's items (empty for a plan read from a file).
    strata : list of str
        Each item's stratum.
    weights : list of float
        Each item's design weight N_h / n_h (the items of its stratum it stands for); a stratum's
        weights add up to its size, which is how a plan file carries the design.
    allocation : list of dict
        Per stratum: ``stratum``, ``items`` (N_h), ``run`` (n_h), ``sd`` (the S_h the allocation used).
    n, n_items : int
        Items to run, and items in the benchmark.
    allocation_method : str
        ``"neyman"`` (n_h proportional to N_h S_h), ``"proportional"`` (to N_h) or
        ``"simple random"`` (one stratum).
    sd_source : str
        Where S_h came from: the reference models' residuals after the leaderboard's mean (the
        difference estimator's), their scores, a pilot run, or the worst case of a 0/1 score (1/2).
    expected_se, expected_half_width : float
        Of the score's estimate with this plan, at these S_h (a plan, not a promise: the interval
        reported after the run is the one that counts).
    target_of : str
        ``"population"`` or ``"benchmark"``: what the expected interval is of.
    target : str
        What sized it: a budget, a half-width or a gap at a power.
    target_met : bool
        False when the budget (or the benchmark) is too small for the half-width or gap asked for.
    confidence_level : float
    """

    items: list[str]
    positions: list[int]
    strata: list[str]
    weights: list[float]
    allocation: list[dict[str, Any]]
    n: int
    n_items: int
    allocation_method: str
    sd_source: str
    expected_se: float
    expected_half_width: float
    target: str
    target_met: bool
    target_of: str
    confidence_level: float

    _repr_fields = ("n", "n_items", "allocation_method", "expected_half_width", "target", "target_met")

    def to_csv(self) -> str:
        """The plan file: one row per item to run (item_id, stratum, weight, order)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(PLAN_COLUMNS)
        for k, (item, stratum, weight) in enumerate(zip(self.items, self.strata, self.weights, strict=True)):
            writer.writerow((item, stratum, repr(float(weight)), k + 1))
        return buf.getvalue()

    def write(self, path: str | Path, *, inputs: tuple[Any, ...] = ()) -> Path | str:
        """Write the plan file atomically (never over or inside one of ``inputs``, never through a
        link; ``"-"``: standard output); returns the path.
        """
        self._write_text(str(path), self.to_csv(), inputs=inputs)
        return path if str(path) == "-" else Path(path)


def _pooled_residual_var(y: np.ndarray, x: np.ndarray, codes: np.ndarray, n_strata: int) -> np.ndarray:
    """Per-stratum variance of the residuals of y on x (one slope, stratum intercepts)."""
    counts = np.bincount(codes, minlength=n_strata).astype(float)
    ym = np.bincount(codes, weights=y, minlength=n_strata) / np.maximum(counts, 1.0)
    xm = np.bincount(codes, weights=x, minlength=n_strata) / np.maximum(counts, 1.0)
    dy, dx = y - ym[codes], x - xm[codes]
    sxx = float(dx @ dx)
    slope = float(dx @ dy) / sxx if sxx > 0 else 0.0
    e = dy - slope * dx
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(codes, weights=e * e, minlength=n_strata) / (counts - 1.0)


def _stratum_sd(codes: np.ndarray, n_strata: int, reference: Any, pilot: Any, pilot_items: Any,
                control: bool) -> tuple[np.ndarray, str, int, float]:
    """(S_h, where it came from, control variates the estimate will fit, a score's variance over
    all items -- the population target's first phase).
    """
    ref = None
    if reference is not None:
        ref = as_float_array(reference, "reference")
        ref = ref.reshape(ref.shape[0], -1)
        if ref.shape[0] != codes.size or not np.all(np.isfinite(ref)):
            msg = f"`reference` must be finite scores on every item ({codes.size} rows); got {ref.shape}."
            raise ValueError(msg)
    use_control = bool(control) and ref is not None
    if pilot is not None:
        y = as_float_array(pilot, "pilot").reshape(-1)
        pos = np.asarray(pilot_items)
        if pos.shape != y.shape or not np.issubdtype(pos.dtype, np.integer) or y.size < 2:
            msg = "`pilot` needs `pilot_items`: the positions of its (at least 2) items, one per value."
            raise ValueError(msg)
        if pos.min() < 0 or pos.max() >= codes.size or np.unique(pos).size != pos.size:
            msg = f"`pilot_items` must be distinct positions in [0, {codes.size})."
            raise ValueError(msg)
        pc = codes[pos]
        if use_control and ref is not None:
            var = _pooled_residual_var(y, ref.mean(axis=1)[pos], pc, n_strata)
            source = "a pilot run, residuals after the leaderboard's mean"
        else:
            counts = np.bincount(pc, minlength=n_strata).astype(float)
            mean = np.bincount(pc, weights=y, minlength=n_strata) / np.maximum(counts, 1.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                var = np.bincount(pc, weights=(y - mean[pc]) ** 2, minlength=n_strata) / (counts - 1.0)
            source = "a pilot run"
        pooled = float(np.var(y, ddof=1))
        var = np.where(np.isfinite(var), var, pooled)  # a stratum with < 2 pilot items: the pooled variance
        return np.sqrt(np.maximum(var, 0.0)), source, int(use_control), pooled
    if ref is not None:
        k = ref.shape[1]
        if use_control and k >= 2:
            total = ref.sum(axis=1)
            var = np.mean([_pooled_residual_var(ref[:, j], (total - ref[:, j]) / (k - 1), codes, n_strata)
                           for j in range(k)], axis=0)
            source = f"{k} reference models, residuals after the other models' mean"
        else:
            counts = np.bincount(codes, minlength=n_strata).astype(float)
            var = np.zeros(n_strata)
            for j in range(k):
                mean = np.bincount(codes, weights=ref[:, j], minlength=n_strata) / counts
                with np.errstate(invalid="ignore", divide="ignore"):
                    var += np.bincount(codes, weights=(ref[:, j] - mean[codes]) ** 2, minlength=n_strata) / (counts - 1)
            var /= k
            source = f"{k} reference model(s)"
        var = np.where(np.isfinite(var), var, 0.0)  # a one-item stratum: run in full anyway
        return np.sqrt(np.maximum(var, 0.0)), source, int(use_control), float(np.mean(ref.var(axis=0, ddof=1)))
    return np.full(n_strata, 0.5), "the worst case of a 0/1 score (sd 1/2)", 0, 0.25


def allocate(n: int, sizes: np.ndarray, sd: np.ndarray, *, minimum: int = MIN_PER_STRATUM) -> np.ndarray:
    """Integer n_h adding up to ``n``, proportional to ``sizes * sd`` within [min(minimum, N_h), N_h]."""
    sizes = np.asarray(sizes, dtype=float)
    lower, upper = np.minimum(float(minimum), sizes), sizes
    if n < lower.sum() or n > upper.sum():
        msg = f"{n} items cannot be spread over {sizes.size} strata of {int(upper.sum())} items " \
              f"(at least {int(lower.sum())}: {minimum} per stratum or all of a smaller one)"
        raise ValueError(msg)
    score = sizes * np.asarray(sd, dtype=float)
    if not np.any(score > 0):
        score = sizes.copy()

    def spread(c: float) -> np.ndarray:
        return np.asarray(np.clip(c * score, lower, upper), dtype=float)

    lo, hi = 0.0, 1.0
    while spread(hi).sum() < n:
        hi *= 2.0
        if hi > 1e300:
            break
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spread(mid).sum() < n else (lo, mid)
    cont = spread(hi)
    base = np.floor(cont + 1e-9)
    rest = int(n - base.sum())
    if rest > 0:
        room = np.flatnonzero(base < upper)
        order = room[np.argsort(-(cont - base)[room], kind="stable")]
        base[order[:rest]] += 1
    elif rest < 0:
        room = np.flatnonzero(base > lower)
        order = room[np.argsort((cont - base)[room], kind="stable")]
        base[order[:-rest]] -= 1
    return base.astype(np.int64)


def _variance(run: np.ndarray, sizes: np.ndarray, sd: np.ndarray, p: int, first: float = 0.0) -> float:
    """Expected variance of the estimate with n_h = ``run`` (times the fitted coefficients' price),
    plus ``first`` (the population target's S_y^2 / N).
    """
    weight = sizes / sizes.sum()
    a = np.where(run < sizes, weight**2 * (1.0 - run / sizes) / np.maximum(run, 1), 0.0)
    n, h = int(run.sum()), sizes.size
    factor = (n - h) / (n - h - p) if n - h - p > 0 else math.inf
    return float((a * sd**2).sum() * factor + first)


def _items_and_strata(items: Any, strata: Any) -> tuple[list[str], np.ndarray, list[str]]:
    """The items' ids, their strata codes (0..H-1) and the strata's labels."""
    if isinstance(items, (int, np.integer)):
        check_size(int(items), "LLM_POWER_MAX_ITEMS", "`items` (a plan holds an id per item)")
        ids = [str(k) for k in range(int(items))]
    else:
        ids = [str(v) for v in items]
        if len(set(ids)) != len(ids):
            msg = "`items` must be distinct ids."
            raise ValueError(msg)
    if len(ids) < 2:
        msg = f"a benchmark of {len(ids)} item(s) has no subset to plan."
        raise ValueError(msg)
    if strata is None:
        return ids, np.zeros(len(ids), dtype=np.int64), ["all items"]
    codes, _ = check_cluster_labels(strata, len(ids), name="strata")
    shown = np.asarray(strata, dtype=object)
    return ids, codes, [str(shown[i]) for i in np.unique(codes, return_index=True)[1]]


def _smallest(lo: int, hi: int, good_enough: Any) -> tuple[int, bool]:
    """The smallest n in [lo, hi] that is good enough (a monotone test), and whether one is."""
    if good_enough(lo):
        return lo, True
    if not good_enough(hi):
        return hi, False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if good_enough(mid) else (mid, hi)
    return hi, True


@public
def subset_plan(items: Any, *, strata: Any = None, budget: int | None = None, half_width: float | None = None,
                gap: float | None = None, power: float = 0.8, reference: Any = None, pilot: Any = None,
                pilot_items: Any = None, control: bool = True, allocation: str = "neyman",
                target: str = "population", confidence_level: float = 0.95, rng: Any = None) -> SubsetPlan:
    """Plan which items to run: a stratified random subset sized for a budget or a precision.

    The items of each stratum are drawn at random without replacement, ``n_h`` of its ``N_h``;
    Neyman allocation takes ``n_h`` proportional to ``N_h S_h`` (Cochran 1977, §5.5), the fewest
    items for a given variance, with ``S_h`` the spread of a model's scores in the stratum --
    after the leaderboard's mean when the estimate will use it as a control variate (the
    default with ``reference``), taken from the other models' results on every item or from a
    pilot run. Every stratum gets at least 2 items (or all of a smaller one), so that its
    variance can be estimated. The size is the ``budget``, or the fewest items whose expected
    interval has the ``half_width`` asked for, or whose gap of ``gap`` against a model with known
    results is resolved with probability ``power`` (at the level of ``confidence_level``) -- the
    smaller of the two when a budget is given too.

    Parameters
    ----------
    items : int or sequence of str
        The benchmark's items: their number, or their ids.
    strata : array_like, optional
        The stratum (cluster, category, subject) of every item; default one (a simple random sample).
    budget : int, optional
        Items that can be run at most.
    half_width : float, optional
        The half-width wanted for the score's interval (score units: 0.02 is two points).
    gap : float, optional
        A gap to resolve against a model whose results are known, with probability ``power``.
    power : float, default 0.8
    reference : array_like, optional
        Other models' scores on every item (N x K): the spread of a model's scores per stratum.
    pilot, pilot_items : array_like, optional
        A pilot run of the model (values) and its items' positions: the spread, instead.
    control : bool, default True
        The estimate will use the leaderboard's mean as a control variate: plan with the
        residual spread (only with ``reference``).
    allocation : {"neyman", "proportional"}, default "neyman"
    target : {"population", "benchmark"}, default "population"
        What the interval will be of (as in :func:`subset_estimate`): the population target's
        variance also holds the benchmark's own sampling, so a half-width below that of a full
        run cannot be met.
    confidence_level : float, default 0.95
    rng : int or numpy Generator, optional
        The draw (same seed, same plan).

    Returns
    -------
    SubsetPlan
        ``items`` to run (a random order), their ``weights``, the ``allocation`` and the
        expected half-width; :meth:`SubsetPlan.write` writes the plan file.

    Examples
    --------
    >>> import numpy as np
    >>> import llm_power as lp
    >>> rng = np.random.default_rng(0)
    >>> subject = np.repeat(["easy", "hard"], [3000, 1000])
    >>> p = np.where(subject == "easy", 0.97, 0.5)
    >>> others = (rng.random((4000, 6)) < p[:, None]).astype(float)
    >>> plan = lp.subset_plan(4000, strata=subject, budget=400, reference=others, control=False, rng=1)
    >>> [(a["stratum"], a["run"]) for a in plan.allocation]     # proportional would run 300 and 100
    [('easy', 203), ('hard', 197)]
    """
    level = check_open_unit(confidence_level, "confidence_level")
    method = check_option(allocation, "allocation", ("neyman", "proportional"))
    ids, codes, labels = _items_and_strata(items, strata)
    n_items = len(ids)
    sizes = np.bincount(codes).astype(float)
    from ._design import TARGETS

    goal = check_option(target, "target", TARGETS)
    sd, source, p, total_var = _stratum_sd(codes, sizes.size, reference, pilot, pilot_items, control)
    first = total_var / n_items if goal == "population" else 0.0
    shape = sd if method == "neyman" else np.ones_like(sd)
    smallest = int(np.minimum(MIN_PER_STRATUM, sizes).sum()) + (1 if p else 0)
    if budget is not None and (int(budget) != budget or budget < smallest):
        strata_word = "1 stratum" if sizes.size == 1 else f"{sizes.size} strata"
        why = f"2 items per stratum or all of a smaller one, over {strata_word}" + (
            ", and 1 for the control variate" if p else "")
        msg = f"`budget` must be a whole number of at least {smallest} ({why}); got {budget!r}."
        raise ValueError(msg)
    power = check_open_unit(power, "power")
    for value, name in ((half_width, "half_width"), (gap, "gap")):
        if value is not None and not (np.isfinite(value) and value > 0):
            msg = f"`{name}` must be positive; got {value!r}."
            raise ValueError(msg)
    if half_width is not None and gap is not None:
        msg = "give `half_width` or `gap`, not both."
        raise ValueError(msg)
    cap = n_items if budget is None else min(int(budget), n_items)

    def spread_for(n: int) -> np.ndarray:
        return allocate(n, sizes, shape)

    def good_enough(n: int) -> bool:
        var = _variance(spread_for(n), sizes, sd, p, first)
        df = max(n - sizes.size - p, 1)
        if half_width is not None:
            return float(level_quantile(level, "two-sided", df)) * math.sqrt(var) <= half_width
        return math.sqrt(float(k_constant(1.0 - level, power, "two-sided", df)) * var) <= float(gap or 0.0)

    if half_width is None and gap is None:
        if budget is None:
            msg = "give a `budget`, a `half_width` or a `gap` to size the plan."
            raise ValueError(msg)
        n, met = cap, True
        target = f"a budget of {int(budget)} items"
    else:
        target = (f"a half-width of {half_width:g}" if half_width is not None
                  else f"a gap of {gap:g} resolved with power {power:g}")
        n, met = _smallest(smallest, cap, good_enough)
        if budget is not None:
            target += f" within a budget of {int(budget)} items"
    run = spread_for(n)
    gen = as_rng(rng)
    chosen = np.concatenate([gen.choice(np.flatnonzero(codes == h), int(k), replace=False)
                             for h, k in enumerate(run)]).astype(np.int64)
    chosen = chosen[gen.permutation(chosen.size)]
    var = _variance(run, sizes, sd, p, first)
    df = max(n - sizes.size - p, 1)
    weights = (sizes / np.maximum(run, 1))[codes[chosen]]
    return SubsetPlan(
        items=[ids[i] for i in chosen], positions=chosen.tolist(), strata=[labels[c] for c in codes[chosen]],
        weights=[float(w) for w in weights],
        allocation=[{"stratum": labels[h], "items": int(sizes[h]), "run": int(run[h]), "sd": float(sd[h])}
                    for h in range(sizes.size)],
        n=int(n), n_items=n_items, allocation_method="simple random" if sizes.size == 1 else method,
        sd_source=source, expected_se=math.sqrt(var),
        expected_half_width=float(level_quantile(level, "two-sided", df)) * math.sqrt(var), target=target,
        target_met=bool(met), target_of=goal, confidence_level=level)


def _plan_rows(name: str) -> list[list[str]]:
    """The CSV rows of a plan file: a regular file only (a FIFO or ``/dev/zero`` is refused, never
    read), at most ``LLM_POWER_MAX_TEXT_MB``, fields up to the readers' CSV field limit; every
    failure is one DataError naming the file (and the line).
    """
    data = read_regular_bytes(name, limit("LLM_POWER_MAX_TEXT_MB") * MB, limit_name="LLM_POWER_MAX_TEXT_MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        msg = f"cannot read the plan (not UTF-8 text: byte {exc.start})"
        raise DataError(msg, file=name) from None
    allow_long_csv_fields()
    reader = csv.reader(io.StringIO(text))
    try:
        return list(reader)
    except csv.Error as exc:
        raise DataError(csv_error_text(exc), file=name, record=f"line {reader.line_num}") from None


def read_subset_plan(path: str | Path) -> SubsetPlan:
    """Read a plan file written by :meth:`SubsetPlan.write` (or by hand: columns item_id, stratum,
    weight; order optional). Each stratum's size is the sum of its weights.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    SubsetPlan
        With the file's items, strata and weights; ``positions`` empty (match the ids to a
        results file), ``expected_*`` NaN.

    Examples
    --------
    >>> import llm_power as lp, tempfile, os
    >>> plan = lp.subset_plan(100, budget=10, rng=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "plan.csv")
    >>> _ = plan.write(path)
    >>> back = lp.read_subset_plan(path)
    >>> back.items == plan.items, back.allocation[0]["items"]
    (True, 100)
    """
    name = str(path)
    rows = _plan_rows(name)
    if not rows:
        msg = "the plan file is empty"
        raise DataError(msg, file=name)
    header = [h.strip() for h in rows[0]]
    missing = [c for c in PLAN_COLUMNS[:3] if c not in header]
    if missing:
        msg = f"not a plan file: no column {', '.join(missing)} (columns: {', '.join(map(repr, header))})"
        raise DataError(msg, file=name)
    col = {c: header.index(c) for c in PLAN_COLUMNS if c in header}
    items, strata, weights, orders = [], [], [], []
    for k, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            msg = f"{len(row)} fields where the header has {len(header)}"
            raise DataError(msg, file=name, record=f"line {k}")
        try:
            w = float(row[col["weight"]])
        except ValueError:
            msg = f"weight {row[col['weight']]!r} is not a number"
            raise DataError(msg, file=name, record=f"line {k}", field="weight") from None
        if not (math.isfinite(w) and w >= 1.0):
            msg = f"weight {w!r} must be at least 1 (N_h / n_h)"
            raise DataError(msg, file=name, record=f"line {k}", field="weight")
        items.append(row[col["item_id"]])
        strata.append(row[col["stratum"]])
        weights.append(w)
        orders.append(row[col["order"]] if "order" in col else str(k))
    if len(items) < 2:
        msg = f"a plan needs at least 2 items; this one has {len(items)}"
        raise DataError(msg, file=name)
    if len(set(items)) != len(items):
        from collections import Counter

        dup = next(i for i, count in Counter(items).items() if count > 1)
        msg = f"item {dup!r} is listed twice"
        raise DataError(msg, file=name, field="item_id")
    allocation: list[dict[str, Any]] = []
    for label in dict.fromkeys(strata):
        ws = [w for w, s in zip(weights, strata, strict=True) if s == label]
        size = sum(ws)
        if abs(size - round(size)) > 1e-6 * max(size, 1.0) or max(ws) - min(ws) > 1e-9 * max(ws):
            msg = (f"stratum {label!r}: its weights ({min(ws):g} to {max(ws):g}) are not one N_h / n_h "
                   "adding up to a whole number of items")
            raise DataError(msg, file=name, field="weight")
        allocation.append({"stratum": label, "items": round(size), "run": len(ws), "sd": math.nan})
    n_items = sum(int(a["items"]) for a in allocation)
    try:
        check_size(n_items, "LLM_POWER_MAX_ITEMS", "the benchmark's size its weights add up to")
    except ValueError as exc:
        raise DataError(str(exc), file=name, field="weight") from None
    return SubsetPlan(items=items, positions=[], strata=strata, weights=weights, allocation=allocation,
                      n=len(items), n_items=n_items,
                      allocation_method="simple random" if len(allocation) == 1 else "from the file",
                      sd_source="", expected_se=math.nan, expected_half_width=math.nan, target=f"the file {name}",
                      target_met=True, target_of="", confidence_level=0.95)
