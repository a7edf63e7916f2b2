"""The winner's curse: inference on the score of a model chosen *because* it scored best
(Andrews, Kitagawa and McCloskey 2024, "Inference on Winners", QJE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._core.params import public
from .._core.results import ConfidenceInterval, Result, stored_interval
from .._core.typing import SeedLike
from .._core.validation import as_rng, check_open_unit, check_option
from ._section import carries_its_own, winner_of

__all__ = ["WINNER_TARGETS", "WinnerResult", "winners_curse"]

#: what is selected: the top model's score, the top model minus the second, a new model minus the best other
WINNER_TARGETS = ("winner", "top_gap", "new")


@dataclass(frozen=True, slots=True, repr=False)
class WinnerResult(Result):
    """Inference on a selected winner (see :func:`winners_curse`).

    Attributes
    ----------
    target : {"winner", "top_gap", "new"}
    selected : list of str
        The model(s) the data chose: the winner; the top two; the new model and the best other.
    estimate : float
        The naive estimate (the winner's mean score, or the gap), biased by the selection.
    se : float
    naive_ci : tuple of float
        estimate +- z se: ignores the selection, and covers less often than its level.
    median_unbiased : float
        The conditional median-unbiased estimate.
    conditional_ci : tuple of float
        Covers the selected target at the level given the selection (can be very wide when the
        winner barely won).
    hybrid_estimate : float
    hybrid_ci : tuple of float
        The hybrid interval (conditional inside the projection interval at level beta): covers at
        least the level unconditionally and at least (level - beta)/(1 - beta) conditionally.
    projection_ci : tuple of float
        estimate +- c_beta se, c_beta simultaneous over every target the selection could choose.
    beta, critical_value_projection, confidence_level : float
    truncation : tuple of float
        The interval of the estimate, given everything but it, that keeps the same selection.
    continuity_correction : float
        Half a step of the means' grid (1/(2n) for 0/1 scores): a tie at the top still counts as
        selected in the normal approximation.
    """

    target: str
    selected: list[Any]
    estimate: float
    se: float
    naive_ci: tuple[float, float]
    median_unbiased: float
    conditional_ci: tuple[float, float]
    hybrid_estimate: float
    hybrid_ci: tuple[float, float]
    projection_ci: tuple[float, float]
    beta: float
    critical_value_projection: float
    confidence_level: float
    truncation: tuple[float, float]
    continuity_correction: float

    _repr_fields = ("target", "selected", "estimate", "hybrid_estimate", "hybrid_ci")

    @public
    def confidence_interval(self, confidence_level: float | None = None, *,
                            method: str = "hybrid") -> ConfidenceInterval:
        """The winner's score interval by ``method``: ``"hybrid"`` (default, the selection-corrected
        one the report shows), ``"conditional"``, ``"projection"`` or ``"naive"`` (not corrected).
        """
        picked = {"hybrid": self.hybrid_ci, "conditional": self.conditional_ci, "projection": self.projection_ci,
                  "naive": self.naive_ci}.get(method, (None, None))
        low, high = picked
        return stored_interval(low, high, self.confidence_level, confidence_level,
                               recompute="run winners_curse(..., confidence_level=confidence_level)",
                               choice=("method", method, ("hybrid", "conditional", "projection", "naive")))
    _title = "Inference on a selected winner"

    def summary(self) -> str:
        """The naive and the corrected estimates and intervals."""
        first, second = self.selected[0], self.selected[-1]
        what = {"winner": f"score of the winner, {first}",
                "top_gap": f"gap of the winner, {first}, over the runner-up, {second}",
                "new": f"gap of {first} over the best other model, {second}"}[self.target]
        lv = f"{self.confidence_level:.0%}"

        def span(ci: tuple[float, float]) -> str:
            return f"[{ci[0]:.4f}, {ci[1]:.4f}]"

        return "\n".join([
            f"The {what} (chosen by the data):",
            f"  naive           {self.estimate:.4f}  {lv} CI {span(self.naive_ci)}  (ignores the selection)",
            f"  median-unbiased {self.median_unbiased:.4f}  conditional {lv} CI {span(self.conditional_ci)}",
            f"  hybrid          {self.hybrid_estimate:.4f}  hybrid {lv} CI {span(self.hybrid_ci)} "
            f"(beta = {self.beta:.3g})"])


@public
def winners_curse(data: Any, *, models: Any = None, cluster: Any = None, target: str = "winner",
                  new: Any = None, confidence_level: float | None = None, beta: float | None = None,
                  rng: SeedLike = None) -> WinnerResult:
    r"""The top model's score, the top gap, or "the new model beats the best existing one",
    corrected for having been selected by the same data (Andrews, Kitagawa and McCloskey 2024).

    Parameters
    ----------
    data : Diagnosis, or array_like or DataFrame of shape (n_items, n_models)
        A finished :func:`~llm_power.diagnose` (its models, clusters, runs and level), or per-item
        scores, every model on every item (0/1 or graded).
    models : sequence of str, optional
        With scores only.
    cluster : array_like, optional
        With scores only: one cluster label per item. The covariance of the means is
        cluster-robust (CR2, the variance of diagnose's per-model cluster intervals), scaled by
        (t_{G-1} / z)^2 so that the normal intervals are as wide as t intervals on G - 1 degrees of
        freedom.
    target : {"winner", "top_gap", "new"}, default "winner"
        The winner's score; the winner minus the runner-up; or ``new`` minus the best of the
        other models (the best being chosen by the data).
    new : str, optional
        The new model (``target="new"``; giving it implies that target).
    confidence_level : float, optional
        Default: the diagnosis's level, or 0.95 for scores.
    beta : float, optional
        Level of the projection step of the hybrid interval (default (1 - confidence_level)/10).
    rng : None, int or numpy.random.Generator
        For the simultaneous critical value of the projection interval (Gaussian draws).

    Returns
    -------
    WinnerResult

    Notes
    -----
    The means X are approximately N(mu, Sigma), Sigma the items' covariance over n (cluster-robust
    with ``cluster``; with runs each model's variance raised to its variance over items and runs).
    The target is Y = eta'X and the selection an event {A X <= 0} (the winner beats every other
    model, ...). With c = Sigma eta / (eta' Sigma eta) and Z = X - c Y, independent of Y, the
    selection is {L(Z) <= Y <= U(Z)}: given it, Y is N(eta'mu, eta'Sigma eta) truncated to [L, U].
    Inverting that distribution's CDF in the target gives the conditional interval and the
    median-unbiased estimate; the hybrid truncates further to the projection interval Y +- c_beta sd
    and works at (alpha - beta)/(1 - beta).

    Examples
    --------
    >>> import numpy as np
    >>> from llm_power import winners_curse
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((2000, 5)) < [0.70, 0.70, 0.69, 0.60, 0.50]).astype(int)
    >>> res = winners_curse(x, models=list("abcde"), rng=0)
    >>> res.selected, res.median_unbiased < res.estimate
    (['c'], True)
    """
    from ..resolution import diagnose

    target = check_option("new" if new is not None else target, "target", WINNER_TARGETS)
    if carries_its_own(data, models=models, cluster=cluster):
        diag = data
        level = float(diag.settings["confidence_level"]) if confidence_level is None else confidence_level
    else:
        level = 0.95 if confidence_level is None else confidence_level
        diag = diagnose(data, models=models, cluster=cluster, confidence_level=level, cluster_resamples=0, rng=0)
    b = None if beta is None else check_open_unit(beta, "beta")
    if b is not None and b >= 1.0 - level:
        msg = f"`beta` must be below 1 - confidence_level = {1.0 - level:g}; got {b:g}"
        raise ValueError(msg)
    names = list(diag.models)
    if len(names) < (3 if target == "top_gap" else 2):
        msg = f"target={target!r} needs at least {3 if target == 'top_gap' else 2} models"
        raise ValueError(msg)
    index = None
    if target == "new":
        if new not in names:
            shown = ", ".join(map(str, names[:5])) + (", ..." if len(names) > 5 else "")
            msg = f"new={new!r} is not one of the models ({shown})"
            raise ValueError(msg)
        index = names.index(new)
    out = winner_of(diag, level=level, gen=as_rng(rng), target=target, new=index, beta=b)
    return WinnerResult(**out)
