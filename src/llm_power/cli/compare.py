"""``llm-power compare A B``: paired comparison of two models' per-item results."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from .._core.errors import warn
from .._core.suggest import hint
from ..io.safe import parse_once
from ..report.schema import comparison_inference
from ._json import document

if TYPE_CHECKING:
    from ..matrix import ScoreMatrix
    from ._reader import ReaderOptions

from .._core.errors import DataError, LLMPowerWarning
from .._core.format import fmt_gap, fmt_n_star, items_text, p_is
from ..report.tables import comparison_view, print_view
from ..report.terminal import dump_json, say
from ._types import (
    COMPARE_METHODS,
    DESIGN_EFFECTS,
    HelpFormatter,
    UsageError,
    add_reader_options,
    nonnegative_int,
    positive_int,
)
from .diagnose import add_declared_option

HELP = "is model A better than model B on the same items? (paired test, CI, resolution)"


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser(
        "compare", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:],
        epilog="examples: llm-power compare a.csv b.jsonl --metric correct      # one file per model\n"
               "          llm-power compare scores.csv --models gpt-x claude-y --cluster subject\n"
               "          llm-power compare out/ --models org/model-a org/model-b  # any harness output",
        formatter_class=HelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="RESULTS",
                   help="result files or folders, as diagnose reads them (harness logs, long/wide tables, "
                        "one file per model); exactly two models, or choose two with --models")
    p.add_argument("--models", nargs=2, metavar=("A", "B"),
                   help="the two models to compare, A first (default: the two models found)")
    add_reader_options(p, missing="one model lacks")
    p.add_argument("--cluster", metavar="COL",
                   help="cluster label field (subject, source): cluster-robust test, interval and N* "
                        "(default: none, items independent)")
    p.add_argument("--design-effect", default="robust", choices=DESIGN_EFFECTS, metavar="MODEL",
                   help="with --cluster, one of %(choices)s: robust = CR2 with Imbens-Kolesar df (default), cr1, "
                        "anova (Kish) or paper")
    add_declared_option(p, "cluster_method")
    p.add_argument("--method", default="auto", choices=COMPARE_METHODS, metavar="METHOD",
                   help="test: %(choices)s (default auto: Dror et al. 2018 tree; with --cluster the "
                        "cluster-robust t test)")
    p.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"),
                   help="two-sided (default), or one-sided: greater (A better) / less")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the gap's interval (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power of N* (default 0.8)")
    p.add_argument("--n-resamples", type=positive_int, default=None, metavar="B",
                   help="bootstrap resamples (default 10,000) / random sign patterns of the permutation test "
                        "(default: exact when at most 20 items differ)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed for resampling tests (default 0)")
    p.set_defaults(run=run)


@parse_once()
def load(args: argparse.Namespace) -> ScoreMatrix:
    """The two models of the command's files (:func:`load_pair` of its reader options)."""
    from ._reader import ReaderOptions

    return load_pair(ReaderOptions.from_args(args, paths="files"))


@parse_once()
def load_pair(opts: ReaderOptions) -> ScoreMatrix:
    """The two models' scores (columns A, B) through the one reader stack: a wide table straight into the
    matrix, anything else read_results -> align_results (the same rules).
    """
    from ..io import align_results, read_results
    from ..io.align import align_matrix
    from ..io.detect import expand_paths
    from ..io.harness import read_wide_table
    from ..matrix import ScoreMatrix

    paths = expand_paths(opts.paths)
    wide = None
    if len(paths) == 1:
        wide = read_wide_table(paths[0], format=opts.input_format, metric=opts.metric, cluster=opts.cluster,
                               item_column=opts.id_column)
    if wide is not None:
        found = [str(m) for m in wide[1]]
    else:
        frame = read_results(paths, **opts.read_kwargs())
        found = list(dict.fromkeys(frame["model"]))  # in the order read: the first file's model is A
    names = _choose(opts.models, found)
    if wide is not None:
        items, models, values, clusters = wide
        cols = [found.index(m) for m in names]
        aligned = align_matrix(items, names, values[:, cols], clusters, on_missing=opts.on_missing)
    else:
        aligned = align_results(frame[frame["model"].isin(names)], on_missing=opts.on_missing)
    if aligned.note:
        warn(aligned.note, LLMPowerWarning)  # shown as one note line
    cols = [aligned.models.index(names[0]), aligned.models.index(names[1])]
    return ScoreMatrix(items=aligned.items, models=names, scores=aligned.scores[:, cols], clusters=aligned.clusters,
                       note=aligned.note, dropped=aligned.dropped)


def _choose(models: tuple[str, ...] | None, found: list[str]) -> list[str]:
    """The two models: --models, or the only two found."""
    listed = f"{', '.join(map(repr, found[:8]))}{f', ... ({len(found):,} in all)' if len(found) > 8 else ''}"
    if models:
        names = list(models)
        missing = [m for m in names if m not in found]
        if missing:
            msg = f"no model {missing[0]!r} in the results{hint(missing[0], found)}; models found: {listed}"
            raise DataError(msg)
        if names[0] == names[1]:
            msg = "--models names the same model twice"
            raise UsageError(msg)
        return names
    if len(found) == 2:
        return found
    msg = f"found {len(found)} model(s) ({listed}); choose two with --models A B"
    raise DataError(msg)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..paired import compare
    pair = load(args)
    names, a, b, clusters = pair.models, pair.scores[:, 0], pair.scores[:, 1], pair.clusters
    res = compare(a, b, method=args.method, cluster=clusters, alternative=args.alternative,
                  confidence_level=args.confidence_level, alpha=args.alpha, power=args.power,
                  n_resamples=args.n_resamples, design_effect=args.design_effect,
                  cluster_method=args.cluster_method, rng=args.seed)
    if args.format == "json":
        payload = {"model_a": names[0], "model_b": names[1], "verdict": verdict_sentence(res, names, args.cluster),
                   **res.to_dict()}
        dump_json(document(args, {**payload, "inference": comparison_inference(payload)}))
        return 0
    say(verdict_sentence(res, names, args.cluster))
    print()
    print_view(comparison_view(res, names))
    if res.resolved:
        say("next: " + ("llm-power diagnose ranks more than two models and stresses the verdict" if res.n_clusters
                        else "--cluster FIELD if the items share subjects or sources (the gap may then be unresolved)"))
    elif math.isfinite(res.n_star) and res.n_star > res.n:
        like = "in new clusters like these" if res.n_clusters else "like these"
        more = items_text(math.ceil(res.n_star) - res.n, "more item")
        say(f"next: about {more} {like} (N* = {fmt_n_star(res.n_star)}) "
            "would resolve a gap this size; llm-power plan sample-size --help plans other gaps")
    return 0


def verdict_sentence(res: Any, names: list[str], cluster: str | None) -> str:
    """The comparison's verdict in one plain-language line (the regime it was tested in named)."""
    gap = f"{fmt_gap(res.delta, res.binary)} {'points' if res.binary else 'score units'}"
    where = (f" once items are clustered by {cluster} ({res.n_clusters} clusters)" if res.n_clusters
             else " if they are independent")
    what = {"resolved": f"is resolved by these {items_text(res.n)}{where}",
            "no_rejection": f"is not resolved{where}: the benchmark is big enough for a gap this size, but the test "
                            "does not reject",
            "iid_unresolved": f"is not resolved{where}: the IID test of the same items does not resolve it",
            "unreachable": f"is not resolved{where}: no number of items like these would resolve it",
            "undefined": f"has no verdict{where}: the differences have no variance"}.get(
        res.verdict_reason, f"is too small for these {items_text(res.n)} to resolve{where}")
    return f"{names[0]} vs {names[1]}: the gap of {gap} {what}; q = {res.q:.2f}, {p_is(res.pvalue, 3)} ({res.method})."
