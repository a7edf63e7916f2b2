"""The design shared by the subset estimators: which items were run, their strata, and the control
variates known on every item -- checked once, then estimated through the kernel
(:func:`llm_power._kernel.survey.stratified_estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.files import check_size
from .._core.validation import as_float_array
from .._kernel.survey import stratified_estimate
from .._kernel.verdict import check_cluster_labels

__all__ = ["TARGETS", "Design", "build_design", "check_fit", "controls", "spreadless"]

#: what a subset estimate is of: the mean over the population of questions the benchmark's items
#: are a sample of (what compare and diagnose test), or the benchmark's own mean over its N items
TARGETS = ("population", "benchmark")


def controls(reference: Any, predictions: Any) -> tuple[np.ndarray | None, list[str]]:
    """The control variates on every item (N x p): the leaderboard's per-item mean of ``reference``
    (N x K) and/or ``predictions`` (N); None without either.
    """
    columns, names = [], []
    for value, name in ((reference, "reference"), (predictions, "predictions")):
        if value is None:
            continue
        arr = as_float_array(value, name)
        if arr.ndim == 0 or arr.size == 0:
            msg = f"`{name}` must hold a value per item; got {arr.shape}."
            raise ValueError(msg)
        arr = arr.reshape(arr.shape[0], -1)
        if name == "predictions" and arr.shape[1] != 1:
            msg = f"`predictions` must be one value per item; got {arr.shape}."
            raise ValueError(msg)
        if not np.all(np.isfinite(arr)):
            msg = f"`{name}` must be finite on every item (no NaN)."
            raise ValueError(msg)
        columns.append(arr.mean(axis=1))
        names.append(name)
    sizes = sorted({c.size for c in columns})
    if len(sizes) > 1:
        msg = f"`reference` and `predictions` must cover the same items; got {sizes} rows."
        raise ValueError(msg)
    return (np.stack(columns, axis=1) if columns else None), names


@dataclass(frozen=True)
class Design:
    """Items run (positions), the strata of every item, and the control variates."""

    positions: np.ndarray
    n_items: int
    codes: np.ndarray  # stratum of every item (0..H-1)
    labels: list[Any]
    pop_counts: np.ndarray  # N_h
    x: np.ndarray | None  # (N, p) control variates, or None

    @property
    def n(self) -> int:
        """Items run."""
        return int(self.positions.size)

    def estimate(self, y: np.ndarray, *, use_controls: bool = True,
                 population: bool = False) -> tuple[float, float, float, list[float]]:
        """(estimate, se, df, coefficients) for the run items' values ``y`` (in ``positions`` order)."""
        run_codes = self.codes[self.positions]
        if self.x is None or not use_controls:
            est, se, df, _ = stratified_estimate(y, run_codes, self.pop_counts, population=population)
            return float(est), float(se), float(df), []
        xbar = np.stack([np.bincount(self.codes, weights=col, minlength=self.pop_counts.size) for col in self.x.T],
                        axis=1) / self.pop_counts[:, None]
        est, se, df, coef = stratified_estimate(y, run_codes, self.pop_counts, self.x[self.positions], xbar,
                                                population=population)
        return float(est), float(se), float(df), [float(c) for c in np.atleast_1d(coef)]


def spreadless(se: float, values: np.ndarray) -> bool:
    """Whether a standard error is no spread at all, only rounding: at most 1e-10 of the largest |value|
    (residuals of an exact fit are ~1e-16 of it, not exactly 0).
    """
    scale = float(np.max(np.abs(values))) if np.size(values) else 0.0
    return bool(se <= 1e-10 * scale) or se == 0


def check_fit(se: float, n: int, p: int) -> None:
    """The error when the control variates leave a sampled stratum no residual degrees of freedom."""
    if not np.isfinite(se):
        msg = (f"{n} items cannot estimate the variance with {p} control variate(s): the fit uses up the items "
               "of a sampled stratum; run more items of the sampled strata, or use fewer control variates.")
        raise ValueError(msg)


def build_design(sampled: Any, n_values: int, *, x: np.ndarray | None, strata: Any, n_items: int | None) -> Design:
    """Check the items run against the benchmark's size, strata and control variates."""
    idx = np.asarray(sampled)
    if idx.ndim != 1 or idx.size != n_values or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        msg = f"`sampled` must be {n_values} integer item positions, one per score; got {idx.shape} of {idx.dtype}."
        raise ValueError(msg)
    sizes = {int(x.shape[0])} if x is not None else set()
    if strata is not None:
        sizes.add(len(strata))
    if n_items is not None:
        check_size(int(n_items), "LLM_POWER_MAX_ITEMS", "`n_items` (the design holds each item's stratum)")
        sizes.add(int(n_items))
    if not sizes:
        msg = "give `n_items` (the benchmark's size), or `reference` / `predictions` / `strata` on every item."
        raise ValueError(msg)
    if len(sizes) > 1:
        msg = (f"the benchmark's size is not one number: {sorted(sizes)} items among `n_items`, the control "
               "variates and `strata` (each must cover every item of the benchmark).")
        raise ValueError(msg)
    n_pop = sizes.pop()
    n = idx.size
    if n < 2 or np.unique(idx).size != n or idx.min() < 0 or idx.max() >= n_pop:
        msg = (f"`sampled` must be at least 2 distinct positions in [0, {n_pop}); "
               f"got {n} ({np.unique(idx).size if n else 0} distinct).")
        raise ValueError(msg)
    if strata is None:
        codes, labels = np.zeros(n_pop, dtype=np.int64), ["all items"]
    else:
        codes, _ = check_cluster_labels(strata, n_pop, name="strata")
        shown = np.asarray(strata, dtype=object)
        labels = [shown[i] for i in np.unique(codes, return_index=True)[1]]
    pop_counts = np.bincount(codes).astype(float)
    run_counts = np.bincount(codes[idx], minlength=pop_counts.size)
    for h, (big, small) in enumerate(zip(pop_counts, run_counts, strict=True)):
        if small == 0 or (small < 2 and small < big):
            msg = (f"stratum {labels[h]!r} has {int(big)} item(s) and {int(small)} run: run at least 2 of each "
                   "stratum (or all of it) for its variance")
            raise ValueError(msg)
    return Design(positions=idx.astype(np.int64), n_items=int(n_pop), codes=codes, labels=labels,
                  pop_counts=pop_counts, x=x)
