"""``llm-power diagnose RESULTS...``: the leaderboard resolution report from eval-harness outputs."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core.dask import ENGINES, TABLE_ENGINES
from .._core.progress import step
from ..io.safe import parse_once
from ..report.files import check_output_folder, check_outputs, write_atomic
from ..report.schema import with_pair_inference
from ..report.terminal import dump_json, safe_text, say
from ._json import document
from ._types import HelpFormatter, UsageError, add_reader_options, nonnegative_int, positive_int

HELP = "leaderboard resolution: which gaps between models can the benchmark resolve?"
#: the names of the command's steps in progress reports (the core reports the steps inside them);
#: the step of diagnose covers the import of the statistics libraries it needs
READ_STEP, DIAGNOSE_STEP = "reading results", "diagnose: pairs and regimes"
EPILOG = """examples:
  llm-power diagnose out/ --cluster subject            # lm-eval --log_samples output folder(s)
  llm-power diagnose logs/*.eval --cluster subject     # inspect_ai logs (metadata.subject)
  llm-power diagnose benchmark_output/runs/v1/         # HELM run folders (test split)
  llm-power diagnose scores.csv --cluster category --correction holm --anytime --html report.html
  llm-power diagnose mlflow://RUN_A mlflow://RUN_B --mlflow  # MLflow evaluation runs, logged back
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("diagnose", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=HelpFormatter)
    add_options(p)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="result files or folders: lm-eval samples_*.jsonl, inspect .eval/.json, HELM run folders, "
                        "lighteval details_*.parquet, CSV/TSV/JSONL/Parquet (long: model,item,score; or wide), or "
                        "MLflow evaluation runs mlflow://RUN_ID")
    add_reader_options(p, missing="some model lacks")
    add_receipt_option(p)
    p.add_argument("--run", dest="run_field", metavar="FIELD",
                   help="several runs per model (seeds, templates, engines): the column or harness field that names "
                        "a run (seed, temperature, engine, template, a dotted path, file, folder); adds the run "
                        "regime (default: none)")
    p.add_argument("--engine", default="local", choices=ENGINES,
                   help="where RESULTS are read and reduced: this machine (default); a Dask cluster (RESULTS may "
                        "be fsspec URLs: s3://, gs://, hf://); or, for long tables (Parquet, CSV, JSONL), DuckDB "
                        "out of core, a Spark session (RESULTS may name a table) or a Ray cluster. Each engine "
                        "needs the extra of its name")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler or Ray cluster address, e.g. tcp://10.0.0.5:8786, ray://10.0.0.5:10001 "
                        "(default: a local cluster for the run)")
    p.add_argument("--master", metavar="URL",
                   help="Spark master, e.g. local[4], spark://10.0.0.5:7077 (default: the active session, "
                        "else local[*])")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="worker processes of a local Dask or Ray cluster, cores of local Spark (default: the "
                        "CPU count)")
    add_tracker_options(p)
    p.set_defaults(run=run)


def add_receipt_option(p: argparse.ArgumentParser) -> None:
    """``--receipt FILE``: the sufficient statistics behind every verdict (``llm-power verify`` re-checks it)."""
    p.add_argument("--receipt", dest="receipt_out", metavar="FILE",
                   help="also write a receipt: the statistics behind every verdict, the settings and the inputs' "
                        "SHA-256, for llm-power verify FILE to re-check without the items (default: none)")


def add_tracker_options(p: argparse.ArgumentParser) -> None:
    """The options that send the report to MLflow or Weights & Biases (and read MLflow runs)."""
    p.add_argument("--mlflow", nargs="?", const="", metavar="RUN",
                   help="also log the report to MLflow: per-pair metrics, the pairs table, the HTML report; "
                        "to run RUN (default: a new run 'llm-power'; needs llm-power[mlflow])")
    p.add_argument("--mlflow-tracking-uri", metavar="URI",
                   help="the MLflow server of mlflow://RUN_ID inputs and --mlflow (default: "
                        "MLFLOW_TRACKING_URI, else MLflow's own default)")
    p.add_argument("--wandb", action="store_true",
                   help="also log the report to a new Weights & Biases run: the pairs table, the HTML "
                        "report, summary metrics (project: WANDB_PROJECT, else llm-power; default: off)")


def log_trackers(args: argparse.Namespace, diag: Any) -> None:
    """Send the diagnosis to the trackers the flags asked for (after the report is out)."""
    import contextlib

    stream = sys.stderr if args.format == "json" else sys.stdout
    with contextlib.redirect_stdout(stream):  # the trackers' own lines never mix into the JSON
        if getattr(args, "mlflow", None) is not None:
            from ..integrations.mlflow import log_mlflow

            run_id = log_mlflow(diag, args.mlflow or None, tracking_uri=getattr(args, "mlflow_tracking_uri", None))
            say(f"logged to MLflow run {run_id}", stream)
        if getattr(args, "wandb", False):
            from ..integrations.wandb import log_wandb

            run = log_wandb(diag)
            say(f"logged to Weights & Biases run {run.id}", stream)


def add_declared_options(p: argparse.ArgumentParser, *, skip: tuple[str, ...] = ()) -> None:
    """A flag for every option the regimes of ``llm_power.resolution.REGIMES`` declare (their check as
    its type: a bad value is a usage error naming the flag), but ``skip``.
    """
    from ..resolution import REGIMES

    for regime in REGIMES:
        for option in regime.options:
            if option.name in skip or option.flag is None:
                continue
            extra = dict(option.cli)
            if "action" not in extra and "choices" not in extra:
                extra["type"] = option.cli_type()
            p.add_argument(option.flag, dest=option.name, default=option.default, help=option.help, **extra)


def add_declared_option(p: argparse.ArgumentParser, name: str) -> None:
    """The flag of one option a regime of ``llm_power.resolution.REGIMES`` declares (``compare`` and
    ``gate`` take the clustered test's choice from there: one declaration, one check).
    """
    from ..resolution import REGIMES

    option = next(o for regime in REGIMES for o in regime.options if o.name == name and o.flag is not None)
    assert option.flag is not None  # noqa: S101 -- chosen above
    extra = dict(option.cli)
    if "action" not in extra and "choices" not in extra:
        extra["type"] = option.cli_type()
    p.add_argument(option.flag, dest=option.name, default=option.default, help=option.help, **extra)


def add_rank_options(p: argparse.ArgumentParser) -> None:
    """The options of the rankings section (``lp.rank_report``)."""
    p.add_argument("--ranks", choices=("auto", "on", "off"), default="auto",
                   help="the rankings section: simultaneous rank intervals, who can be #1, the winner corrected for "
                        "selection, items that flip each gap (default auto: up to 100 models)")
    p.add_argument("--rank-resamples", type=positive_int, default=1000, metavar="B",
                   help="bootstrap resamples of the rank intervals' critical value (default 1000)")
    p.add_argument("--rank-method", choices=("auto", "bootstrap", "gaussian"), default="auto",
                   help="critical value of the rank intervals: the bootstrap, or its normal limit (default auto: "
                        "the bootstrap up to 2,000,000 resampled items)")
    p.add_argument("--fragile-share", type=float, default=0.001, metavar="S",
                   help="a gap is fragile when removing at most this share of the items flips it (default 0.001)")


def add_options(p: argparse.ArgumentParser) -> None:
    """Add the options diagnose shares with demo and rank."""
    p.add_argument("--cluster", metavar="FIELD",
                   help="cluster label: a column, inspect metadata or lm-eval doc field (default: none, items "
                        "independent)")
    p.add_argument("--cluster-fine", metavar="FIELD",
                   help="a finer clustering nested in --cluster (e.g. src inside category): test whether the "
                        "--cluster level matters beyond it (coarse vs fine; the inputs are read once more; "
                        "default: none)")
    add_declared_options(p)
    add_rank_options(p)
    p.add_argument("--seed", type=nonnegative_int, default=0,
                   help="random seed of the cluster bootstrap and the rank intervals (default 0)")
    p.add_argument("--wide", action="store_true",
                   help="every column (N*, q and verdict per regime, CIs) at full width, every pair; default: a "
                        "compact verdict-first table that fits the terminal")
    p.add_argument("--json", dest="json_out", metavar="FILE",
                   help="also write the report as JSON ('-': stdout; default: none)")
    p.add_argument("--markdown", dest="markdown_out", metavar="FILE",
                   help="also write the report as Markdown ('-': stdout; default: none)")
    p.add_argument("--parquet", dest="parquet_out", metavar="FILE",
                   help="also write every pair's columns as a Parquet table (for millions of pairs; default: none)")
    p.add_argument("--html", dest="html_out", metavar="FILE",
                   help="also write the self-contained HTML report ('-': stdout; default: none)")
    p.add_argument("--eee", dest="eee_dir_out", metavar="DIR",
                   help="also write one Every Eval Ever record per model into DIR, the uncertainty block filled "
                        "(default: none)")
    p.add_argument("--eee-benchmark", metavar="NAME",
                   help="the records' evaluation_name (default: the task the item ids share, else 'benchmark')")


def run_diagnosis(args: argparse.Namespace, models: list[str], x: Any, clusters: Any, *, source: str,
                  inputs: tuple[Any, ...], note: str = "", title: str = "Leaderboard resolution report",
                  next_line: str = "", options: Any = None) -> int:
    """Diagnose an aligned matrix, print the report and write the requested files (``options``: the
    checked options, default from the flags).
    """
    check_outputs([args.json_out, args.markdown_out, args.html_out, getattr(args, "parquet_out", None)], inputs)
    options = diagnose_options(args) if options is None else options
    with step(DIAGNOSE_STEP):
        from ..resolution import diagnose

        diag = diagnose(x, models=models, cluster=clusters, options=options, rng=args.seed)
    return report_diagnosis(args, diag, x, models, clusters, source=source, inputs=inputs, note=note, title=title,
                            next_line=next_line)


def diagnose_options(args: argparse.Namespace) -> Any:
    """The checked options of diagnose (a ``DiagnoseOptions``) from the command line's flags."""
    from ..resolution import REGIMES, DiagnoseOptions

    names = [o.name for r in REGIMES for o in r.options]
    return DiagnoseOptions.create(**{name: getattr(args, name) for name in names if hasattr(args, name)})


def rank_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``lp.rank_report`` from the command line's flags."""
    return {"ranks": {"auto": None, "on": True, "off": False}[getattr(args, "ranks", "auto")],
            "n_resamples": getattr(args, "rank_resamples", 1000), "method": getattr(args, "rank_method", "auto"),
            "fragile_share": getattr(args, "fragile_share", 0.001), "rng": args.seed}


def report_diagnosis(args: argparse.Namespace, diag: Any, x: Any, models: list[str] | None, clusters: Any, *,
                     source: str, inputs: tuple[Any, ...], note: str = "",
                     title: str = "Leaderboard resolution report", next_line: str = "", rankings: Any = None) -> int:
    """Print the report of a diagnosis and write the requested files (``x``: the matrix, when it
    is in memory, for the per-cluster table of the HTML report).
    """
    from ..rankings import rank_report
    from ..report.view import build_view

    if rankings is None:
        rankings = rank_report(diag, **rank_options(args))
    parquet_out = getattr(args, "parquet_out", None)
    cluster_name = args.cluster or "cluster"
    view = build_view(diag, cluster_name=cluster_name, max_rows=0, rankings=rankings)
    eee_out = getattr(args, "eee_dir_out", None)
    others = tuple(getattr(args, k, None) for k in ("json_out", "markdown_out", "html_out", "parquet_out"))
    if eee_out:  # a record that would replace another output of the run: refused before anything is written
        from ..report.eee import check_eee_paths

        check_eee_paths(diag, eee_out, others)
    outputs = []
    receipt_doc = None
    if getattr(args, "receipt_out", None):  # computed before anything is written: a refusal leaves no file
        from ..integrations.receipts import receipt

        receipt_doc = receipt(diag, inputs=inputs, cluster_field=args.cluster)
    if args.json_out or args.format == "json":  # every pair as an object: built only when asked for
        payload = document(args, with_pair_inference({
            "source": source, "note": note, "verdict": view.sentences, "next": view.next_steps,
            "labels": view.labels(), **diag.to_dict(), "rankings": rankings.to_dict()}))
    if args.json_out:
        import json

        from .._core.results import to_plain

        outputs.append(write_atomic(args.json_out, json.dumps(to_plain(payload), indent=2, sort_keys=True,
                                                               allow_nan=False) + "\n", inputs=inputs))
    if receipt_doc is not None:
        from ..resolution import dump_receipt

        outputs.append(write_atomic(args.receipt_out, dump_receipt(receipt_doc), inputs=inputs))
    if parquet_out:
        from ..report.parquet import write_pairs

        outputs.append(write_atomic(parquet_out, lambda fh: write_pairs(diag, fh, labels=view.labels()),
                                    inputs=inputs))
    if args.markdown_out:
        from ..report.markdown import render_markdown

        outputs.append(write_atomic(args.markdown_out, render_markdown(diag, title=title, cluster_name=cluster_name,
                                                                       rankings=rankings), inputs=inputs))
    if args.html_out:
        from ..report.html import render_html

        html = render_html(diag, title=title, source=source, scores=x, score_models=models, clusters=clusters,
                           cluster_name=cluster_name, note=note, rankings=rankings)
        outputs.append(write_atomic(args.html_out, html, inputs=inputs))
    if eee_out:
        from ..report.eee import write_eee

        benchmark = getattr(args, "eee_benchmark", None) or getattr(args, "shared_task", None) or "benchmark"
        outputs.extend(write_eee(diag, eee_out, inputs=inputs, others=others, benchmark=benchmark))
    if args.format == "json":
        dump_json(payload)
    else:
        from ..report.terminal_report import print_report

        print_report(diag, note=note, cluster_name=cluster_name, wide=getattr(args, "wide", False), rankings=rankings)
        for path in outputs:
            if path != "-":
                print(safe_text(f"report: {_shown_path(path)}"))  # one line, never wrapped: copyable
        if next_line:
            say(f"next: {next_line}")
    return 0


@dataclass
class Loaded:
    """A diagnosis read from the command line's inputs, with what its report shows beside it."""

    diag: Any
    x: Any  # the matrix in memory (None for item shards)
    models: list[str] | None
    clusters: Any
    source: str
    inputs: tuple[Any, ...]
    note: str = ""
    rankings: Any = None  # computed where the source lives (item shards: before their cluster closes)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    check_outputs([args.json_out, args.markdown_out, args.html_out, args.parquet_out],
                  args.results)  # before reading anything
    check_output_folder(args.eee_dir_out, args.results,
                        [args.json_out, args.markdown_out, args.html_out, args.parquet_out])
    if getattr(args, "mlflow_tracking_uri", None):  # the server of mlflow://RUN_ID inputs
        from .._core.optional import require

        require("mlflow", "mlflow", "--mlflow-tracking-uri").set_tracking_uri(args.mlflow_tracking_uri)
    loaded = load_diagnosis(args)
    if isinstance(loaded, int):
        return loaded
    code = report_diagnosis(args, loaded.diag, loaded.x, loaded.models, loaded.clusters, source=loaded.source,
                            inputs=loaded.inputs, note=loaded.note, rankings=loaded.rankings)
    log_trackers(args, loaded.diag)
    return code


@parse_once()
def load_diagnosis(args: argparse.Namespace) -> Loaded | int:
    """Read RESULTS as diagnose does (harness outputs or tables; several runs with --run; item shards with
    --engine dask) and diagnose them with the flags' options; an int is the exit code after a
    one-model summary was printed. ``llm-power diagnose`` and ``llm-power rank`` both load this way.
    """
    from ..io.detect import companion_files, expand_paths

    source = ", ".join(str(p) for p in args.results)
    outputs = [getattr(args, k, None) for k in ("json_out", "markdown_out", "html_out", "parquet_out")]
    fine_field = getattr(args, "cluster_fine", None)
    if fine_field and not args.cluster:
        msg = "--cluster-fine is a finer clustering nested in --cluster: give --cluster too"
        raise UsageError(msg)
    engine = getattr(args, "engine", "local")
    if fine_field and (args.run_field or engine != "local"):
        msg = f"--cluster-fine is not available with --run or --engine {engine} (its sums are formed in memory)"
        raise UsageError(msg)
    if engine != "local" and args.run_field:
        msg = f"--run is not available with --engine {engine} (the runs are read on this machine)"
        raise UsageError(msg)
    if engine == "dask":
        return _load_dask(args, source, outputs)
    table = engine in TABLE_ENGINES
    paths = [] if table else expand_paths(args.results)
    if table:
        from ..engines._tables import input_files

        local = [p for p in args.results if Path(p).exists()]  # a Spark table's name is not a file
        paths = input_files(local) if local else []
    inputs = tuple(args.results) + tuple(paths) + tuple(companion_files(paths))
    if args.run_field:
        return _load_runs(args, paths, inputs, source, outputs)
    with step(READ_STEP):
        aligned = _engine_matrix(args) if table else load_aligned(paths, args)
    if isinstance(aligned, int):
        return aligned
    tasks = {str(item).rsplit(":", 1)[0] for item in aligned.items if ":" in str(item)}
    args.shared_task = next(iter(tasks)) if len(tasks) == 1 and len(aligned.items) else None
    check_outputs(outputs, inputs)
    fine = _fine_labels(paths, args, aligned.items) if fine_field else None
    with step(DIAGNOSE_STEP):
        from ..resolution import diagnose

        diag = diagnose(aligned.scores, models=aligned.models, cluster=aligned.clusters,
                        options=diagnose_options(args), rng=args.seed, cluster_fine=fine)
    return Loaded(diag, aligned.scores, aligned.models, aligned.clusters, source, inputs, aligned.note)


def _engine_matrix(args: argparse.Namespace) -> Any:
    """The aligned matrix of long tables read by a table engine (DuckDB, Spark, Ray)."""
    from ..engines.tables import read_matrix

    return read_matrix(args.results, engine=args.engine, on_missing=args.on_missing, format=args.input_format,
                       metric=args.metric, cluster=args.cluster, item_column=args.id_column, master=args.master,
                       scheduler=args.scheduler, n_workers=args.workers)


def _load_runs(args: argparse.Namespace, paths: list[Any], inputs: tuple[Any, ...], source: str,
               outputs: list[Any]) -> Loaded:
    """Several runs per model: the run means for every regime, and the run regime."""
    from ..io import read_runs

    with step(READ_STEP):
        runs = read_runs(paths, run=args.run_field, format=args.input_format, metric=args.metric,
                         cluster=args.cluster, on_missing=args.on_missing, item_column=args.id_column)
    check_outputs(outputs, inputs)
    with step(DIAGNOSE_STEP):
        from ..resolution import diagnose

        diag = diagnose(runs=runs, options=diagnose_options(args), rng=args.seed)
    averaged = runs.averaged()
    counts = sorted(set(runs.runs.tolist()))
    span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    what = f"{span} runs per model ({args.run_field!r}); scores are each item's mean over its runs"
    note = "; ".join(t for t in (what, runs.note) if t)
    return Loaded(diag, averaged.scores, averaged.models, averaged.clusters, source, inputs, note)


def _load_dask(args: argparse.Namespace, source: str, outputs: list[Any]) -> Loaded:
    """Read, align and reduce on a Dask cluster; the rankings too, while the shards are up."""
    from ..engines.dask import load_and_diagnose
    from ..io.detect import companion_files, expand_paths

    local = [p for p in args.results if "://" not in str(p)]
    paths = expand_paths(local) if local else []
    inputs = tuple(local) + tuple(paths) + tuple(companion_files(paths))
    check_outputs(outputs, inputs)
    diag, rankings, note = load_and_diagnose(
        args.results, engine="dask", scheduler=args.scheduler, n_workers=args.workers,
        read={"format": args.input_format, "metric": args.metric, "cluster": args.cluster, "split": args.split,
              "filter": args.filter, "item_column": args.id_column},
        on_missing=args.on_missing, options=diagnose_options(args), rng=args.seed, rankings=rank_options(args))
    return Loaded(diag, None, None, None, source, inputs, note, rankings)


def _fine_labels(paths: list[Any], args: argparse.Namespace, items: Any) -> list[Any]:
    """The --cluster-fine label of each aligned item: the inputs read once more by the same reader with
    that field as the cluster label (the readers carry one label field), matched by item id.
    """
    import dataclasses
    import warnings

    from ._reader import ReaderOptions, load_matrix

    with warnings.catch_warnings():  # the first read said what there is to say about these files
        warnings.simplefilter("ignore")
        again = load_matrix(dataclasses.replace(ReaderOptions.from_args(args), cluster=args.cluster_fine), paths)
    label = dict(zip(again.items, again.clusters or [], strict=True))
    missing = [it for it in items if it not in label]
    if missing or again.clusters is None:
        msg = (f"--cluster-fine {args.cluster_fine!r}: no label for {len(missing) or len(items):,} item(s) "
               f"(first: {(missing or list(items))[0]!r})")
        raise UsageError(msg)
    return [label[it] for it in items]


def load_aligned(paths: list[Any], args: argparse.Namespace) -> Any:
    """The aligned matrix of the inputs (:func:`cli._reader.load_matrix`), or the exit code after
    printing a one-model summary.
    """
    from ._reader import OneModel, ReaderOptions, load_matrix
    from .one_model import print_one_model

    loaded = load_matrix(ReaderOptions.from_args(args), paths, one_model=True)
    if isinstance(loaded, OneModel):  # one model: its score and interval, and where to go next
        return print_one_model(args, loaded.name, loaded.scores, loaded.clusters)
    return loaded


def _shown_path(path: Any) -> str:
    """Where a report was written, as the user can use it: relative to the working folder when
    inside it (short enough for an 80-column line), else absolute.
    """
    full = Path(path).resolve()
    try:
        return str(full.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(full)


