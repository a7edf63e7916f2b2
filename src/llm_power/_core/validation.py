"""Shared input checks with one message template.

Every check raises ``ValueError`` (bad value) or ``TypeError`` (bad type) with the message
"`name` must be <requirement>; got <value>." where ``name`` is the caller's parameter name.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from .errors import DataError, warn

ALTERNATIVES = ("two-sided", "less", "greater")


def _show(value: Any) -> str:
    """Short representation of an offending value for a message."""
    if isinstance(value, np.ndarray):
        if value.size == 1:
            return repr(value.reshape(-1)[0].item())
        return f"an array of shape {value.shape}"
    if isinstance(value, np.generic):
        return repr(value.item())
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fail(name: str, requirement: str, got: Any, *, exc: type[Exception] = ValueError) -> Exception:
    """Build (not raise) the standard exception for parameter ``name``."""
    return exc(f"`{name}` must be {requirement}; got {_show(got)}.")


def _where(mask: np.ndarray, values: np.ndarray) -> str:
    """Describe the first offending element of an array check."""
    idx = np.argwhere(mask)[0]
    value = values[tuple(idx)] if values.ndim else values
    if values.ndim == 0:
        return _show(value)
    position = int(idx[0]) if len(idx) == 1 else tuple(int(i) for i in idx)
    return f"{_show(value)} at index {position}"


def check_option(value: Any, name: str, valid: Iterable[str]) -> str:
    """Check that ``value`` is one of the strings ``valid`` (case-sensitive)."""
    options = sorted(valid)
    listed = ", ".join(repr(o) for o in options)
    if not isinstance(value, str):
        raise fail(name, f"one of {listed}", value, exc=TypeError)
    if value not in options:
        raise fail(name, f"one of {listed}", value)
    return value


def check_alternative(value: Any, name: str = "alternative") -> str:
    """Check a scipy-style ``alternative``."""
    return check_option(value, name, ALTERNATIVES)


def check_open_unit(value: Any, name: str) -> float:
    """Check a scalar strictly inside (0, 1), e.g. a confidence level or alpha."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise fail(name, "a number in (0, 1)", value, exc=TypeError)
    out = float(value)
    if not 0.0 < out < 1.0:
        raise fail(name, "in (0, 1)", out)
    return out


def check_confidence_level(value: Any, name: str = "confidence_level") -> float:
    """Check a confidence level in (0, 1)."""
    return check_open_unit(value, name)


def as_float_array(value: Any, name: str) -> np.ndarray:
    """Convert to a float array, with a clear error for non-numeric input."""
    if isinstance(value, (str, bytes)):
        raise fail(name, "numeric", value, exc=TypeError)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(name, "numeric", value, exc=TypeError) from None
    return arr


def check_probabilities(value: Any, name: str, *, closed: bool = True) -> np.ndarray:
    """Check probabilities in [0, 1] (``closed=True``) or (0, 1); returns a float array."""
    arr = as_float_array(value, name)
    if closed:
        bad = ~((arr >= 0.0) & (arr <= 1.0))
        requirement = "in [0, 1]"
    else:
        bad = ~((arr > 0.0) & (arr < 1.0))
        requirement = "in (0, 1)"
    if np.any(bad):
        msg = f"`{name}` must be {requirement}; got {_where(bad, arr)}."
        raise ValueError(msg)
    return arr


#: the largest count handled: every integer up to 2**53 is exact in floating point (no wrap-around)
MAX_COUNT = 2**53


def check_integers(value: Any, name: str, *, minimum: int = 0) -> np.ndarray:
    """Check whole numbers >= ``minimum``; returns an int64 array (any shape)."""
    if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.dtype == bool):
        raise fail(name, "an integer or an array of integers", value, exc=TypeError)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise fail(name, "an integer or an array of integers", value, exc=TypeError) from None
    if arr.dtype.kind == "O" and all(isinstance(v, numbers.Integral) for v in arr.reshape(-1).tolist()):
        msg = (
            f"`{name}` must be at most 2**53 = {MAX_COUNT:,} (counts beyond it are not exact in "
                         f"floating point); got {value!r}."
        )
        raise ValueError(msg)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise fail(name, "an integer or an array of integers", value, exc=TypeError)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if np.any(bad):
            msg = f"`{name}` must be whole numbers; got {_where(bad, arr)}."
            raise ValueError(msg)
    bad = arr < minimum
    if np.any(bad):
        requirement = "non-negative" if minimum == 0 else f">= {minimum}"
        msg = f"`{name}` must be {requirement}; got {_where(bad, arr)}."
        raise ValueError(msg)
    if arr.dtype.kind == "O" or (arr.dtype.kind == "u" and np.any(arr > MAX_COUNT)) or np.any(arr > MAX_COUNT):
        msg = (
            f"`{name}` must be at most 2**53 = {MAX_COUNT:,} (counts beyond it are not exact in "
                         f"floating point); got {_where(np.asarray(arr > MAX_COUNT), arr)}."
        )
        raise ValueError(msg)
    return arr.astype(np.int64)


def check_counts(k: Any, n: Any, *, k_name: str = "k", n_name: str = "n") -> tuple[np.ndarray, np.ndarray]:
    """Check event counts ``k`` out of ``n`` trials: integers, 0 <= k <= n, n >= 1.

    Returns the two int64 arrays broadcast to a common shape.
    """
    k_arr = check_integers(k, k_name, minimum=0)
    n_arr = check_integers(n, n_name, minimum=1)
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError:
        msg = f"`{k_name}` and `{n_name}` must have broadcastable shapes; got {np.shape(k)} and {np.shape(n)}."
        raise ValueError(
            msg
        ) from None
    bad = k_arr > n_arr
    if np.any(bad):
        idx = np.argwhere(bad)[0]
        at = "" if k_arr.ndim == 0 else f" at index {int(idx[0]) if len(idx) == 1 else tuple(int(i) for i in idx)}"
        msg = (
            f"`{k_name}` must not exceed `{n_name}`; got {k_name}={int(k_arr[tuple(idx)])} > "
            f"{n_name}={int(n_arr[tuple(idx)])}{at}."
        )
        raise ValueError(
            msg
        )
    return k_arr, n_arr


def check_positive(value: Any, name: str) -> np.ndarray:
    """Check strictly positive finite numbers; returns a float array."""
    arr = as_float_array(value, name)
    bad = ~(np.isfinite(arr) & (arr > 0))
    if np.any(bad):
        msg = f"`{name}` must be positive and finite; got {_where(bad, arr)}."
        raise ValueError(msg)
    return arr


def as_rng(rng: Any) -> np.random.Generator:
    """Turn ``rng`` (None, int seed, SeedSequence or Generator) into a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(rng, bool):
            msg = "rng"
            raise fail(msg, "None, an int seed or a numpy.random.Generator", rng, exc=TypeError)
        return np.random.default_rng(cast(Any, rng))
    msg = "rng"
    raise fail(msg, "None, an int seed or a numpy.random.Generator", rng, exc=TypeError)


def scalar_or_array(arr: np.ndarray) -> Any:
    """Return a Python float for 0-d input, the array otherwise ("scalars in, scalars out")."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return float(arr)
    return arr


def check_paired(a: Any, b: Any, *, a_name: str = "a", b_name: str = "b",
                 min_items: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Check two aligned 1-D score arrays: same length, finite, at least ``min_items`` items.

    Returns float arrays. Booleans are accepted (as 0/1).
    """
    arrays = []
    for value, name in ((a, a_name), (b, b_name)):
        arr = as_float_array(value, name)
        if arr.ndim != 1:
            msg = f"`{name}` must be a 1-D array of per-item scores; got shape {arr.shape}."
            raise ValueError(msg)
        bad = ~np.isfinite(arr)
        if np.any(bad):
            msg = (
                f"`{name}` must contain finite scores (no NaN or inf); got {_where(bad, arr)} "
                "(drop or score the missing items first)."
            )
            raise ValueError(
                msg
            )
        arrays.append(arr)
    a_arr, b_arr = arrays
    if a_arr.shape[0] != b_arr.shape[0]:
        msg = (
            f"`{a_name}` and `{b_name}` must be aligned per-item scores of the same length; "
            f"got {a_arr.shape[0]} and {b_arr.shape[0]} items."
        )
        raise ValueError(
            msg
        )
    if a_arr.shape[0] < min_items:
        msg = f"need at least {min_items} items; got {a_arr.shape[0]}."
        raise ValueError(msg)
    with np.errstate(over="ignore", invalid="ignore"):
        d = a_arr - b_arr
        spread = float(np.sum((d - d.mean()) ** 2)) if np.all(np.isfinite(d)) else math.inf
    if not math.isfinite(spread):  # the rule diagnose has: an overflow is bad data, never a NaN verdict
        msg = ("the score differences overflow: scores are too large to compare (rescale them, e.g. divide by "
               "their largest absolute value)")
        raise DataError(msg)
    return a_arr, b_arr


def is_binary(*arrays: np.ndarray) -> bool:
    """True when every value of every array is 0 or 1."""
    return all(bool(np.all((arr == 0) | (arr == 1))) for arr in arrays)


def clean_binary_pair(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are aligned, non-empty 1-D numpy arrays of 0/1 (bool, integer or float):
    then every check of :func:`check_paired` and :func:`check_binary` passes and may be skipped (a
    value that is not 0/1, NaN included, makes it False, and the full checks name it).
    """
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.ndim != 1 or a.shape != b.shape:
        return False
    if a.size == 0 or a.dtype.kind not in "buif" or b.dtype.kind not in "buif":
        return False
    return all(x.dtype.kind == "b" or bool(((x == 0) | (x == 1)).all()) for x in (a, b))


def check_binary(arr: np.ndarray, name: str, *, why: str = "") -> None:
    """Raise when ``arr`` has a value other than 0/1."""
    bad = ~((arr == 0) | (arr == 1))
    if np.any(bad):
        reason = f" ({why})" if why else ""
        msg = f"`{name}` must be 0/1 per-item correctness{reason}; got {_where(bad, arr)}."
        raise ValueError(msg)


def check_int_at_least(value: Any, name: str, minimum: int, *, maximum: int | None = None) -> int:
    """A whole number ``minimum <= value [<= maximum]`` (not a bool), with the package's message."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise fail(name, f"an integer >= {minimum}", value, exc=TypeError)
    if value < minimum:
        requirement = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise fail(name, requirement, value)
    if maximum is not None and value > maximum:
        raise fail(name, f"at most {maximum:,}", value)
    return int(value)


def check_cluster_labels(cluster: Any, n: int, *, name: str = "cluster") -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 of per-item cluster labels (missing labels: DataError); see ``_verdict``."""
    from .clusters import code_labels

    return code_labels(cluster, n, name=name)


def all_rows(x: np.ndarray, test: Any) -> bool:
    """Whether ``test`` (elementwise, boolean) holds everywhere in a 2-D array, checked a block of
    rows at a time: no full-size boolean temporaries for a matrix of hundreds of MB.
    """
    step = max(1, (1 << 20) // max(x.shape[1], 1))
    return all(bool(np.all(test(x[start:start + step]))) for start in range(0, x.shape[0], step))


def check_score_matrix(scores: Any, models: Any = None) -> tuple[np.ndarray, list[str]]:
    """An (n_items, n_models) finite score matrix and unique model names (a DataFrame or an array)."""
    if hasattr(scores, "columns") and hasattr(scores, "to_numpy"):  # a pandas DataFrame
        names = [str(c) for c in scores.columns]
        try:
            x = scores.to_numpy(dtype=float)
        except (TypeError, ValueError):
            bad = [c for c in scores.columns if scores[c].dtype.kind not in "biuf"]
            raise DataError(f"model column {bad[0]!r} is not numeric" if bad else "scores are not numeric") from None
    else:
        try:
            x = np.asarray(scores, dtype=float)
        except (TypeError, ValueError):
            # a data problem, the same class as a non-numeric score read from a file
            msg = "scores are not numeric: `scores` must be a numeric (n_items, n_models) matrix or a DataFrame"
            raise DataError(msg) from None
        names = None
    if x.ndim != 2:
        msg = f"`scores` must be a 2-D (n_items, n_models) matrix; got shape {x.shape}."
        raise ValueError(msg)
    if models is not None:
        names = [str(m) for m in models]
        if len(names) != x.shape[1]:
            msg = f"`models` has {len(names)} names for {x.shape[1]} model columns."
            raise ValueError(msg)
    if names is None:
        names = [f"model_{j}" for j in range(x.shape[1])]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        msg = f"model names must be unique; {dup!r} appears twice"
        raise DataError(msg)
    if x.shape[1] < 2:
        msg = f"need at least 2 models to compare; got {x.shape[1]}."
        raise ValueError(msg)
    if x.shape[0] < 2:
        msg = f"need at least 2 items; got {x.shape[0]}."
        raise ValueError(msg)
    if not all_rows(x, np.isfinite):
        bad = ~np.isfinite(x)
        item, col = (int(v) for v in np.argwhere(bad)[0])
        count = int(bad[:, col].sum())
        msg = (
            f"model {names[col]!r} has {count} missing or non-finite score(s) (first at item row {item}); "
            "paired comparisons need every model scored on every item -- drop or score those items first"
        )
        raise DataError(
            msg
        )
    return x, names


def check_alpha_power(alpha: float, power: float) -> tuple[float, float]:
    """`alpha` and `power` in (0, 1), with the power above `alpha`."""
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    if power <= alpha:
        msg = "power"
        raise fail(msg, f"greater than `alpha` ({alpha:g})", power)
    return alpha, power


def check_delta(delta: float) -> None:
    """A planned gap must not be zero (no sample size detects it)."""
    if delta == 0:
        msg = "`p_a` and `p_b` are equal (delta = 0): no sample size detects a zero gap."
        raise ValueError(msg)


def renamed_correction(continuity_correction: bool, correction: bool | None) -> bool:
    """The deprecated ``correction=`` keyword (one release) -> ``continuity_correction``."""
    if correction is None:
        return continuity_correction
    warn("`correction` was renamed `continuity_correction` (`correction` names a multiplicity "
                  "procedure elsewhere in llm-power); the old name will be removed in the next release.",
                  DeprecationWarning)
    return bool(correction)


def check_run_pair(a: Any, b: Any, *, names: tuple[str, str] = ("a", "b"),
                   run_pairing: str = "independent") -> tuple[np.ndarray, np.ndarray, str]:
    """Two models' items x runs score arrays (at least 2 items and 2 runs each, finite, the same
    items) and the pairing of their runs ("independent", or "matched": the same runs, so the same
    number of columns). What compare and the gate check before the run regime.
    """
    pairing = check_option(run_pairing, "run_pairing", ("independent", "matched"))
    blocks = []
    for name, x in zip(names, (a, b), strict=True):
        arr = np.asarray(x, dtype=float)
        if arr.ndim != 2 or arr.shape[1] < 2 or arr.shape[0] < 2:
            msg = (f"`{name}` must be items x runs with at least 2 items and 2 runs when the other is (got shape "
                   f"{arr.shape}); one run cannot estimate the run-to-run variance")
            raise ValueError(msg)
        if not np.all(np.isfinite(arr)):
            msg = f"`{name}`: a score is missing or not finite (every run must score every item)"
            raise DataError(msg)
        blocks.append(arr)
    if blocks[0].shape[0] != blocks[1].shape[0]:
        msg = (f"`{names[0]}` and `{names[1]}` must score the same items: {blocks[0].shape[0]} and "
               f"{blocks[1].shape[0]} rows")
        raise ValueError(msg)
    if pairing == "matched" and blocks[0].shape[1] != blocks[1].shape[1]:
        msg = (f"run_pairing='matched' needs the same runs for both models (column r of `{names[0]}` and of "
               f"`{names[1]}` the same template); got {blocks[0].shape[1]} and {blocks[1].shape[1]} runs")
        raise ValueError(msg)
    return blocks[0], blocks[1], pairing
