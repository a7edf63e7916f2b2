"""LLM judges audited: agreement with another judge or the human majority, position-swap
consistency and first-position bias, and length (verbosity) bias.

All labels are compared by *winner identity* (the winning model's name, or ``"tie"``), so two
judges who saw a pair in opposite presentation orders are compared correctly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .._core.errors import DataError
from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_confidence_level, check_int_at_least
from .._kernel.quantiles import level_quantile, t_pvalue

__all__ = ["AgreementResult", "LengthBiasResult", "judge_agreement", "judge_vs_majority", "length_bias",
           "majority_vote", "swap_consistency"]


@dataclass(frozen=True, repr=False)
class AgreementResult(Result):
    """Result of :func:`judge_agreement`: point estimates and bootstrap percentile intervals
    (items resampled) of percent agreement, Cohen's kappa and Krippendorff's alpha (nominal).
    """

    n: int
    agreement: float
    kappa: float
    alpha: float
    agreement_ci: ConfidenceInterval
    kappa_ci: ConfidenceInterval
    alpha_ci: ConfidenceInterval
    categories: list[str]
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("n", "agreement", "kappa", "alpha")

    @public
    def confidence_interval(self, confidence_level: float | None = None, *, of: str = "kappa") -> ConfidenceInterval:
        """The interval of one agreement measure: ``of`` ``"kappa"`` (default), ``"alpha"`` or
        ``"agreement"`` (the fields ``kappa_ci``, ``alpha_ci``, ``agreement_ci``).
        """
        picked = {"kappa": self.kappa_ci, "alpha": self.alpha_ci, "agreement": self.agreement_ci}.get(of, (None, None))
        low, high = picked
        return stored_interval(low, high, self.confidence_level, confidence_level,
                               recompute="run judge_agreement(..., confidence_level=confidence_level)",
                               choice=("of", of, ("kappa", "alpha", "agreement")))


def _agreement_stats(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(agreement, Cohen's kappa, Krippendorff's nominal alpha) of (B x K x K) contingency tables."""
    n = table.sum(axis=(1, 2))
    observed = np.trace(table, axis1=1, axis2=2) / n
    rows, cols = table.sum(axis=2) / n[:, None], table.sum(axis=1) / n[:, None]
    expected = np.sum(rows * cols, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - expected) / (1.0 - expected)
        # Krippendorff: coincidences of the 2n pairable values; D_o = 1 - agreement,
        # D_e = 1 - sum_c n_c (n_c - 1) / (2n (2n - 1)) with n_c the category's count over both raters
        n_c = (rows + cols) * n[:, None]
        total = 2.0 * n
        d_e = 1.0 - np.sum(n_c * (n_c - 1.0), axis=1) / (total * (total - 1.0))
        alpha = 1.0 - (1.0 - observed) / d_e
    return observed, kappa, alpha


def _labels(values: Any) -> np.ndarray:
    return np.array([str(v) for v in np.asarray(values, dtype=object).tolist()], dtype=object)


@public
def judge_agreement(labels_a: Any, labels_b: Any, *, confidence_level: float = 0.95, n_resamples: int = 2000,
                    rng: SeedLike = None) -> AgreementResult:
    """Agreement of two judges (or a judge and the human majority) labelling the same items:
    percent agreement, Cohen's kappa and Krippendorff's alpha (nominal; "tie" is a category like
    any other), with percentile intervals from resampling items.

    Parameters
    ----------
    labels_a, labels_b : sequence of labels
        The two judges' verdicts on the same items, aligned and of one length (at least 2), e.g.
        ``"model_a"`` / ``"model_b"`` / ``"tie"``; labels are compared as text, so every distinct
        value is a category.
    confidence_level : float, default 0.95
        Level of the percentile intervals, in (0, 1).
    n_resamples : int, default 2000
        Bootstrap resamples of the items (multinomial on the K x K table of label pairs); 0 skips
        the bootstrap and leaves the intervals NaN.
    rng : seed or Generator, optional
        For the bootstrap; a seed gives the same intervals every time.

    Returns
    -------
    AgreementResult
        ``n`` (items), ``agreement`` (share of items with the same label, in [0, 1]), ``kappa``
        (Cohen's) and ``alpha`` (Krippendorff's nominal), each with its interval
        (``agreement_ci``, ``kappa_ci``, ``alpha_ci``); ``categories`` (the labels seen, sorted)
        and ``confidence_level``. Kappa and alpha are NaN when every label is the same category
        (no chance agreement to correct for).

    Examples
    --------
    >>> from llm_power import judge_agreement
    >>> a = ["model_a", "model_b", "tie", "model_a", "model_b", "model_a"] * 20
    >>> b = ["model_a", "model_b", "tie", "model_b", "model_b", "model_a"] * 20
    >>> res = judge_agreement(a, b, rng=0)
    >>> round(res.agreement, 4), round(res.kappa, 4)
    (0.8333, 0.7391)
    """
    level = check_confidence_level(confidence_level)
    n_resamples = check_int_at_least(n_resamples, "n_resamples", 0)
    x, y = _labels(labels_a), _labels(labels_b)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        msg = f"labels_a and labels_b must be two 1-D label sequences of one length (>= 2); got {x.shape}, {y.shape}"
        raise ValueError(msg)
    categories = sorted(set(x.tolist()) | set(y.tolist()))
    code = {c: k for k, c in enumerate(categories)}
    k = len(categories)
    cell = np.array([code[v] for v in x.tolist()]) * k + np.array([code[v] for v in y.tolist()])
    table = np.bincount(cell, minlength=k * k).reshape(1, k, k).astype(float)
    agree, kappa, alpha = (float(v[0]) for v in _agreement_stats(table))
    tail = (1.0 - level) / 2.0
    cis = [ConfidenceInterval(math.nan, math.nan)] * 3
    if n_resamples:
        gen = as_rng(rng)
        counts = gen.multinomial(x.size, table.ravel() / x.size, size=n_resamples).reshape(n_resamples, k, k)
        boot = _agreement_stats(counts.astype(float))
        cis = [ConfidenceInterval(*(float(q) for q in np.nanquantile(b, [tail, 1.0 - tail]))) for b in boot]
    return AgreementResult(n=int(x.size), agreement=agree, kappa=kappa, alpha=alpha, agreement_ci=cis[0],
                           kappa_ci=cis[1], alpha_ci=cis[2], categories=categories, confidence_level=level)


def _frame(battles: Any, needed: tuple[str, ...], what: str) -> Any:
    import pandas as pd

    frame = battles if isinstance(battles, pd.DataFrame) else pd.DataFrame(dict(battles))
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        msg = f"{what} needs columns {', '.join(needed)}; missing: {', '.join(missing)}"
        raise DataError(msg)
    return frame


def _winner_names(frame: Any, column: str = "winner") -> np.ndarray:
    """The winning model's name per row, or "tie"."""
    w = frame[column].astype(str).to_numpy()
    a, b = frame["model_a"].astype(str).to_numpy(), frame["model_b"].astype(str).to_numpy()
    out = np.where((w == "model_a") | (w == a), a, np.where((w == "model_b") | (w == b), b, "tie"))
    bad = ~((w == "model_a") | (w == a) | (w == "model_b") | (w == b) | (w == "tie"))
    if bad.any():
        row = int(np.argmax(bad))
        msg = f"row {row}: {column} {w[row]!r} is none of model_a, model_b, tie"
        raise DataError(msg)
    return np.asarray(out, dtype=object)


def majority_vote(battles: Any, *, item: str = "question_id", judges: Any = None) -> Any:
    """The majority verdict per item over several judges (e.g. human annotators).

    ``item`` names the column identifying what was judged (one pair of answers); ``judges``, if
    given, keeps only rows whose ``judge`` is in that list (or satisfies that predicate). The
    majority is the strict plurality of the winners' *names*, so judges who saw the pair in either
    order count alike; no strict plurality gives ``"tie"``. Returns one row per item with
    ``model_a``, ``model_b`` (the first row's orientation), ``winner`` (model_a | model_b | tie)
    and ``n_votes`` (pandas).

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        One row per vote, with the ``item`` column, ``model_a``, ``model_b`` and ``winner``
        (``"model_a"``, ``"model_b"``, ``"tie"`` or the winner's name); ``judge`` too when
        ``judges`` is given. A missing column is a DataError.
    item : str, default "question_id"
        The column identifying what was judged: the votes are grouped by it.
    judges : list of str or callable, optional
        Keep only the rows whose ``judge`` is in this list, or for which ``judges(name)`` is true.
        Default None: every row votes. No row left is a DataError.

    Returns
    -------
    DataFrame
        One row per item, sorted by item: the ``item`` column, ``model_a``, ``model_b`` (as in the
        item's first row), ``winner`` (``"model_a"``, ``"model_b"`` or ``"tie"`` in that
        orientation) and ``n_votes`` (votes counted for the item).

    Examples
    --------
    Three annotators on two questions; h3 saw the first pair with the positions swapped:

    >>> import pandas as pd
    >>> from llm_power import majority_vote
    >>> votes = pd.DataFrame({"question_id": [1, 1, 1, 2, 2, 2],
    ...                       "model_a": ["gpt", "gpt", "claude", "gpt", "gpt", "gpt"],
    ...                       "model_b": ["claude", "claude", "gpt", "claude", "claude", "claude"],
    ...                       "winner": ["model_a", "model_a", "model_b", "model_b", "tie", "model_a"],
    ...                       "judge": ["h1", "h2", "h3", "h1", "h2", "h3"]})
    >>> majority_vote(votes)
       question_id model_a model_b   winner  n_votes
    0            1     gpt  claude  model_a        3
    1            2     gpt  claude      tie        3
    >>> majority_vote(votes, judges=["h1", "h2"])["n_votes"].tolist()
    [2, 2]
    """
    import pandas as pd

    frame = _frame(battles, (item, "model_a", "model_b", "winner"), "majority_vote")
    if judges is not None:
        if "judge" not in frame.columns:
            msg = "majority_vote: judges= needs a judge column"
            raise DataError(msg)
        keep = frame["judge"].map(judges) if callable(judges) else frame["judge"].isin(list(judges))
        frame = frame[keep.astype(bool)]
    if frame.empty:
        msg = "majority_vote: no rows (check judges=)"
        raise DataError(msg)
    names = pd.Series(_winner_names(frame), index=frame.index)
    counts = names.groupby([frame[item], names]).size().rename("votes").reset_index()
    counts.columns = ["item", "name", "votes"]
    counts = counts.sort_values(["item", "votes"], ascending=[True, False], kind="stable")
    top = counts.groupby("item").head(2).copy()
    top["rank"] = top.groupby("item").cumcount()
    first = top[top["rank"] == 0].set_index("item")
    second = top[top["rank"] == 1].set_index("item")["votes"].reindex(first.index, fill_value=0)
    label = first["name"].where(first["votes"] > second, "tie")
    head = frame.groupby(item, sort=True)[["model_a", "model_b"]].first()
    head = head.astype(str)
    winner = np.where(label.to_numpy() == head["model_a"].to_numpy(), "model_a",
                      np.where(label.to_numpy() == head["model_b"].to_numpy(), "model_b", "tie"))
    votes = frame.groupby(item, sort=True).size()
    return pd.DataFrame({item: head.index, "model_a": head["model_a"].to_numpy(), "model_b": head["model_b"].to_numpy(),
                         "winner": winner, "n_votes": votes.to_numpy()})


@public
def judge_vs_majority(battles: Any, judge: str, *, humans: Any, item: str = "question_id",
                      confidence_level: float = 0.95, n_resamples: int = 2000, rng: SeedLike = None) -> AgreementResult:
    """Agreement of ``judge`` with the majority of ``humans`` (a list of judge names or a predicate
    on the ``judge`` column) on the items both labelled, compared by winner identity.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        One row per vote: the ``item`` column, ``model_a``, ``model_b``, ``winner`` and ``judge``.
    judge : str
        The judge audited (a value of the ``judge`` column); it must label each item at most once.
    humans : list of str or callable
        The human judges whose majority (:func:`majority_vote`) is the reference: names in the
        ``judge`` column, or a predicate on them.
    item : str, default "question_id"
        The column identifying what was judged. At least 2 items must carry both the judge's
        label and a human majority.
    confidence_level : float, default 0.95
        Level of the percentile intervals, in (0, 1).
    n_resamples : int, default 2000
        Bootstrap resamples of the shared items; 0: no intervals (NaN).
    rng : seed or Generator, optional
        For the bootstrap.

    Returns
    -------
    AgreementResult
        As :func:`judge_agreement`, with the human majority as ``labels_a`` and the judge as
        ``labels_b`` (both in the majority table's orientation of each pair): ``n`` shared items,
        ``agreement``, ``kappa``, ``alpha`` and their intervals.

    Examples
    --------
    >>> import pandas as pd
    >>> from llm_power import judge_vs_majority
    >>> rows = [(1, "x", "y", w, j) for w, j in [("model_a", "h1"), ("model_a", "h2"), ("tie", "h3"),
    ...                                           ("model_a", "gpt")]]
    >>> rows += [(2, "x", "y", w, j) for w, j in [("model_b", "h1"), ("tie", "h2"), ("model_a", "gpt")]]
    >>> b = pd.DataFrame(rows, columns=["question_id", "model_a", "model_b", "winner", "judge"])
    >>> judge_vs_majority(b, "gpt", humans=["h1", "h2", "h3"], n_resamples=0).agreement
    0.5
    """
    frame = _frame(battles, (item, "model_a", "model_b", "winner", "judge"), "judge_vs_majority")
    human = majority_vote(frame, item=item, judges=humans)
    mine = frame[frame["judge"] == judge]
    if mine.empty:
        msg = f"no rows of judge {judge!r}"
        raise DataError(msg)
    if mine[item].duplicated().any():
        dup = mine[item][mine[item].duplicated()].iloc[0]
        msg = f"judge {judge!r} labelled item {dup!r} more than once"
        raise DataError(msg)
    mine_names = dict(zip(mine[item].tolist(), _winner_names(mine).tolist(), strict=True))
    human = human[human[item].isin(list(mine_names))]
    if len(human) < 2:
        msg = f"judge {judge!r} and the human majority share {len(human)} item(s); need at least 2"
        raise DataError(msg)
    # the judge's winner named, then put in the majority table's orientation of the pair
    theirs = np.array([mine_names[k] for k in human[item].tolist()], dtype=object)
    oriented = np.where(theirs == human["model_a"].to_numpy(), "model_a",
                        np.where(theirs == human["model_b"].to_numpy(), "model_b", "tie"))
    return judge_agreement(human["winner"].to_numpy(), oriented,
                           confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)


@public
def swap_consistency(battles: Any, *, by: Any = "judge", confidence_level: float = 0.95) -> Any:
    """Position-swap consistency of judges that saw every pair in both presentation orders.

    ``battles`` needs ``g1_winner`` (model_a shown first) and ``g2_winner`` (positions swapped),
    both already mapped back to model identity (model_a | model_b | tie), as
    :func:`llm_power.read_battles` returns them. Per group of ``by`` (a column name or a list):

    - ``n``: verdicts with both orders; ``inconsistent``: g1 != g2; ``rate`` with its Wilson
      interval (``ci_low``, ``ci_high``);
    - ``same_first``: the judge picked whichever answer was shown first both times (g1 = model_a,
      g2 = model_b); ``same_second``: the second both times; ``other_inconsistent``: the rest
      (a tie in one order);
    - ``first_share`` = same_first / (same_first + same_second) and ``pvalue_position``: exact
      two-sided binomial test of first_share = 1/2 (no position bias), conditional on the
      position-driven flips.

    Returns a pandas DataFrame, one row per group.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        One row per verdict pair, with the ``by`` column(s), ``g1_winner`` and ``g2_winner`` (each
        ``"model_a"``, ``"model_b"`` or ``"tie"``; anything else is a DataError).
    by : str or list of str, default "judge"
        The column(s) to group by (e.g. ``["judge", "category"]``).
    confidence_level : float, default 0.95
        Level of the Wilson interval of ``rate``, in (0, 1).

    Returns
    -------
    DataFrame
        One row per group, sorted: the ``by`` columns, ``n``, ``inconsistent``, ``same_first``,
        ``same_second``, ``other_inconsistent``, ``rate`` (inconsistent / n) with ``ci_low`` /
        ``ci_high``, ``first_share`` (NaN without position-driven flips) and ``pvalue_position``
        (1 without them).

    Examples
    --------
    Two LLM judges, four pairs each, shown in both orders:

    >>> import pandas as pd
    >>> from llm_power import swap_consistency
    >>> verdicts = pd.DataFrame({"judge": ["gpt-4"] * 4 + ["claude"] * 4,
    ...                          "g1_winner": ["model_a", "model_a", "tie", "model_b",
    ...                                        "model_a", "model_b", "model_a", "tie"],
    ...                          "g2_winner": ["model_a", "model_b", "tie", "model_a",
    ...                                        "model_a", "model_b", "model_b", "tie"]})
    >>> table = swap_consistency(verdicts)
    >>> table[["judge", "n", "inconsistent", "same_first", "same_second", "rate"]]
        judge  n  inconsistent  same_first  same_second  rate
    0  claude  4             1           1            0  0.25
    1   gpt-4  4             2           1            1  0.50
    """
    import pandas as pd
    from scipy import stats

    from ..intervals import proportion_ci

    keys = [by] if isinstance(by, str) else list(by)
    frame = _frame(battles, (*keys, "g1_winner", "g2_winner"), "swap_consistency")
    level = check_confidence_level(confidence_level)
    g1, g2 = frame["g1_winner"].astype(str), frame["g2_winner"].astype(str)
    for name, col in (("g1_winner", g1), ("g2_winner", g2)):
        bad = ~col.isin(["model_a", "model_b", "tie"])
        if bad.any():
            msg = f"row {int(np.argmax(bad.to_numpy()))}: {name} {col[bad].iloc[0]!r} is none of model_a, model_b, tie"
            raise DataError(msg)
    flags = pd.DataFrame({"n": 1, "inconsistent": (g1 != g2).astype(int),
                          "same_first": ((g1 == "model_a") & (g2 == "model_b")).astype(int),
                          "same_second": ((g1 == "model_b") & (g2 == "model_a")).astype(int)}, index=frame.index)
    table = flags.groupby([frame[k] for k in keys], sort=True).sum().reset_index()
    table["other_inconsistent"] = table["inconsistent"] - table["same_first"] - table["same_second"]
    table["rate"] = table["inconsistent"] / table["n"]
    lo, hi = proportion_ci(table["inconsistent"].to_numpy(), table["n"].to_numpy(), confidence_level=level)
    table["ci_low"], table["ci_high"] = lo, hi
    both = table["same_first"] + table["same_second"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["first_share"] = np.where(both > 0, table["same_first"] / both, np.nan)
    table["pvalue_position"] = [float(stats.binomtest(int(k), int(n)).pvalue) if n else 1.0
                                for k, n in zip(table["same_first"], both, strict=True)]
    return table


@dataclass(frozen=True, repr=False)
class LengthBiasResult(Result):
    """Result of :func:`length_bias`.

    ``longer_win_rate``: among decisive battles with unequal lengths, the share won by the longer
    answer (Wilson interval, exact binomial p-value of 1/2) — confounded with quality, since better
    models often write more. ``coefficient``: the change in log-odds of winning per doubling of
    the length ratio, *holding the models fixed* (Bradley-Terry with a length covariate, ties as
    half a win), with a sandwich (cluster-robust when asked) standard error, interval and p-value.
    """

    n: int
    n_decisive: int
    longer_win_rate: float
    longer_win_ci: ConfidenceInterval
    pvalue_longer: float
    coefficient: float
    standard_error: float
    coefficient_ci: ConfidenceInterval
    pvalue: float
    confidence_level: float

    _repr_fields: ClassVar[tuple[str, ...]] = ("n", "longer_win_rate", "coefficient", "pvalue")

    @public
    def confidence_interval(self, confidence_level: float | None = None, *,
                            of: str = "longer_win_rate") -> ConfidenceInterval:
        """The interval of ``of``: ``"longer_win_rate"`` (default; the field ``longer_win_ci``) or
        ``"coefficient"`` (``coefficient_ci``).
        """
        picked = {"longer_win_rate": self.longer_win_ci, "coefficient": self.coefficient_ci}.get(of, (None, None))
        low, high = picked
        return stored_interval(low, high, self.confidence_level, confidence_level,
                               recompute="run length_bias(..., confidence_level=confidence_level)",
                               choice=("of", of, ("longer_win_rate", "coefficient")))


def _logistic_sandwich(x: np.ndarray, y: np.ndarray, groups: np.ndarray | None) -> tuple[np.ndarray, Any]:
    """Quasi-binomial logistic regression (y in [0, 1]) by Newton; (coefficients, the kernel's sandwich:
    HC0 per battle, or CR1 per cluster with G - 1 degrees of freedom).
    """
    from .._kernel.variance import sandwich

    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = special.expit(x @ beta)
        h = (x * (p * (1 - p))[:, None]).T @ x
        step = np.linalg.solve(h, x.T @ (y - p))
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    else:
        msg = "length_bias: the logistic fit did not converge (a model that never wins or never loses?)"
        raise DataError(msg)
    p = special.expit(x @ beta)
    scores = x * (y - p)[:, None]
    n_clusters = None
    if groups is not None:
        n_clusters = int(groups.max()) + 1
        summed = np.zeros((n_clusters, x.shape[1]))
        np.add.at(summed, groups, scores)
        scores = summed
    return beta, sandwich((x * (p * (1 - p))[:, None]).T @ x, scores.T @ scores, n_clusters=n_clusters,
                          what="coefficients")


@public
def length_bias(battles: Any, *, length_a: str = "length_a", length_b: str = "length_b", cluster: Any = None,
                confidence_level: float = 0.95) -> LengthBiasResult:
    """Does the judge prefer longer answers? Raw and model-adjusted length effects.

    ``battles`` needs ``model_a``, ``model_b``, ``winner`` and the two answers' lengths (any unit:
    characters, tokens). ``cluster``: a column or labels (prompt, voter) for a cluster-robust
    standard error of the coefficient.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (``"model_a"``, ``"model_b"``, ``"tie"`` or the
        winner's name) and the two length columns.
    length_a : str, default "length_a"
        The column of model_a's answer lengths: positive, finite numbers in any unit.
    length_b : str, default "length_b"
        The column of model_b's answer lengths, in the same unit.
    cluster : str or array_like, optional
        A column name (``"question"`` finds ``question_id``) or one label per battle: the
        coefficient's standard error sums the scores within clusters (CR1, t on clusters - 1
        degrees of freedom). Default None: HC0 per battle, normal quantiles.
    confidence_level : float, default 0.95
        Level of both intervals, in (0, 1).

    Returns
    -------
    LengthBiasResult
        ``n`` (battles), ``n_decisive`` (battles with a winner and unequal lengths),
        ``longer_win_rate`` with ``longer_win_ci`` (Wilson) and ``pvalue_longer`` (exact binomial
        test of 1/2; NaN without decisive battles), and ``coefficient`` (log-odds per doubling of
        length_a / length_b, the models held fixed) with ``standard_error``, ``coefficient_ci``
        and ``pvalue`` (two-sided).

    Examples
    --------
    An arena of three models judged by an LLM that adds 0.6 log-odds per doubling of length:

    >>> import numpy as np, pandas as pd
    >>> from llm_power import length_bias
    >>> rng = np.random.default_rng(0)
    >>> names, strength = np.array(["gpt", "claude", "llama"]), np.array([0.5, 0.2, -0.7])
    >>> i = rng.integers(0, 3, 400)
    >>> j = (i + rng.integers(1, 3, 400)) % 3  # a different opponent
    >>> la, lb = rng.integers(100, 800, 400), rng.integers(100, 800, 400)
    >>> logit = strength[i] - strength[j] + 0.6 * np.log2(la / lb)
    >>> a_wins = rng.random(400) < 1 / (1 + np.exp(-logit))
    >>> battles = pd.DataFrame({"model_a": names[i], "model_b": names[j], "length_a": la, "length_b": lb,
    ...                         "winner": np.where(a_wins, "model_a", "model_b")})
    >>> res = length_bias(battles)
    >>> round(res.longer_win_rate, 3), round(res.coefficient, 2), bool(res.pvalue < 0.001)
    (0.571, 0.67, True)
    """
    from scipy import stats

    from ..intervals import proportion_ci
    from ._battles import battle_cluster_codes, encode_battles

    frame = _frame(battles, ("model_a", "model_b", "winner", length_a, length_b), "length_bias")
    level = check_confidence_level(confidence_level)
    enc = encode_battles(frame)
    la = np.asarray(frame[length_a], dtype=float)
    lb = np.asarray(frame[length_b], dtype=float)
    if not (np.all(np.isfinite(la)) and np.all(np.isfinite(lb)) and np.all(la > 0) and np.all(lb > 0)):
        row = int(np.argmax(~(np.isfinite(la) & np.isfinite(lb) & (la > 0) & (lb > 0))))
        msg = f"row {row}: lengths must be positive numbers; got {la[row]!r}, {lb[row]!r}"
        raise DataError(msg)
    y = np.array([1.0, 0.0, 0.5])[enc.outcome]
    decisive = (enc.outcome < 2) & (la != lb)
    longer_won = np.where(la > lb, y == 1.0, y == 0.0)[decisive]
    k, n_dec = int(longer_won.sum()), int(decisive.sum())
    ci = proportion_ci(k, n_dec, confidence_level=level) if n_dec else ConfidenceInterval(math.nan, math.nan)
    m = len(enc.models)
    x = np.zeros((enc.n, m))
    x[np.arange(enc.n), enc.ia] += 1.0
    x[np.arange(enc.n), enc.ib] -= 1.0
    x[:, m - 1] = np.log2(la / lb)  # the last model is the reference: its column becomes the covariate
    groups = battle_cluster_codes(cluster, frame, enc.n)
    beta, sw = _logistic_sandwich(x, y, groups)
    contrast = np.zeros(m)
    contrast[m - 1] = 1.0
    var, _ = sw.contrast_variance(contrast[None, :])
    se = math.sqrt(float(var[0])) if np.isfinite(var[0]) else math.nan
    z = float(level_quantile(level, "two-sided", sw.df))
    coef = float(beta[m - 1])
    p = float(t_pvalue(coef / se, sw.df)) if se > 0 else math.nan
    return LengthBiasResult(n=enc.n, n_decisive=n_dec, longer_win_rate=k / n_dec if n_dec else math.nan,
                            longer_win_ci=ConfidenceInterval(float(ci[0]), float(ci[1])),
                            pvalue_longer=float(stats.binomtest(k, n_dec).pvalue) if n_dec else math.nan,
                            coefficient=coef, standard_error=se,
                            coefficient_ci=ConfidenceInterval(coef - z * se, coef + z * se), pvalue=p,
                            confidence_level=level)
