"""``llm-power diagnose RESULTS...``: the leaderboard resolution report from eval-harness outputs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._core.options import CORRECTIONS
from ..report.files import check_output_folder, check_outputs, write_atomic
from ..report.terminal import dump_json, safe_text, say
from ._types import DESIGN_EFFECTS, INPUT_FORMATS, add_run_pairing, nonnegative_int, positive_int

HELP = "leaderboard resolution: which gaps between models can the benchmark resolve?"
EPILOG = """examples:
  llm-power diagnose out/ --cluster subject            # lm-eval --log_samples output folder(s)
  llm-power diagnose logs/*.eval --cluster subject     # inspect_ai logs (metadata.subject)
  llm-power diagnose benchmark_output/runs/v1/         # HELM run folders (test split)
  llm-power diagnose scores.csv --cluster category --correction holm --anytime --html report.html
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("diagnose", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(p)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="result files or folders: lm-eval samples_*.jsonl, inspect .eval/.json, HELM run folders, "
                        "lighteval details_*.parquet, or CSV/TSV/JSONL/Parquet (long: model,item,score; or wide)")
    p.add_argument("--input-format", default="auto", choices=INPUT_FORMATS, metavar="FORMAT",
                   help="force the input format: %(choices)s (default auto)")
    p.add_argument("--metric", "--score-column", dest="metric", metavar="COL",
                   help="per-item metric / score column (default per format: score, correct, acc, ...; an unknown "
                        "one lists the available)")
    p.add_argument("--id-column", metavar="COL",
                   help="item id column of plain tables (default: item, item_id, id, doc_id, seg_id, ...)")
    p.add_argument("--split", default="test", help="HELM split (default test)")
    p.add_argument("--filter", help="lm-eval filter when a task wrote "
                                    "several, e.g. strict-match (default: the only one)")
    p.add_argument("--on-missing", default="error", choices=("error", "intersect"),
                   help="items some model lacks: error (default) or keep the intersection and report drops")
    p.add_argument("--run", dest="run_field", metavar="FIELD",
                   help="several runs per model (seeds, templates, engines): the column or harness field that names "
                        "a run (seed, temperature, engine, template, a dotted path, file, folder); adds the run "
                        "regime (default: none)")
    add_run_pairing(p)
    p.add_argument("--engine", default="local", choices=("local", "dask"),
                   help="read and reduce on this machine (default) or on a Dask cluster (needs llm-power[dask]; "
                        "RESULTS may then be fsspec URLs: s3://, gs://, hf://)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: a local cluster for the run)")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="worker processes of the local Dask cluster (default: the CPU count)")
    p.set_defaults(run=run)


def add_options(p: argparse.ArgumentParser) -> None:
    """Add the options diagnose shares with demo."""
    p.add_argument("--cluster", metavar="FIELD",
                   help="cluster label: a column, inspect metadata or lm-eval doc field (default: none, items "
                        "independent)")
    p.add_argument("--pairs", default="adjacent", choices=("adjacent", "all"),
                   help="adjacent models in the ranking (default) or all pairs")
    p.add_argument("--correction", choices=CORRECTIONS,
                   help="multiplicity stress test across the pairs (default: none)")
    p.add_argument("--anytime", action="store_true", help="anytime-valid (continuously monitored) stress test")
    p.add_argument("--top", type=positive_int, metavar="K", help="only the K best models (default: all)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power of N* (default 0.8)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of every interval in the report (default 0.95)")
    p.add_argument("--design-effect", default="robust", choices=DESIGN_EFFECTS, metavar="MODEL",
                   help="clustered regime, one of %(choices)s: robust = measured CR2 design effect with "
                        "Imbens-Kolesar df (default), cr1 = CR1 with G - 1 df, anova = ANOVA ICC with Kish's size, "
                        "paper = the paper's mean-size form (reproduction only)")
    p.add_argument("--cluster-resamples", type=nonnegative_int, default=1000, metavar="B",
                   help="cluster bootstrap resamples of the clustered unresolved count (default 1000; 0: none)")
    p.add_argument("--max-pairs", type=nonnegative_int, default=200_000, metavar="P",
                   help="refuse reports with more pairs (default 200,000; --pairs all grows with models squared)")
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
    p.add_argument("--eee", dest="eee_out", metavar="DIR",
                   help="also write one Every Eval Ever record per model into DIR, the uncertainty block filled "
                        "(default: none)")
    p.add_argument("--eee-benchmark", metavar="NAME",
                   help="the records' evaluation_name (default: the task the item ids share, else 'benchmark')")


def run_diagnosis(args: argparse.Namespace, models: list[str], x: Any, clusters: Any, *, source: str,
                  inputs: tuple[Any, ...], note: str = "", title: str = "Leaderboard resolution report",
                  next_line: str = "") -> int:
    """Diagnose an aligned matrix, print the report and write the requested files."""
    from ..resolution import diagnose

    check_outputs([args.json_out, args.markdown_out, args.html_out, getattr(args, "parquet_out", None)], inputs)
    diag = diagnose(x, models=models, cluster=clusters, **diagnose_options(args))
    return report_diagnosis(args, diag, x, models, clusters, source=source, inputs=inputs, note=note, title=title,
                            next_line=next_line)


def diagnose_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of diagnose from the command line."""
    return {"pairs": args.pairs, "alpha": args.alpha, "power": args.power,
            "confidence_level": args.confidence_level, "correction": args.correction, "anytime": args.anytime,
            "design_effect": args.design_effect, "cluster_resamples": args.cluster_resamples,
            "max_pairs": getattr(args, "max_pairs", 200_000), "top": args.top,
            "ranks": {"auto": None, "on": True, "off": False}[getattr(args, "ranks", "auto")],
            "rank_resamples": getattr(args, "rank_resamples", 1000),
            "rank_method": getattr(args, "rank_method", "auto"),
            "fragile_share": getattr(args, "fragile_share", 0.001), "rng": args.seed}


def report_diagnosis(args: argparse.Namespace, diag: Any, x: Any, models: list[str] | None, clusters: Any, *,
                     source: str, inputs: tuple[Any, ...], note: str = "",
                     title: str = "Leaderboard resolution report", next_line: str = "") -> int:
    """Print the report of a diagnosis and write the requested files (``x``: the matrix, when it
    is in memory, for the per-cluster table of the HTML report).
    """
    from ..report.view import build_view

    parquet_out = getattr(args, "parquet_out", None)
    cluster_name = args.cluster or "cluster"
    view = build_view(diag, cluster_name=cluster_name, max_rows=0)
    outputs = []
    if args.json_out or args.format == "json":  # every pair as an object: built only when asked for
        payload = {"source": source, "note": note, "verdict": view.sentences, "next": view.next_steps,
                   "labels": view.labels(), **diag.to_dict()}
    if args.json_out:
        import json

        from .._core.results import to_plain

        outputs.append(write_atomic(args.json_out, json.dumps(to_plain(payload), indent=2, sort_keys=True,
                                                               allow_nan=False) + "\n", inputs=inputs))
    if parquet_out:
        from ..report.parquet import write_pairs

        outputs.append(write_atomic(parquet_out, lambda fh: write_pairs(diag, fh, labels=view.labels()),
                                    inputs=inputs))
    if args.markdown_out:
        from ..report.markdown import render_markdown

        outputs.append(write_atomic(args.markdown_out, render_markdown(diag, title=title, cluster_name=cluster_name),
                                    inputs=inputs))
    if args.html_out:
        from ..report.html import render_html

        html = render_html(diag, title=title, source=source, scores=x, score_models=models, clusters=clusters,
                           cluster_name=cluster_name, note=note)
        outputs.append(write_atomic(args.html_out, html, inputs=inputs))
    eee_out = getattr(args, "eee_out", None)
    if eee_out:
        from ..report.eee import write_eee

        benchmark = getattr(args, "eee_benchmark", None) or getattr(args, "shared_task", None) or "benchmark"
        outputs.extend(write_eee(diag, eee_out, inputs=inputs, benchmark=benchmark))
    if args.format == "json":
        dump_json(payload)
    else:
        from ..report.terminal_report import print_report

        print_report(diag, note=note, cluster_name=cluster_name, wide=getattr(args, "wide", False))
        for path in outputs:
            if path != "-":
                print(safe_text(f"report: {_shown_path(path)}"))  # one line, never wrapped: copyable
        if next_line:
            say(f"next: {next_line}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..io.detect import companion_files, expand_paths

    check_outputs([args.json_out, args.markdown_out, args.html_out, args.parquet_out],
                  args.results)  # before reading anything
    check_output_folder(args.eee_out, args.results)
    if args.engine == "dask":
        if args.run_field:
            msg = "--run is not available with --engine dask (the runs are read on this machine)"
            raise ValueError(msg)
        return _run_dask(args)
    paths = expand_paths(args.results)
    if args.run_field:
        return _run_runs(args, paths, tuple(args.results) + tuple(paths) + tuple(companion_files(paths)))
    aligned = load_aligned(paths, args)
    if isinstance(aligned, int):
        return aligned
    source = ", ".join(str(p) for p in args.results)
    tasks = {str(item).rsplit(":", 1)[0] for item in aligned.items if ":" in str(item)}
    args.shared_task = next(iter(tasks)) if len(tasks) == 1 and len(aligned.items) else None
    return run_diagnosis(args, aligned.models, aligned.scores, aligned.clusters, source=source,
                         inputs=tuple(args.results) + tuple(paths) + tuple(companion_files(paths)), note=aligned.note)


def _run_runs(args: argparse.Namespace, paths: list[Any], inputs: tuple[Any, ...]) -> int:
    """Several runs per model: the run means for every regime, and the run regime."""
    from ..io import read_runs
    from ..resolution import diagnose

    runs = read_runs(paths, run=args.run_field, format=args.input_format, metric=args.metric, cluster=args.cluster,
                     on_missing=args.on_missing, item_column=args.id_column)
    check_outputs([args.json_out, args.markdown_out, args.html_out, getattr(args, "parquet_out", None)], inputs)
    diag = diagnose(runs=runs, run_pairing=args.run_pairing, **diagnose_options(args))
    averaged = runs.averaged()
    counts = sorted(set(runs.runs.tolist()))
    span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    what = f"{span} runs per model by {args.run_field}; scores are each item's mean over its runs"
    note = "; ".join(t for t in (what, runs.note) if t)
    return report_diagnosis(args, diag, averaged.scores, averaged.models, averaged.clusters,
                            source=", ".join(str(p) for p in args.results), inputs=inputs, note=note)


def _run_dask(args: argparse.Namespace) -> int:
    """Read, align and reduce on a Dask cluster; the same report."""
    from ..engines.dask import load_and_diagnose
    from ..io.detect import companion_files, expand_paths

    local = [p for p in args.results if "://" not in str(p)]
    paths = expand_paths(local) if local else []
    inputs = tuple(local) + tuple(paths) + tuple(companion_files(paths))
    check_outputs([args.json_out, args.markdown_out, args.html_out, args.parquet_out], inputs)
    diag, note = load_and_diagnose(args.results, engine="dask", scheduler=args.scheduler, n_workers=args.workers,
                                   read={"format": args.input_format, "metric": args.metric, "cluster": args.cluster,
                                         "split": args.split, "filter": args.filter, "item_column": args.id_column},
                                   on_missing=args.on_missing, options=diagnose_options(args))
    return report_diagnosis(args, diag, None, None, None, source=", ".join(str(p) for p in args.results),
                            inputs=inputs, note=note)


def load_aligned(paths: list[Any], args: argparse.Namespace) -> Any:
    """The aligned matrix of the inputs, or the exit code after printing a one-model summary.

    One wide table (CSV/TSV/JSONL/Parquet: an item column, a column per model) goes straight into
    the matrix; everything else through the long table of read_results. Both apply the same rules.
    """
    import numpy as np

    from ..io import align_results
    from ..io.align import align_matrix
    from ..io.harness import read_wide_table
    from .one_model import print_one_model

    wide = None
    if len(paths) == 1:
        wide = read_wide_table(paths[0], format=args.input_format, metric=args.metric, cluster=args.cluster,
                               item_column=args.id_column)
    if wide is not None:
        items, names, values, clusters = wide
        if len(names) == 1:  # one model: its score and interval, and where to go next
            keep = ~np.isnan(values[:, 0])
            return print_one_model(args, str(names[0]), values[keep, 0],
                                   None if clusters is None else [c for c, k in zip(clusters, keep, strict=True) if k])
        return align_matrix(items, names, values, clusters, on_missing=args.on_missing)
    frame = _read(paths, args)
    if frame["model"].nunique() == 1:
        return print_one_model(args, str(frame["model"].iloc[0]), frame["score"].to_numpy(),
                               frame["cluster"].tolist() if args.cluster and "cluster" in frame else None)
    return align_results(frame, on_missing=args.on_missing)


def _shown_path(path: Any) -> str:
    """Where a report was written, as the user can use it: relative to the working folder when
    inside it (short enough for an 80-column line), else absolute.
    """
    full = Path(path).resolve()
    try:
        return str(full.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(full)


def _read(paths: list[Any], args: argparse.Namespace) -> Any:
    """The long table of every input, read at once (large inputs in parallel processes)."""
    from ..io.harness import read_frame

    return read_frame(paths, format=args.input_format, metric=args.metric, cluster=args.cluster, split=args.split,
                        filter=args.filter, item_column=args.id_column)
