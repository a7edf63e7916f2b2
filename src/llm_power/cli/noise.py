"""``llm-power noise RESULTS... --run FIELD``: run-to-run noise (seeds, templates, engines) of a benchmark."""

from __future__ import annotations

import argparse
from typing import Any

from ..report.tables import noise_units, noise_views, print_view
from ..report.terminal import dump_json, say
from ._json import document
from ._types import HelpFormatter, UsageError, add_reader_options, add_run_pairing, positive_int

HELP = "run-to-run noise: item, run and item x run variance, flaky items, signal-to-noise, templates"
EPILOG = """examples:
  llm-power noise --demo                                   # bundled: 2 models re-run at temperature 0
  llm-power noise runs.csv --run seed                      # long table: model,seed,item,score
  llm-power noise out/seed_*/ --run seed                   # lm-eval folders, one per --seed
  llm-power noise logs/*.eval --run template --templates   # inspect logs, one per prompt template
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("noise", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("results", nargs="*", metavar="RESULTS",
                   help="result files or folders with several runs per model (what diagnose reads)")
    p.add_argument("--demo", action="store_true",
                   help="the bundled reruns instead of RESULTS: gpt-3.5-turbo (10 runs) and gpt-4o (5 runs) at "
                        "temperature 0 on the same 500 items (Atil et al. 2024)")
    p.add_argument("--run", dest="run_field", metavar="FIELD",
                   help="what names a run: a column of a long table, or a harness field (seed, temperature, engine, "
                        "template, model_args, a dotted path such as config.random_seed), or file / folder "
                        "(required unless --demo)")
    p.add_argument("--templates", action="store_true",
                   help="runs are prompt templates shared by every model: add each model's spread over templates, "
                        "the rank agreement between templates and the pairs that flip")
    p.add_argument("--cluster", metavar="FIELD", help="cluster label field, kept with the items (default: none)")
    add_reader_options(p, missing="a run or a model lacks", records=False)
    add_run_pairing(p)
    p.add_argument("--top", type=positive_int, default=10, help="unstable items to list (default 10)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="seed of the template bootstrap (default 0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..io import read_runs
    from ..io.detect import expand_paths
    from ..runs import noise

    if args.demo:
        from ..io.demo import reruns_path

        args.results, args.run_field, args.on_missing, args.cluster = [reruns_path()], "run", "intersect", "cluster"
    if not args.results or not args.run_field:
        msg = "give RESULTS and --run FIELD (what names a run), or --demo"
        raise UsageError(msg)
    paths = expand_paths(args.results)
    runs = read_runs(paths, run=args.run_field, format=args.input_format, metric=args.metric, cluster=args.cluster,
                     on_missing=args.on_missing, item_column=args.id_column)
    rep = noise(runs, templates=True if args.templates else None, top=args.top,
                confidence_level=args.confidence_level, run_pairing=args.run_pairing, rng=args.seed)
    if args.format == "json":
        source = ", ".join(str(p) for p in args.results)
        dump_json(document(args, {"source": source, "note": runs.note, **rep.to_dict()}))
        return 0
    for view in noise_views(rep, runs_by=runs.runs_by):
        print_view(view)
    v = rep.variance
    level = f"{100 * v.confidence_level:g}%"
    num, unit = noise_units(rep)

    say(f"Signal-to-noise: spread of the scores {num(rep.signal)} over a run-to-run SD of {num(rep.noise)} {unit} = "
        f"{rep.snr:.3g}; {level} CI of the true ratio (spread of the expected scores over the true run SD) "
        f"{rep.snr_ci[0]:.3g} to {rep.snr_ci[1]:.3g}; about {rep.resolvable_models:.3g} evenly spread models could "
        "be told apart under run noise.")
    if rep.templates:
        t = rep.templates
        say(f"Templates: mean Kendall tau-a between the templates' observed rankings {t['kendall_tau']:.3f}; "
            f"{level} CI for their true rankings {t['kendall_tau_ci'][0]:.3f} to {t['kendall_tau_ci'][1]:.3f} "
            f"({t['settled_share']:.0%} of the templates' pairwise orders settled); {len(t['flipping_pairs'])} "
            "pair(s) change order between templates.")
        for f in t["flipping_pairs"][:10]:
            say(f"  {f['model_a']} ahead of {f['model_b']} in {f['share_a_ahead']:.0%} of the templates")
    if runs.note:
        say(runs.note)
    say("next: llm-power diagnose ... --run FIELD adds the run regime to the resolution report; "
        "llm-power plan runs ... says how many runs a gap needs.")
    return 0
