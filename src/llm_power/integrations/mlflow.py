"""MLflow in and out (the ``mlflow`` extra; ``mlflow-skinny`` is enough against a tracking server).

In: :func:`read_mlflow` reads the per-row results of MLflow evaluation runs -- ``mlflow.genai.evaluate``
runs (one trace per row, the scorer's feedback as the score) and ``mlflow.evaluate`` runs (the logged
``eval_results_table.json``) -- into the items x models :class:`~llm_power.ScoreMatrix`, one run per
model; ``llm-power diagnose mlflow://RUN_A mlflow://RUN_B`` reads the same way.

Out: :func:`log_mlflow` logs a diagnosis to a run: flat metrics per pair (gap, interval, p, N*, q and
the verdict under each regime), the pairs table (``mlflow.log_table``, ``llm_power/pairs.json``) and
the HTML report (``llm_power/report.html``); ``llm-power diagnose ... --mlflow`` does the same.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._core.errors import LLMPowerError
from .._core.optional import require
from ..io.formats.mlflow import SCHEME, mlflow_records, run_id_of
from ._outputs import check_diagnosis, flat_metrics, pair_verdicts, pairs_frame, report_html

if TYPE_CHECKING:
    from ..matrix import ScoreMatrix
    from ..resolution import Diagnosis

__all__ = ["PAIRS_TABLE", "REPORT_ARTIFACT", "log_mlflow", "read_mlflow"]

#: where :func:`log_mlflow` puts the pairs table and the HTML report among a run's artifacts
PAIRS_TABLE = "llm_power/pairs.json"
REPORT_ARTIFACT = "llm_power/report.html"
#: the tag :func:`log_mlflow` sets on a run it writes (such runs are not read as a model's results)
LOGGED_TAG = "llm_power.logged"
_WHAT = "MLflow (lp.read_mlflow, lp.log_mlflow, --mlflow)"


def _client(tracking_uri: str | None) -> Any:
    return require("mlflow.tracking", "mlflow", _WHAT).MlflowClient(tracking_uri=tracking_uri)


def _experiment_runs(client: Any, experiment: str) -> list[str]:
    """The finished runs of an experiment (by name or id), oldest first, but those llm-power logged."""
    found = client.get_experiment_by_name(experiment)
    if found is None and experiment.isdigit():
        found = client.get_experiment(experiment)
    if found is None:
        msg = f"`experiment` {experiment!r} is not an experiment of the tracking server {client.tracking_uri}."
        raise ValueError(msg)
    runs = client.search_runs([found.experiment_id], filter_string="attributes.status = 'FINISHED'",
                              order_by=["attributes.start_time ASC"], max_results=5000)
    return [r.info.run_id for r in runs if LOGGED_TAG not in r.data.tags]


def read_mlflow(runs: str | Sequence[str] | None = None, *, experiment: str | None = None,
                tracking_uri: str | None = None, metric: str | None = None, item_column: str | None = None,
                cluster: str | None = None, on_missing: str = "error") -> ScoreMatrix:
    """The items x models score matrix of MLflow evaluation runs (one run = one model).

    Parameters
    ----------
    runs : str or sequence of str, optional
        Run ids (or ``mlflow://RUN_ID``). Give ``runs`` or ``experiment``.
    experiment : str, optional
        An experiment's name or id: every finished run in it (oldest first), except runs that
        :func:`log_mlflow` wrote.
    tracking_uri : str, optional
        The tracking server (``http://127.0.0.1:5000``); default MLflow's own (``MLFLOW_TRACKING_URI``).
    metric : str, optional
        The score: the feedback name of ``mlflow.genai`` runs, or the column of an ``mlflow.evaluate``
        table; default the only feedback name, else the one ``*/score`` column, else a usual score column.
    item_column : str, optional
        The field of a row's inputs (or the table's column) that identifies the item; default a usual id
        field (item, id, doc_id, question_id, ...), else the inputs themselves as canonical JSON.
    cluster : str, optional
        The field (or column) of each row's cluster label.
    on_missing : {"error", "intersect"}, default "error"
        Items some run lacks: an error, or the items every run has (the dropped counts in ``.note``).

    Returns
    -------
    ScoreMatrix
        Items in the first run's order, models named by run name (``NAME (run id prefix)`` when two runs
        share a name).

    Notes
    -----
    ``mlflow.genai.evaluate`` runs hold one trace per row with the scorers' judgements as *feedback*
    assessments (``True``/``False``, numbers, ``"yes"``/``"no"``); ``mlflow.evaluate`` runs log the
    per-row table ``eval_results_table.json``. A run with traces is read from its traces.

    Examples
    --------
    >>> import llm_power as lp
    >>> m = lp.read_mlflow(["3f2a...", "9b1c..."], tracking_uri="http://127.0.0.1:5000")  # doctest: +SKIP
    >>> lp.diagnose(m).summary()  # doctest: +SKIP
    """
    import pandas as pd

    from ..io import align_results

    if (runs is None) == (experiment is None):
        msg = "give `runs` (run ids) or `experiment`, not both; got " + ("both." if runs is not None else "neither.")
        raise ValueError(msg)
    client = _client(tracking_uri)
    if experiment is not None:
        ids = _experiment_runs(client, experiment)
        if len(ids) < 2:
            msg = f"`experiment` {experiment!r} has {len(ids)} finished evaluation run(s); comparisons need two."
            raise ValueError(msg)
    else:
        given = [runs] if isinstance(runs, str) else list(runs or ())
        ids = [run_id_of(r) or str(r) for r in given]
    frames, names = [], []
    for run_id in ids:
        rows = list(mlflow_records(run_id, metric=metric, item_column=item_column, cluster=cluster,
                                   tracking_uri=client.tracking_uri))
        frames.append(pd.DataFrame({"item": [r.item for r in rows], "score": [r.score for r in rows],
                                    "cluster": [r.cluster for r in rows], "source": f"{SCHEME}://{run_id}"}))
        names.append(rows[0].model if rows else run_id)
    if len(set(names)) < len(names):
        names = [f"{name} ({run_id[:8]})" if names.count(name) > 1 else name for name, run_id in zip(names, ids,
                                                                                                     strict=True)]
    frame = pd.concat([f.assign(model=name) for f, name in zip(frames, names, strict=True)], ignore_index=True)
    if cluster is None:
        frame = frame.drop(columns="cluster")
    return align_results(frame, on_missing=on_missing)


def _experiment_id(client: Any, experiment: str | None) -> str:
    """The experiment to create a run in: ``experiment`` (by name, created when new), else MLflow's
    current one (``MLFLOW_EXPERIMENT_ID``/``MLFLOW_EXPERIMENT_NAME``), else the default experiment.
    """
    if experiment is None and os.environ.get("MLFLOW_EXPERIMENT_ID"):
        return os.environ["MLFLOW_EXPERIMENT_ID"]
    name = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if not name:
        return "0"
    found = client.get_experiment_by_name(name)
    return str(found.experiment_id) if found is not None else str(client.create_experiment(name))


def log_mlflow(result: Diagnosis, run_id: str | None = None, *, tracking_uri: str | None = None,
               experiment: str | None = None, prefix: str = "llm_power", html: bool = True,
               title: str = "Leaderboard resolution report") -> str:
    """Log a diagnosis to an MLflow run: flat metrics, the pairs table and the HTML report.

    Parameters
    ----------
    result : Diagnosis
        From :func:`~llm_power.diagnose`.
    run_id : str, optional
        The run to log to; default the active run (``mlflow.start_run()``), else a new run named
        ``llm-power`` (ended after logging).
    tracking_uri : str, optional
        The tracking server; default MLflow's own (``MLFLOW_TRACKING_URI``).
    experiment : str, optional
        The experiment of a new run (created when new); default MLflow's current one.
    prefix : str, default "llm_power"
        The first part of every metric name.
    html : bool, default True
        Also log the HTML report as the artifact ``llm_power/report.html``.
    title : str, default "Leaderboard resolution report"
        The report's title.

    Returns
    -------
    str
        The run id.

    Notes
    -----
    Metrics (step 0): ``PREFIX/A_vs_B/gap``, ``ci_low``, ``ci_high`` (and ``ci_low_cluster``,
    ``ci_high_cluster``, ``_run`` when computed), ``pvalue``, per regime computed
    ``n_star[_REGIME]``, ``q[_REGIME]``, ``resolved[_REGIME]`` (1/0), ``verdict`` (1 when the report's
    headline regime resolves the pair); ``PREFIX/n_unresolved[_REGIME]`` and ``PREFIX/n_items``. Names
    keep letters, digits and ``_-. /:``; any other character becomes ``_``. Non-finite numbers are not
    logged (the table carries them). The pairs table is :meth:`Diagnosis.to_frame` as logged by
    ``mlflow.log_table`` (``llm_power/pairs.json``; logging twice to one run appends rows, as
    ``log_table`` does). Tags: ``llm_power.logged``, ``llm_power.version``, ``llm_power.headline``.

    Examples
    --------
    >>> import llm_power as lp
    >>> diag = lp.diagnose(lp.read_mlflow(["3f2a...", "9b1c..."]))  # doctest: +SKIP
    >>> lp.log_mlflow(diag)  # a new run "llm-power" in the current experiment  # doctest: +SKIP
    """
    diag = check_diagnosis(result, "log_mlflow")
    exceptions = require("mlflow.exceptions", "mlflow", _WHAT)
    try:
        return _log(diag, run_id, _client(tracking_uri), experiment=experiment, prefix=prefix, html=html, title=title,
                    active=tracking_uri is None)
    except exceptions.MlflowException as exc:  # a missing run, a refused write: one line
        msg = f"MLflow: {str(exc).splitlines()[0]:.300}"
        raise LLMPowerError(msg) from exc


def _log(diag: Any, run_id: str | None, client: Any, *, experiment: str | None, prefix: str, html: bool, title: str,
         active: bool) -> str:
    """:func:`log_mlflow` once its arguments are checked."""
    entities = require("mlflow.entities", "mlflow", _WHAT)
    created = False
    if run_id is None:
        current = require("mlflow", "mlflow", _WHAT).active_run() if active else None
        if current is not None:
            run_id = str(current.info.run_id)
        else:
            run = client.create_run(_experiment_id(client, experiment), run_name="llm-power")
            run_id, created = str(run.info.run_id), True
    from .._version import __version__

    now = int(time.time() * 1000)
    metrics = [entities.Metric(key, value, now, 0) for key, value in flat_metrics(diag, prefix).items()]
    tags = [entities.RunTag(LOGGED_TAG, "true"), entities.RunTag("llm_power.version", __version__),
            entities.RunTag("llm_power.headline", diag.headline.key)]
    for start in range(0, max(len(metrics), 1), 1000):  # MLflow takes at most 1000 metrics a batch
        client.log_batch(run_id, metrics=metrics[start:start + 1000], tags=tags if start == 0 else [])
    client.log_table(run_id, pairs_frame(diag), PAIRS_TABLE)
    if html:
        client.log_text(run_id, report_html(diag, title=title), REPORT_ARTIFACT)
    verdicts = pair_verdicts(diag)
    unresolved = sum(v["verdict"] == "unresolved" for v in verdicts)
    client.set_tag(run_id, "llm_power.verdict", f"{unresolved} of {len(verdicts)} pairs unresolved "
                                                f"({diag.headline.key})")
    if created:
        client.set_terminated(run_id)
    return run_id
