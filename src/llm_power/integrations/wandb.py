"""Weights & Biases out (the ``wandb`` extra): :func:`log_wandb` writes a diagnosis to a run -- the pairs
table (``wandb.Table``), the HTML report (``wandb.Html``) and the flat per-pair metrics in the run's
summary; ``llm-power diagnose ... --wandb`` does the same. Offline runs (``WANDB_MODE=offline``) work
without a login and sync later (``wandb sync``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .._core.errors import LLMPowerError
from .._core.optional import require
from ._outputs import check_diagnosis, flat_metrics, pairs_frame, report_html

if TYPE_CHECKING:
    from ..resolution import Diagnosis

__all__ = ["log_wandb"]

_WHAT = "Weights & Biases (lp.log_wandb, --wandb)"


def log_wandb(result: Diagnosis, run: Any = None, *, project: str | None = None, prefix: str = "llm_power",
              html: bool = True, title: str = "Leaderboard resolution report") -> Any:
    """Log a diagnosis to a Weights & Biases run: the pairs table, the report and summary metrics.

    Parameters
    ----------
    result : Diagnosis
        From :func:`~llm_power.diagnose`.
    run : wandb Run, optional
        The run to log to; default the active run (``wandb.init()``), else a new run of ``project``
        (job type ``llm-power``), finished after logging.
    project : str, optional
        The project of a new run; default ``WANDB_PROJECT``, else ``"llm-power"``.
    prefix : str, default "llm_power"
        The first part of every key.
    html : bool, default True
        Also log the HTML report (``PREFIX/report``, a ``wandb.Html``).
    title : str, default "Leaderboard resolution report"
        The report's title.

    Returns
    -------
    wandb Run
        The run logged to (finished when this function started it).

    Notes
    -----
    ``PREFIX/pairs`` is :meth:`Diagnosis.to_frame` as a ``wandb.Table`` (one row per pair); the summary
    holds the numbers :func:`~llm_power.log_mlflow` logs as metrics, under the same names (per pair
    ``PREFIX/A_vs_B/gap``, ``ci_low``, ``ci_high``, ``pvalue``, ``n_star``, ``q``, ``resolved`` per regime
    and ``verdict``; ``PREFIX/n_unresolved[_REGIME]``, ``PREFIX/n_items``).

    Examples
    --------
    >>> import llm_power as lp
    >>> diag = lp.diagnose(lp.load_demo())  # doctest: +SKIP
    >>> lp.log_wandb(diag, project="evals")  # WANDB_MODE=offline: no login, sync later  # doctest: +SKIP
    """
    diag = check_diagnosis(result, "log_wandb")
    wandb = require("wandb", "wandb", _WHAT)
    started = False
    if run is None:
        run = wandb.run
    if run is None:
        errors = require("wandb.errors", "wandb", _WHAT)
        try:
            run = wandb.init(project=project or os.environ.get("WANDB_PROJECT") or "llm-power",
                             job_type="llm-power", reinit="create_new")
        except errors.Error as exc:  # no API key, no server: one line (offline mode needs neither)
            msg = f"Weights & Biases: {str(exc).splitlines()[0]} (or set WANDB_MODE=offline and sync later)"
            raise LLMPowerError(msg) from exc
        started = True
    logged: dict[str, Any] = {f"{prefix}/pairs": wandb.Table(dataframe=pairs_frame(diag))}
    if html:
        logged[f"{prefix}/report"] = wandb.Html(report_html(diag, title=title), inject=False, data_is_not_path=True)
    run.log(logged)
    run.summary.update(flat_metrics(diag, prefix))
    if started:
        run.finish()
    return run
