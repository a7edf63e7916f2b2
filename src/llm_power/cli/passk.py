"""``llm-power passk FILES --k 1 5 10``: pass@k with intervals for new questions and for these questions."""

from __future__ import annotations

import argparse
from typing import Any

from .._core.suggest import hint
from ..io.safe import parse_once
from ..report.schema import passk_inference
from ._json import document
from ._types import HelpFormatter, UsageError
from .diagnose import add_declared_option

HELP = "pass@k / pass^k from several samples per question, with intervals that name their population"

EPILOG = """examples:
  llm-power passk logs/ --k 1 5 10
  llm-power passk humaneval/model-a_eval_results.json humaneval/model-b_eval_results.json --k 1 10
  llm-power passk reports/*.json --instances swe_bench_verified_ids.txt --metric 'pass^k' --k 1 2 3
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("passk", parents=[parent], help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILES",
                   help="inspect logs (epochs > 1), lm-eval samples of a task run with repeats, EvalPlus "
                        "*_eval_results.json, SWE-bench run reports (<model>.<run>.json; runs are samples) or "
                        "long CSV/JSONL (model, item, sample, score)")
    p.add_argument("--k", type=int, nargs="+", default=[1], metavar="K", help="the k to report (default 1)")
    p.add_argument("--metric", dest="kind", choices=("pass@k", "pass^k", "avg@k"), default="pass@k",
                   help="pass@k (any of k passes), pass^k (all k pass) or avg@k (default pass@k)")
    p.add_argument("--score", dest="metric", metavar="NAME",
                   help="which score of the logs: an inspect scorer (scorer.key), an lm-eval pass@k metric or "
                        "EvalPlus 'base' / 'plus' (default: the first scorer; lm-eval's smallest pass@k; "
                        "EvalPlus plus)")
    p.add_argument("--cluster", metavar="KEY", help="inspect metadata key grouping questions (default: none)")
    add_declared_option(p, "cluster_method")
    p.add_argument("--instances", metavar="FILE",
                   help="SWE-bench instance ids, one per line: the denominator (default: the ids in the reports)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the intervals (default 0.95)")
    p.add_argument("--diagnose", type=int, metavar="K",
                   help="also rank every model at this k: the leaderboard resolution report on the per-question "
                        "estimates (default: off)")
    p.add_argument("--baseline", metavar="MODEL",
                   help="with two models: compare the other one minus this one (default: the first minus the second "
                        "in name order; the file order never matters)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap band (default 0)")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="also write the numbers as JSON (default: none)")
    p.set_defaults(run=run)


@parse_once()
def _read(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The long sample table and, per model in name order, its questions x samples matrix; checks
    ``--baseline``.
    """
    from .._core.errors import DataError
    from ..io.samples import read_samples, sample_matrices

    frame = read_samples(args.files, metric=args.metric, cluster=args.cluster, instances=args.instances)
    matrices = sample_matrices(frame)
    if args.baseline is not None and (len(matrices) != 2 or args.baseline not in matrices):
        shown = ", ".join(map(repr, list(matrices)[:5])) + (", …" if len(matrices) > 5 else "")
        msg = (f"--baseline {args.baseline!r} must name one of exactly two models{hint(args.baseline, matrices)} "
               f"(the files hold {len(matrices)}: {shown})")
        raise DataError(msg)
    return frame, matrices


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    import io

    from ..report.files import check_outputs, write_atomic
    from ..report.terminal import dump_json, say

    check_outputs([args.json_out], args.files)
    if args.cluster_method != "cr2" and not args.cluster:
        msg = f"--cluster-method {args.cluster_method} chooses the clustered test: it needs --cluster KEY"
        raise UsageError(msg)
    frame, matrices = _read(args)
    ks = sorted(set(args.k))
    payload: dict[str, Any] = {"metric": args.kind, "k": ks, "models": {}, "comparison": None}
    for model, wide in matrices.items():
        _one_model(args, model, wide, frame, ks, payload)
    if args.format != "json" and matrices:  # the columns explained once, under the last model's table
        say("New questions: what generalises beyond these questions (between-question spread and sampling noise). "
            "These questions: only what re-running them would change. Ratio: of the two standard errors.")
    if len(matrices) == 2:
        _comparison(args, frame, matrices, ks, payload)
    elif len(matrices) > 2 and args.format != "json" and args.diagnose is None:
        say(f"{len(matrices)} models: give two to compare them at each k, or rank them all at one k with --diagnose K.")
    if args.diagnose is not None:
        from ..resolution import diagnose
        from ..samples import pass_at_k_matrix

        values, names = pass_at_k_matrix({m: w.to_numpy(dtype=float) for m, w in matrices.items()}, args.diagnose,
                                         metric=args.kind)
        first = next(iter(matrices))
        diag = diagnose(values, models=names, cluster=_clusters(args, frame, first, matrices[first]),
                        cluster_method=args.cluster_method, rng=args.seed)
        payload["diagnosis"] = diag.to_frame().to_dict("list")
        if args.format != "json":
            from ..report.terminal_report import print_report

            print_report(diag, note=f"{args.kind} at k = {args.diagnose}: the per-question estimates, paired over "
                                    "questions (new questions).")
    if args.json_out:
        buf = io.StringIO()
        dump_json(document(args, payload), buf)
        write_atomic(args.json_out, buf.getvalue(), inputs=tuple(args.files))
    if args.format == "json":
        dump_json(document(args, payload))
    return 0


def _one_model(args: argparse.Namespace, model: str, wide: Any, frame: Any, ks: list[int],
               payload: dict[str, Any]) -> None:
    """One model's pass@k with both intervals: into the payload, and a table unless --format json."""
    import numpy as np

    from .._core.errors import DataError
    from ..report.tables import passk_model_view, print_view
    from ..samples import pass_at_k_ci

    x = wide.to_numpy(dtype=float)
    if np.isnan(x).all(axis=1).any():
        item = wide.index[np.isnan(x).all(axis=1)][0]
        msg = f"model {model!r} has no sample of question {item!r} (the models must answer the same questions)"
        raise DataError(msg)
    clusters = _clusters(args, frame, model, wide)
    new = pass_at_k_ci(x, ks, metric=args.kind, cluster=clusters, confidence_level=args.confidence_level,
                       cluster_method=args.cluster_method, rng=args.seed)
    fixed = pass_at_k_ci(x, ks, metric=args.kind, population="fixed_questions",
                         confidence_level=args.confidence_level)
    lo_n, hi_n = new.confidence_interval()
    lo_f, hi_f = fixed.confidence_interval()
    n_samples = (~np.isnan(x)).sum(axis=1)
    payload["models"][model] = {"questions": int(x.shape[0]), "samples_min": int(n_samples.min()),
                                "samples_max": int(n_samples.max()), "estimate": new.estimate,
                                "se_questions": new.standard_error, "ci_questions": [lo_n, hi_n],
                                "se_fixed_questions": fixed.standard_error, "ci_fixed_questions": [lo_f, hi_f],
                                **_cluster_fields(new)}
    if args.format != "json":
        print_view(passk_model_view(model, ks, new, fixed, kind=args.kind, n_questions=int(x.shape[0]),
                                    samples=(int(n_samples.min()), int(n_samples.max())),
                                    confidence_level=args.confidence_level))


def _clusters(args: argparse.Namespace, frame: Any, model: str, wide: Any) -> Any:
    """The --cluster label of each question (row of ``wide``) as ``model``'s samples carry it; None without."""
    if not args.cluster:
        return None
    labels = frame[frame["model"] == model].groupby("item")["cluster"].first()
    return labels.reindex(wide.index).to_numpy()


def _cluster_fields(res: Any) -> dict[str, Any]:
    """What the JSON says of the clustered test: the cluster count and the method, by name and label."""
    from .._core.options import CLUSTER_METHOD_LABELS

    if res.n_clusters is None:
        return {}
    return {"n_clusters": res.n_clusters, "cluster_method": res.cluster_method,
            "cluster_test": CLUSTER_METHOD_LABELS[res.cluster_method]}


def _comparison(args: argparse.Namespace, frame: Any, matrices: dict[str, Any], ks: list[int],
                payload: dict[str, Any]) -> None:
    """The two models' paired difference at each k (A is not the --baseline)."""
    from ..report.tables import passk_comparison_view, print_view
    from ..samples import compare_pass_at_k

    (name_a, a), (name_b, b) = matrices.items()
    if args.baseline == name_a:
        (name_a, a), (name_b, b) = (name_b, b), (name_a, a)
    cmp = compare_pass_at_k(a.to_numpy(dtype=float), b.to_numpy(dtype=float), ks, metric=args.kind,
                            cluster=_clusters(args, frame, name_a, a), confidence_level=args.confidence_level,
                            rng=args.seed, cluster_method=args.cluster_method)
    payload["comparison"] = {"a": name_a, "b": name_b, **cmp.to_frame().to_dict("list"),
                             "critical_value": cmp.critical_value, **_cluster_fields(cmp)}
    payload["comparison"]["inference"] = passk_inference(
        payload["comparison"], confidence_level=args.confidence_level,
        cluster_method=args.cluster_method if args.cluster else None)
    if args.format != "json":
        print_view(passk_comparison_view(cmp, ks, name_a, name_b))
