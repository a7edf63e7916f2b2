"""Many comparisons: adjusted p-values, partial conjunction, and what survives.

- :func:`adjust_pvalues` -- Bonferroni, Holm, Hochberg (family-wise error), Benjamini-Hochberg
  and Benjamini-Yekutieli (false discovery rate); vectorised over rows of a 2-D array;
- :func:`partial_conjunction` and :func:`count_effects` -- "on how many of these N datasets is A
  really better?" (Benjamini & Heller 2008; Dror et al. 2017);
- :func:`simulate_error_rates` -- FWER, FDR and power of these procedures by vectorised
  simulation of m tests with m1 true effects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from ._core.options import ADJUST_METHODS  # one list, shared with the command line
from ._core.params import public
from ._core.results import Result
from ._core.typing import SeedLike
from ._core.validation import as_float_array, as_rng, check_open_unit, check_option, fail

__all__ = [
    "ADJUST_METHODS",
    "CountEffectsResult",
    "ErrorRatesResult",
    "adjust_pvalues",
    "bonferroni_factor",
    "count_effects",
    "e_bh",
    "partial_conjunction",
    "simulate_error_rates",
]


def _pvalues(pvalues: Any, name: str = "pvalues") -> np.ndarray:
    p = as_float_array(pvalues, name)
    if p.ndim == 0:
        p = p.reshape(1)
    bad = ~((p >= 0) & (p <= 1))
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        msg = f"`{name}` must be p-values in [0, 1]; got {p[idx]!r} at index {idx[-1] if len(idx) == 1 else idx}."
        raise ValueError(msg)
    return p


def adjust_pvalues(pvalues: Any, *, method: str = "holm") -> np.ndarray:
    r"""Adjusted p-values, in input order (the ones of R's ``p.adjust``).

    Parameters
    ----------
    pvalues : array_like
        Raw p-values; 1-D, or 2-D to adjust each row as a separate family (vectorised).
    method : {"bonferroni", "holm", "hochberg", "bh", "by"}, default "holm"
        ``"bonferroni"``: :math:`\min(1, m p_i)`. ``"holm"`` (step-down): sorted ascending,
        :math:`\tilde p_{(i)} = \max_{j \le i}\min(1, (m-j+1)p_{(j)})`. ``"hochberg"`` (step-up):
        :math:`\tilde p_{(i)} = \min_{j \ge i}\min(1, (m-j+1)p_{(j)})`. ``"bh"``:
        :math:`\min_{j \ge i}\min(1, m p_{(j)}/j)`. ``"by"``: BH times
        :math:`\sum_{k=1}^m 1/k` (valid under any dependence).

    Returns
    -------
    ndarray
        Same shape as the input; monotone in the raw p-values and never below them.
        Rejecting where the adjusted value is <= alpha controls the FWER (Bonferroni, Holm,
        Hochberg -- the last under independence or positive dependence) or the FDR (BH under
        independence or positive dependence, BY always) at alpha.

    Notes
    -----
    Tied p-values get equal adjusted values, so the order in which a sort puts them does not
    matter (the sort need not be stable). In a run of ties :math:`p_{(i)} = \dots = p_{(k)}` the
    weights :math:`m - j + 1` (Holm, Hochberg) and :math:`m/j` (BH, BY) decrease in j, and so do
    their floating-point products with the common p-value (rounding is monotone): Holm's running
    maximum therefore carries the run's first value through the run, and the step-up procedures'
    running minimum from the right carries its last value back through it.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       Scandinavian Journal of Statistics 6, 65-70.
    .. [2] Hochberg, Y. (1988). A sharper Bonferroni procedure for multiple tests of
       significance. Biometrika 75, 800-802.
    .. [3] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57,
       289-300.
    .. [4] Benjamini, Y. & Yekutieli, D. (2001). The control of the false discovery rate in
       multiple testing under dependency. Annals of Statistics 29, 1165-1188.

    Examples
    --------
    >>> from llm_power import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], method="holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, 0.04, 0.03], method="bh")
    array([0.03, 0.04, 0.04])
    """
    method = check_option(method, "method", ADJUST_METHODS)
    p = _pvalues(pvalues)
    m = p.shape[-1]
    if m == 0:
        return np.array(p, dtype=float)
    if method == "bonferroni":
        return np.asarray(np.minimum(1.0, p * m))
    # any sorting permutation gives the same result (tied p-values get equal adjusted values, see
    # Notes), so a fast unstable sort will do
    order, ps = _sort_order(p)
    ranks = np.arange(1, m + 1, dtype=float)
    if method in ("holm", "hochberg"):
        adj = (m - ranks + 1) * ps
    else:
        factor = float(np.sum(1.0 / ranks)) if method == "by" else 1.0
        adj = factor * m / ranks * ps
    if method == "holm":
        np.minimum(1.0, adj, out=adj)
        np.maximum.accumulate(adj, axis=-1, out=adj)
    else:
        np.minimum.accumulate(adj[..., ::-1], axis=-1, out=adj[..., ::-1])
    np.minimum(1.0, adj, out=adj)
    out: np.ndarray = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return out


#: from this many p-values per family on, :func:`_sort_order` packs values and indices into one key
_PACKED_SORT_MIN = 2048


def e_bh(e_values: Any, *, q: float = 0.05) -> np.ndarray:
    r"""The e-BH procedure (Wang and Ramdas 2022): which hypotheses to reject from their e-values,
    with the false discovery rate at most ``q`` under any dependence between them.

    Parameters
    ----------
    e_values : array_like
        One e-value per hypothesis (>= 0; E[e] <= 1 under its null). The current values of
        e-processes at a stopping time qualify, so the procedure stays valid however often a
        leaderboard is looked at.
    q : float, default 0.05
        Target false discovery rate.

    Returns
    -------
    numpy.ndarray of bool
        True for the rejected hypotheses: the k* largest e-values, k* = max{k : e_(k) >= K / (q k)}
        (e_(1) the largest; none when no k qualifies).

    Examples
    --------
    >>> from llm_power import e_bh
    >>> e_bh([400.0, 70.0, 2.0, 0.5], q=0.05).tolist()
    [True, True, False, False]
    """
    e = np.asarray(e_values, dtype=float).reshape(-1)
    if e.size == 0:
        return np.zeros(0, dtype=bool)
    if np.any(np.isnan(e)) or np.any(e < 0):
        msg = "e_values must be >= 0 (no NaN)"
        raise ValueError(msg)
    q = check_open_unit(q, "q")
    k = e.size
    order = np.argsort(-e, kind="stable")
    passing = np.flatnonzero(e[order] >= k / (q * np.arange(1, k + 1)))
    out = np.zeros(k, dtype=bool)
    if passing.size:
        out[order[: passing[-1] + 1]] = True
    return out


def _sort_order(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A permutation sorting p-values (in [0, 1]) along the last axis, ties in any order, and the sorted values.

    Faster than ``np.argsort`` (about 0.8x its time on 10^6 values): the bit patterns of
    non-negative doubles sort like the values, so the high bits of a p-value with its index in
    the low bits make one integer key, and integers sort faster than an argsort runs. Only values
    that agree in the kept high bits (about 2^-32 apart at 10^6 values) may come out of order; a
    stable argsort of the nearly sorted values, linear on long sorted runs, puts them right. The
    result is a sorting permutation whatever the data: ties, or values that agree in their high
    bits, cost time, never correctness.
    """
    m = p.shape[-1]
    if m < _PACKED_SORT_MIN:
        order = np.argsort(p, axis=-1)
        return order, np.take_along_axis(p, order, axis=-1)
    bits = (m - 1).bit_length()
    keys = (p + 0.0).view(np.uint64)  # + 0.0: -0.0 becomes +0.0, whose bit pattern sorts first
    keys >>= bits
    keys <<= bits
    keys |= np.arange(m, dtype=np.uint64)
    keys.sort(axis=-1)
    order = (keys & np.uint64((1 << bits) - 1)).astype(np.intp)
    nearly = np.take_along_axis(p, order, axis=-1)
    fix = np.argsort(nearly, axis=-1, kind="stable")
    return np.take_along_axis(order, fix, axis=-1), np.take_along_axis(nearly, fix, axis=-1)


def _pc_values(p: np.ndarray, method: str) -> np.ndarray:
    """Partial conjunction p-values for u = 1..N (monotone in u), for a 1-D p."""
    n = p.size
    ps = np.sort(p)
    u = np.arange(1, n + 1)
    if method == "bonferroni":
        raw = np.minimum(1.0, (n - u + 1) * ps)
    else:  # fisher on the N - u + 1 largest p-values
        logs = np.log(np.maximum(ps, 1e-300))
        tail_sums = np.cumsum(logs[::-1])[::-1]  # sum of logs of p_(u..N)
        from scipy import stats  # on first use (start-up time)

        raw = stats.chi2.sf(-2.0 * tail_sums, 2 * (n - u + 1))
    return np.maximum.accumulate(raw)


def partial_conjunction(pvalues: Any, u: Any, *, method: str = "bonferroni") -> Any:
    r"""p-value for "at least u of the N null hypotheses are false" (partial conjunction).

    Parameters
    ----------
    pvalues : array_like
        One p-value per dataset (or benchmark), e.g. of "A beats B" on N benchmarks.
    u : int or array_like of int
        1 <= u <= N. u = 1 asks "is A better on at least one?", u = N "on all of them?".
    method : {"bonferroni", "fisher"}, default "bonferroni"
        Bonferroni: :math:`p^{u/N} = (N-u+1)\,p_{(u)}`. Fisher: the chi-square combination of the
        N - u + 1 largest p-values, :math:`-2\sum_{i\ge u}\log p_{(i)} \sim \chi^2_{2(N-u+1)}`
        (assumes independent datasets). Both are made monotone in u by a cumulative maximum, so
        that rejecting "at least u" implies rejecting "at least u - 1".

    Returns
    -------
    float or ndarray

    References
    ----------
    .. [1] Benjamini, Y. & Heller, R. (2008). Screening for partial conjunction hypotheses.
       Biometrics 64, 1215-1222.
    .. [2] Dror, R., Baumer, G., Bogomolov, M. & Reichart, R. (2017). Replicability analysis for
       natural language processing: testing significance with multiple datasets. TACL 5, 471-486.

    Examples
    --------
    >>> from llm_power import partial_conjunction
    >>> p = [0.001, 0.01, 0.02, 0.3]
    >>> [round(partial_conjunction(p, u), 3) for u in (1, 2, 3, 4)]
    [0.004, 0.03, 0.04, 0.3]
    """
    method = check_option(method, "method", ("bonferroni", "fisher"))
    p = _pvalues(pvalues).reshape(-1)
    values = _pc_values(p, method)
    u_arr = np.asarray(u)
    if u_arr.dtype.kind not in "iu" and not (u_arr.dtype.kind == "f" and np.all(u_arr == np.round(u_arr))):
        msg = f"`u` must be an integer or an array of integers; got {u!r}."
        raise TypeError(msg)
    u_int = u_arr.astype(np.int64)
    if np.any((u_int < 1) | (u_int > p.size)):
        msg = f"`u` must be between 1 and N = {p.size}; got {u!r}."
        raise ValueError(msg)
    out = values[u_int - 1]
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, slots=True, repr=False)
class CountEffectsResult(Result):
    """Result of :func:`count_effects`.

    Attributes
    ----------
    k : int
        k-hat: a lower confidence bound on the number of datasets with a true effect.
    identified : ndarray of int
        Indices (input order) of the datasets rejected by Holm's procedure at alpha.
    partial_conjunction_pvalues : ndarray
        p^{u/N} for u = 1..N (monotone).
    alpha : float
    method : str
    """

    k: int
    identified: np.ndarray = field(compare=False)
    partial_conjunction_pvalues: np.ndarray = field(compare=False)
    alpha: float = 0.05
    method: str = "bonferroni"

    _repr_fields = ("k", "identified", "alpha", "method")

    def _fields(self) -> tuple[str, ...]:
        return ("k", "identified", "partial_conjunction_pvalues", "alpha", "method")


@public
def count_effects(pvalues: Any, *, alpha: float = 0.05, method: str = "bonferroni") -> CountEffectsResult:
    r"""How many datasets show a real effect, and which ones (Dror et al. 2017).

    :math:`\hat k = \max\{u : p^{u/N} \le \alpha\}` (0 if none) with the monotone partial
    conjunction p-values of :func:`partial_conjunction`: with probability at least 1 - alpha the
    effect is real in at least k-hat datasets. The datasets are identified by Holm's procedure
    (which controls the family-wise error); with the Bonferroni method the identified set has
    exactly k-hat members.

    Parameters
    ----------
    pvalues : array_like
        One p-value in [0, 1] per dataset (or benchmark), e.g. of "A beats B" on N benchmarks; any
        shape, flattened. An empty input gives k = 0.
    alpha : float, default 0.05
        Error level, in (0, 1): k-hat is a 1 - alpha lower confidence bound, and Holm's procedure
        controls the family-wise error at alpha.
    method : {"bonferroni", "fisher"}, default "bonferroni"
        Partial conjunction p-values of :func:`partial_conjunction`: Bonferroni (valid under any
        dependence) or Fisher (assumes independent datasets). The identified datasets always come
        from Holm's procedure.

    Returns
    -------
    CountEffectsResult
        ``k``: k-hat, an int in [0, N]; ``identified``: int64 array of the indices (input order) of
        the datasets Holm's procedure rejects at alpha; ``partial_conjunction_pvalues``: array of
        shape (N,), the monotone p^{u/N} for u = 1..N; ``alpha`` and ``method`` as given.

    Examples
    --------
    A beats B on 5 benchmarks with these p-values:

    >>> from llm_power import count_effects
    >>> res = count_effects([0.001, 0.2, 0.01, 0.004, 0.6])
    >>> res.k, res.identified.tolist()
    (3, [0, 2, 3])
    """
    alpha = check_open_unit(alpha, "alpha")
    method = check_option(method, "method", ("bonferroni", "fisher"))
    p = _pvalues(pvalues).reshape(-1)
    if p.size == 0:
        return CountEffectsResult(k=0, identified=np.array([], dtype=np.int64), partial_conjunction_pvalues=p,
                                  alpha=alpha, method=method)
    pc = _pc_values(p, method)
    hits = np.flatnonzero(pc <= alpha)
    k = int(hits[-1] + 1) if hits.size else 0
    identified = np.flatnonzero(adjust_pvalues(p, method="holm") <= alpha)
    return CountEffectsResult(k=k, identified=identified, partial_conjunction_pvalues=pc, alpha=alpha,
                              method=method)


@dataclass(frozen=True, slots=True, repr=False)
class ErrorRatesResult(Result):
    """Simulated error rates of multiple-testing procedures (see :func:`simulate_error_rates`).

    Each attribute is a dict keyed by procedure ("none" = unadjusted, and the adjust methods).
    """

    fwer: dict[str, Any]
    fdr: dict[str, Any]
    power: dict[str, Any]
    m: int
    m1: int
    n_sims: int
    alpha: float

    _repr_fields = ("m", "m1", "n_sims", "alpha")

    def summary(self) -> str:
        """A short human-readable summary."""
        lines = [f"m = {self.m} tests, {self.m1} true effects, {self.n_sims:,} simulations, alpha = {self.alpha:g}",
                 f"{'procedure':<12}{'FWER':>9}{'FDR':>9}{'power':>9}"]
        for key in self.fwer:
            lines.append(f"{key:<12}{self.fwer[key]:>9.4f}{self.fdr[key]:>9.4f}{self.power[key]:>9.4f}")
        return "\n".join(lines)


@public
def simulate_error_rates(
    m: int,
    m1: int = 0,
    *,
    effect: float = 3.0,
    alpha: float = 0.05,
    n_sims: int = 10_000,
    correlation: float = 0.0,
    methods: Any = ("none", *ADJUST_METHODS),
    rng: SeedLike = None,
) -> ErrorRatesResult:
    r"""FWER, FDR and power of multiple-testing procedures, by vectorised simulation.

    Each simulated family has m two-sided z tests; the first m1 have a true effect (z-statistic
    mean ``effect``), the others are null. With ``correlation`` = r > 0 the test statistics are
    equicorrelated (a shared normal factor), as tests on the same benchmark items are.

    Parameters
    ----------
    m : int
        Number of tests per family (e.g. benchmarks or model pairs compared), a positive integer.
    m1 : int, default 0
        Number of them with a true effect, an integer in [0, m]; 0 gives the global null (power
        is then NaN).
    effect : float, default 3.0
        Mean of the z-statistic of each true effect, in standard errors (a gap divided by its
        standard error; 2.8 gives about 80% power at alpha = 0.05 unadjusted).
    alpha : float, default 0.05
        Level at which the (adjusted) p-values are rejected, in (0, 1).
    n_sims : int, default 10_000
        Number of simulated families; the Monte-Carlo error of a rate r is about
        sqrt(r (1 - r) / n_sims).
    correlation : float, default 0.0
        Common correlation r of the m test statistics, in [0, 1).
    methods : iterable of str, default ("none", "bh", "bonferroni", "by", "hochberg", "holm")
        Procedures to evaluate: ``"none"`` (unadjusted p-values) and any methods of
        :func:`adjust_pvalues`.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Source of randomness; an int seed makes the result reproducible.

    Returns
    -------
    ErrorRatesResult
        FWER = P(at least one false rejection), FDR = E[V / max(R, 1)] and power = mean share
        of true effects rejected, for each procedure.

    Examples
    --------
    >>> from llm_power import simulate_error_rates
    >>> rates = simulate_error_rates(10, 0, n_sims=20_000, rng=0)
    >>> round(rates.fwer["none"], 2), rates.fwer["holm"] <= 0.05 + 0.005
    (0.4, True)
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        msg = f"`m` must be a positive integer; got {m!r}."
        raise ValueError(msg)
    if isinstance(m1, bool) or not isinstance(m1, (int, np.integer)) or not 0 <= m1 <= m:
        msg = f"`m1` must be an integer in [0, m]; got {m1!r}."
        raise ValueError(msg)
    alpha = check_open_unit(alpha, "alpha")
    if not 0.0 <= float(correlation) < 1.0:
        msg = f"`correlation` must be in [0, 1); got {correlation!r}."
        raise ValueError(msg)
    names = list(methods)
    for name in names:
        if name != "none":
            check_option(name, "methods", ADJUST_METHODS)
    gen = as_rng(rng)
    sims = int(n_sims)
    z = gen.standard_normal((sims, m))
    if correlation > 0:
        z = math.sqrt(1 - correlation) * z + math.sqrt(correlation) * gen.standard_normal((sims, 1))
    z[:, :m1] += effect
    p = 2.0 * special.ndtr(-np.abs(z))
    truth = np.zeros(m, dtype=bool)
    truth[:m1] = True
    fwer, fdr, pw = {}, {}, {}
    for name in names:
        adj = p if name == "none" else adjust_pvalues(p, method=name)
        reject = adj <= alpha
        false = np.sum(reject & ~truth, axis=1)
        total = np.sum(reject, axis=1)
        fwer[name] = float(np.mean(false > 0))
        fdr[name] = float(np.mean(false / np.maximum(total, 1)))
        pw[name] = float(np.mean(np.sum(reject & truth, axis=1) / m1)) if m1 else math.nan
    return ErrorRatesResult(fwer=fwer, fdr=fdr, power=pw, m=m, m1=m1, n_sims=sims, alpha=alpha)


@public
def bonferroni_factor(m: int, *, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided") -> float:
    r"""Factor by which N* grows when alpha is split over m tests (Bonferroni alpha/m).

    :math:`((z_{1-\alpha/(2m)} + z_{1-\beta}) / (z_{1-\alpha/2} + z_{1-\beta}))^2`.

    Parameters
    ----------
    m : int
        Number of tests alpha is split over (e.g. model pairs or benchmarks), a positive integer;
        m = 1 gives 1.
    alpha : float, default 0.05
        Family-wise significance level before splitting, in (0, 1).
    power : float, default 0.8
        Target power of each test, in (0, 1) and above ``alpha``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        One-sided alternatives use :math:`z_{1-\alpha/m}` and :math:`z_{1-\alpha}`.

    Returns
    -------
    float
        The ratio K(alpha / m, power) / K(alpha, power) >= 1 of the sample-size constants: N* times
        this factor (or the MDE times its square root) keeps the power under the Bonferroni correction.

    Examples
    --------
    >>> from llm_power import bonferroni_factor
    >>> round(bonferroni_factor(40), 3)
    2.109
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        msg = "m"
        raise fail(msg, "a positive integer (the number of tests)", m)
    from ._kernel.sizes import k_factor

    return k_factor(alpha / m, power, alternative) / k_factor(alpha, power, alternative)
