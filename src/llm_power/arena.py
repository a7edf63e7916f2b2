r"""Arena resolution: how many more battles until each displayed rating gap is separated?

The leaderboard-resolution idea carried to pairwise battles. The arena is fitted by
Bradley-Terry (:func:`llm_power.bradley_terry`); for each pair of models ranked next to each other
(or every pair) the rating gap :math:`\hat\delta`, its sandwich standard error and Wald test.
With :math:`N` battles in the whole arena the variance of a gap scales as :math:`V/N`
(:math:`V = N\,\widehat{\mathrm{se}}^2`), *under the observed allocation of battles to pairs and
the observed clustering* (battles per prompt or voter stay as they are). So the battles needed to
separate the pair at level :math:`\alpha` with the given power are

.. math:: N^* = (z_{1-\alpha/2} + z_{\text{power}})^2 \, V / \hat\delta^2,

and :math:`q = N / N^*`; a pair is *resolved* when :math:`q \ge 1` and its test rejects — the same
rule as :func:`llm_power.diagnose`. The regimes stress that verdict like the score report does:
multiplicity (Holm / Bonferroni / BH over the family of pairs), clustering (the cluster-robust
covariance, when ``cluster`` is given) and anytime-valid monitoring of a live arena (the
normal-mixture boundary replaces :math:`z_{1-\alpha/2}`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ._results import Result
from ._validation import check_confidence_level, check_open_unit, check_option
from .errors import DataError
from .preferences import BradleyTerryResult

#: all-pairs reports with more pairs are refused before allocating (as diagnose's max_pairs)
MAX_PAIRS = 200_000

__all__ = ["ArenaDiagnosis", "arena_diagnose"]

ELO = 400.0 / math.log(10.0)  # Elo points per unit of log-strength


@dataclass(frozen=True, repr=False)
class ArenaDiagnosis(Result):
    """Result of :func:`arena_diagnose`.

    Attributes
    ----------
    models : list of str
        Ranked, best first.
    ratings : BradleyTerryResult
        The fit whose covariance the verdict uses (cluster-robust with ``cluster``).
    columns : dict of ndarray
        One entry per pair (``model_a`` ranked above ``model_b``): ``rank_a``, ``rank_b``, ``gap``
        and ``gap_elo``, ``se`` (log-strength units), ``ci_low_elo`` / ``ci_high_elo``, ``pvalue``,
        ``battles`` (between the two), ``n_star`` / ``q`` / ``resolved`` (IID), and per regime
        ``pvalue_adjusted``, ``n_star_corrected``, ``q_corrected``, ``resolved_corrected``; with
        clusters ``se_cluster``, ``pvalue_cluster``, ``n_star_cluster``, ``q_cluster``,
        ``design_effect``, ``resolved_cluster``; ``n_star_anytime``, ``q_anytime``,
        ``resolved_anytime``.
    n_battles : int
    ranks : dict of lists
        The ranked models' ``model``, ``elo`` (mean 1000), ``rank``, simultaneous ``rank_low`` /
        ``rank_high`` (max-t over all pairs, at the confidence level, on the covariance above) and
        ``tie_group`` (see :meth:`BradleyTerryResult.rank_intervals`).
    settings : dict
    """

    models: list[str]
    ratings: BradleyTerryResult
    columns: dict[str, Any]
    n_battles: int
    ranks: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    _repr_fields: ClassVar[tuple[str, ...]] = ("n_battles",)

    @property
    def n_pairs(self) -> int:
        """Pairs in the family."""
        return int(self.columns["gap"].size)

    def regimes(self) -> list[tuple[str, str]]:
        """(label, resolved column) of every regime computed, IID first."""
        out = [("IID", "resolved"), (str(self.settings["correction_label"]), "resolved_corrected")]
        if "resolved_cluster" in self.columns:
            out.append(("cluster", "resolved_cluster"))
        out.append(("anytime", "resolved_anytime"))
        return out

    def unresolved(self) -> dict[str, int]:
        """Unresolved pairs per regime label."""
        return {label: int(np.sum(~np.asarray(self.columns[col], dtype=bool))) for label, col in self.regimes()}

    def to_frame(self) -> Any:
        """One row per pair (pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    def summary(self) -> str:
        """The verdict per regime, one line each."""
        lines = [f"Arena: {len(self.models)} models, {self.n_battles:,} battles, {self.n_pairs} "
                 f"{self.settings['pairs']} pairs"]
        lines += [f"  {n} of {self.n_pairs} unresolved ({label})" for label, n in self.unresolved().items()]
        return "\n".join(lines)


def _pair_index(m: int, pairs: str) -> np.ndarray:
    if pairs == "adjacent":
        return np.stack([np.arange(m - 1), np.arange(1, m)], axis=1)
    i, j = np.triu_indices(m, k=1)
    return np.stack([i, j], axis=1)


def _gap_stats(fit: BradleyTerryResult, order: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = order[idx[:, 0]], order[idx[:, 1]]
    cov = fit.covariance
    gap = fit.ratings[a] - fit.ratings[b]
    var = cov[a, a] + cov[b, b] - 2.0 * cov[a, b]
    return gap, np.maximum(var, 0.0)


def _wald(gap: np.ndarray, var: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, np.abs(gap) / np.sqrt(var), np.where(gap == 0, 0.0, np.inf))
    return np.asarray(np.minimum(1.0, 2.0 * special.ndtr(-z)), dtype=float)


def arena_diagnose(battles: Any, *, pairs: str = "adjacent", cluster: Any = None, ties: str = "half",  # noqa: PLR0913
                   alpha: float = 0.05, power: float = 0.8, correction: str = "holm",
                   confidence_level: float = 0.95, rng: Any = 0) -> ArenaDiagnosis:
    """Resolution report of an arena: per ranked pair the rating gap, its interval and test, the
    battles N* needed to separate it and q = N / N*, under multiplicity, clustering and
    anytime-valid monitoring.

    Parameters
    ----------
    battles : DataFrame or mapping of columns
        ``model_a``, ``model_b``, ``winner`` (see :func:`llm_power.bradley_terry`).
    pairs : {"adjacent", "all"}, default "adjacent"
        The family: models ranked next to each other, or every pair.
    cluster : str or array_like, optional
        Battles sharing a prompt or a voter (a column such as ``"question"`` or labels): adds the
        cluster regime, whose covariance sums the Bradley-Terry scores within clusters.
    ties : {"half", "davidson"}, default "half"
    alpha, power : float
        Level of each test and the power N* is planned for.
    correction : {"holm", "bonferroni", "bh"}, default "holm"
        The multiplicity regime's procedure over the family of pairs.
    confidence_level : float, default 0.95
    rng : seed or Generator, default 0
        For the max-t critical value of the rank intervals (normal draws).

    Examples
    --------
    >>> from llm_power import arena_diagnose
    >>> battles = {"model_a": ["x", "y", "x", "z"] * 60, "model_b": ["y", "z", "z", "x"] * 60,
    ...            "winner": ["model_a", "model_a", "model_a", "tie", "model_b", "tie", "model_a", "model_b"] * 30}
    >>> res = arena_diagnose(battles)
    >>> res.models
    ['x', 'y', 'z']
    >>> [round(float(v), 2) for v in res.columns["q"]]
    [0.18, 8.14]
    """
    check_option(pairs, "pairs", ("adjacent", "all"))
    check_option(correction, "correction", ("holm", "bonferroni", "bh"))
    alpha = check_open_unit(alpha, "alpha")
    power = check_open_unit(power, "power")
    level = check_confidence_level(confidence_level)
    from ._verdict import iid_verdict
    from .preferences import _cluster_codes, encode_battles, fit_battles
    from .regimes import _corrected
    from .sequential import anytime_critical_value

    enc = encode_battles(battles)
    groups = _cluster_codes(cluster, battles, enc.n)
    m_models = len(enc.models)
    if pairs == "all" and m_models * (m_models - 1) // 2 > MAX_PAIRS:
        msg = (f"{m_models:,} models have {m_models * (m_models - 1) // 2:,} pairs, more than {MAX_PAIRS:,} (each pair "
               "is a row of the report); use pairs='adjacent' (--pairs adjacent) or fewer models")
        raise DataError(msg)
    iid = fit_battles(enc, None, ties=ties, confidence_level=level)
    clustered = None if groups is None else fit_battles(enc, groups, ties=ties, confidence_level=level)
    fit = clustered or iid
    order = np.argsort(-iid.ratings, kind="stable")
    m = len(iid.models)
    idx = _pair_index(m, pairs)
    n = iid.n_battles
    gap, var = _gap_stats(iid, order, idx)
    p = _wald(gap, var)
    verdict = iid_verdict(gap, var * n, n, p, alpha=alpha, power=power, alternative="two-sided")
    z_half = float(special.ndtri(1.0 - (1.0 - level) / 2.0))
    names = [iid.models[k] for k in order]
    a_codes, b_codes = order[idx[:, 0]], order[idx[:, 1]]
    direct = _direct_counts(enc, a_codes, b_codes)
    cols: dict[str, Any] = {
        "model_a": np.array([names[k] for k in idx[:, 0]], dtype=object),
        "model_b": np.array([names[k] for k in idx[:, 1]], dtype=object),
        "rank_a": idx[:, 0] + 1, "rank_b": idx[:, 1] + 1, "gap": gap, "gap_elo": ELO * gap, "se": np.sqrt(var),
        "ci_low_elo": ELO * (gap - z_half * np.sqrt(var)), "ci_high_elo": ELO * (gap + z_half * np.sqrt(var)),
        "pvalue": p, "battles": direct, "n_star": verdict.n_star, "q": verdict.q, "resolved": verdict.resolved,
    }
    # the family is judged on the strictest covariance available (clustered when given)
    gap_f, var_f = (gap, var) if clustered is None else _gap_stats(clustered, order, idx)
    p_f = p if clustered is None else _wald(gap_f, var_f)
    base = verdict if clustered is None else iid_verdict(gap_f, var_f * n, n, p_f, alpha=alpha, power=power,
                                                         alternative="two-sided")
    if clustered is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            de = np.where(var > 0, var_f / var, np.nan)
        cols.update(se_cluster=np.sqrt(var_f), pvalue_cluster=p_f, design_effect=de,
                    ci_low_elo_cluster=ELO * (gap - z_half * np.sqrt(var_f)),
                    ci_high_elo_cluster=ELO * (gap + z_half * np.sqrt(var_f)),
                    n_star_cluster=base.n_star, q_cluster=base.q, resolved_cluster=base.resolved & verdict.resolved)
    from .multiplicity import adjust_pvalues

    alpha_prime, resolved_corr, corr = _corrected(gap_f, var_f * n, n, p_f, alpha, power, correction, None, None)
    cols.update(pvalue_adjusted=adjust_pvalues(p_f, method=correction), alpha_corrected=alpha_prime,
                n_star_corrected=corr.n_star, q_corrected=corr.q,
                resolved_corrected=resolved_corr & base.resolved & verdict.resolved)
    z_b = float(special.ndtri(power))
    z_any, ratio = anytime_critical_value(alpha)
    k_fixed = (float(-special.ndtri(alpha / 2.0)) + z_b) ** 2
    k_any = (z_any + z_b) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t2 = np.where(var_f > 0, gap_f**2 / var_f, np.where(gap_f == 0, 0.0, np.inf))
        n_star_any = np.where(np.isfinite(base.n_star), base.n_star * k_any / k_fixed, base.n_star)
    q_any = t2 / k_any
    cols.update(n_star_anytime=n_star_any, q_anytime=q_any,
                resolved_anytime=(q_any >= 1) & base.resolved & verdict.resolved)
    settings = {"alpha": alpha, "power": power, "pairs": pairs, "correction": correction,
                "correction_label": {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "BH"}[correction],
                "confidence_level": level, "ties": ties, "z_anytime": z_any, "mixture_ratio": ratio,
                "z_fixed": float(-special.ndtri(alpha / 2.0)),
                "n_clusters": None if clustered is None else clustered.n_clusters,
                "tie_parameter": iid.tie_parameter}
    table = fit.rank_intervals(method="max-t", rng=rng)
    elo = dict(zip(fit.models, fit.elo(), strict=True))
    ranks = {"model": table["model"].tolist(), "elo": [float(elo[x]) for x in table["model"]],
             "rank": table["rank"].tolist(), "rank_low": table["rank_low"].tolist(),
             "rank_high": table["rank_high"].tolist(), "tie_group": table["tie_group"].tolist()}
    return ArenaDiagnosis(models=names, ratings=fit, columns=cols, n_battles=n, ranks=ranks, settings=settings)


def _direct_counts(enc: Any, a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    m = len(enc.models)
    lo, hi = np.minimum(enc.ia, enc.ib), np.maximum(enc.ia, enc.ib)
    table = np.bincount(lo * m + hi, minlength=m * m)
    return np.asarray(table[np.minimum(a_codes, b_codes) * m + np.maximum(a_codes, b_codes)], dtype=np.int64)
