"""``llm-power gate BASELINE CANDIDATE``: a regression gate for CI (PASS / FAIL / INCONCLUSIVE)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.suggest import hint
from ..io.safe import parse_once
from ..report.schema import gate_inference
from ._json import document

if TYPE_CHECKING:
    from ..matrix import ScoreMatrix

from .._core.errors import DataError
from .._core.options import INCONCLUSIVE_POLICIES, MAX_FLIPS
from ..report.files import check_outputs, write_atomic
from ..report.tables import gate_markdown, gate_tasks_markdown
from ..report.terminal import dump_json, safe_text, say
from ._reader import ReaderOptions, load_roles
from ._types import HelpFormatter, UsageError, add_reader_options, add_run_pairing
from .diagnose import add_declared_option

HELP = "regression gate: is CANDIDATE not worse than BASELINE by more than a margin? (exit 0/3/4)"
EPILOG = """exit codes: 0 PASS, 3 INCONCLUSIVE, 4 FAIL; 1 bad input, 2 usage error. With --inconclusive warn
(a warning line) or pass, INCONCLUSIVE exits 0; a FAIL always exits 4.

examples:
  llm-power gate runs/main/ runs/pr-123/ --margin 0.01           # two lm-eval output folders
  llm-power gate base.eval cand.eval --cluster subject --anytime  # inspect logs, re-checked per commit
  llm-power gate gpt-x gpt-y --data scores.csv --markdown comment.md
  llm-power gate Meta-Llama-3_1-70B Meta-Llama-3_1-70B-Instruct --demo
"""


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("gate", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:], epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("baseline", metavar="BASELINE",
                   help="the baseline's results (a file or folder of one model), or its name in --data/--demo")
    p.add_argument("candidate", metavar="CANDIDATE",
                   help="the candidate's results (a file or folder of one model), or its name in --data/--demo")
    p.add_argument("--data", nargs="+", metavar="RESULTS",
                   help="result files holding both models (BASELINE and CANDIDATE are then model names; "
                        "default: none)")
    p.add_argument("--demo", action="store_true",
                   help="use the bundled MMLU-Pro results (with --run: the bundled reruns of gpt-4o and "
                        "gpt-3.5-turbo; BASELINE and CANDIDATE are model names)")
    p.add_argument("--margin", type=float, default=None,
                   help="the regression tolerated, in score units (default 0.01 = 1 point of accuracy; for "
                        "graded scores give it in their units)")
    p.add_argument("--alpha", type=float, default=0.05, help="level of each one-sided test (default 0.05)")
    p.add_argument("--power", type=float, default=0.8,
                   help="power of the items estimate when inconclusive (default 0.8)")
    p.add_argument("--cluster", metavar="FIELD",
                   help="cluster label field: cluster-robust test (default: none, items independent)")
    add_declared_option(p, "cluster_method")
    p.add_argument("--anytime", action="store_true",
                   help="anytime-valid: a gate re-checked as items accumulate keeps its error at most alpha")
    p.add_argument("--horizon", type=int, metavar="N",
                   help="with --anytime: the planned final number of items (default: this run's)")
    p.add_argument("--score-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                   help="with --anytime and scores outside [0, 1]: the range any per-item score can take (the "
                        "anytime sequence needs bounded scores; default: [0, 1])")
    p.add_argument("--lower-is-better", action="store_true",
                   help="the score is an error (error count, loss): a higher candidate score is a regression (default: "
                        "higher is better)")
    p.add_argument("--run", dest="run_field", metavar="FIELD",
                   help="several runs per model (seeds, templates): the column or harness field naming a run (seed, "
                        "template, a dotted path, file, folder); the gate then tests over items and runs (default: "
                        "one run)")
    add_run_pairing(p)
    p.add_argument("--per-task", action="store_true",
                   help="gate each task (the item ids' prefix before ':', as lm-eval writes them) and combine: PASS "
                        "when every task passes, FAIL when one fails after Holm's adjustment (default: one gate)")
    add_reader_options(p, missing="one model lacks")
    p.add_argument("--markdown", dest="markdown_out", metavar="FILE",
                   help="also write a pull-request comment (Markdown; '-': stdout; default: none)")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="also write the result as JSON (default: none)")
    p.add_argument("--inconclusive", choices=INCONCLUSIVE_POLICIES, default="block",
                   help="what an INCONCLUSIVE verdict does: block (exit 3), warn (exit 0 with a warning line) or pass "
                        "(exit 0); PASS and FAIL are never changed (default: block)")
    p.add_argument("--max-flips", type=_flip_count, default=20, metavar="N",
                   help="0/1 scores: list at most N ids of each side of the items that flipped in the --markdown "
                        f"comment, counting the rest (0 to {MAX_FLIPS:,}; the JSON lists them all; default 20)")
    p.set_defaults(run=run)


def _flip_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_FLIPS:
        msg = f"must be a whole number from 0 to {MAX_FLIPS}; got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _finish(args: argparse.Namespace, verdict: str) -> tuple[int, Any]:
    """The exit code and outcome of ``verdict`` under ``--inconclusive`` (a warning line for warn)."""
    from ..gating import gate_outcome

    outcome = gate_outcome(verdict, args.inconclusive)
    if outcome.annotation == "warning":
        print(f"llm-power gate: warning: the gate is INCONCLUSIVE; --inconclusive {outcome.inconclusive} lets the "
              "run pass (exit 0)", file=sys.stderr)
    return outcome.exit_code, outcome


def _flips(items: Sequence[Any], base: Any, cand: Any, *, binary: bool, higher_is_better: bool) -> Any:
    """The items that flipped (0/1 scores), or None for graded scores."""
    from ..gating import flipped_items

    return flipped_items(base, cand, items, higher_is_better=higher_is_better) if binary else None


def _policy_fields(outcome: Any, flips: Any) -> dict[str, Any]:
    """What the JSON adds to the result: the policy, the check's conclusion, the flipped items."""
    return {"exit_code": outcome.exit_code, "inconclusive": outcome.inconclusive, "conclusion": outcome.conclusion,
            "flips": None if flips is None else flips.to_dict()}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code of the verdict."""
    from ..gating import gate

    inputs = [p for p in (args.data or []) if p] + ([] if args.data or args.demo else [args.baseline, args.candidate])
    check_outputs([args.markdown_out, args.json_out], inputs)
    if args.run_field:
        if args.per_task or args.cluster or args.anytime:
            msg = "--run cannot be combined with --per-task, --cluster or --anytime"
            raise UsageError(msg)
        return _run_runs(args, inputs)
    pair = _load(args)
    names, items, clusters = pair.models, pair.items, pair.clusters
    base, cand = pair.scores[:, 0], pair.scores[:, 1]
    margin_given = args.margin is not None
    if not margin_given:
        args.margin = 0.01
    if args.per_task:
        return _run_per_task(args, names, items, base, cand, clusters, inputs)
    res = gate(base, cand, margin=args.margin, alpha=args.alpha, power=args.power, cluster=clusters,
               anytime=args.anytime, horizon=args.horizon, higher_is_better=not args.lower_is_better,
               score_range=args.score_range, cluster_method=args.cluster_method)
    line = res.sentence(*names)
    flips = _flips(items, base, cand, binary=res.binary, higher_is_better=not args.lower_is_better)
    code, outcome = _finish(args, res.verdict)
    result = res.to_dict()
    payload = document(args, {"baseline": names[0], "candidate": names[1], "verdict_line": line, **result,
                              **_policy_fields(outcome, flips), "inference": gate_inference(result)})
    _write(args, payload, gate_markdown(res, names, outcome=outcome, flips=flips, max_flips=args.max_flips), inputs)
    if args.format == "json":
        dump_json(payload)
    else:
        if sys.stdout.isatty():  # a terminal: wrapped at its width, the verdict word first
            say(line)
        else:
            print(safe_text(line))  # piped: one line, never wrapped -- what a CI log shows first
        say(f"n = {res.n:,} items, {res.test} test; one-sided p: non-inferiority {res.pvalue_noninferiority:.3g}, "
            f"inferiority {res.pvalue_inferiority:.3g} (alpha = {res.alpha:g})"
            + (f"; {res.n_clusters} clusters, design effect {res.design_effect:.2f}" if res.n_clusters else ""))
        level = f"{100 * (1 - 2 * res.alpha):g}%"
        say(f"The {level} CI is the two one-sided tests at alpha = {res.alpha:g}: PASS needs its lower bound above "
            "-margin, FAIL its upper bound below it."
            + ("" if res.binary or margin_given else
               " The scores are graded: the default margin 0.01 is in their units; set --margin on their scale."))
        if flips is not None:
            say(f"Flipped: {flips.summary()}.")
    return code


@parse_once()
def _run_runs(args: argparse.Namespace, inputs: list[Any]) -> int:
    """The gate over items and runs: baseline and candidate with several runs each."""
    import pandas as pd

    from ..gating import gate
    from ..io.runs import runs_frame
    from ..matrix import RunScores

    read = {"run": args.run_field, "format": args.input_format, "metric": args.metric, "item_column": args.id_column}
    if args.demo:
        from ..io.demo import reruns_path

        args.data, read["run"] = [reruns_path()], "run"
    if args.data:
        frame = runs_frame(list(args.data), **read)
        names = [args.baseline, args.candidate]
        present = set(frame["model"].astype(str))
        for role, name in zip(("baseline", "candidate"), names, strict=True):
            if name not in present:
                msg = (f"{role.upper()} {name!r} is not a model of --data{hint(name, present)} "
                       f"({', '.join(sorted(present)[:8])})")
                raise DataError(msg)
        frame = frame[frame["model"].astype(str).isin(names)]
        frame = frame.assign(model=frame["model"].astype(str).map({names[0]: "baseline", names[1]: "candidate"}))
    else:
        frames, names = [], []
        for role, path in (("baseline", args.baseline), ("candidate", args.candidate)):
            if not Path(path).exists():
                msg = f"{role.upper()} {path!r}: no such file or folder (to name models in a file, use --data FILE)"
                raise DataError(msg)
            part = runs_frame(path, **read)
            found = list(dict.fromkeys(part["model"].astype(str)))
            if len(found) != 1:
                msg = f"{role.upper()} {path!r} holds {len(found)} models; give one model's runs, or use --data"
                raise DataError(msg)
            names.append(found[0])
            frames.append(part.assign(model=role))
        frame = pd.concat(frames, ignore_index=True)
        if names[0] == names[1]:
            names = [f"{names[0]} (baseline)", f"{names[1]} (candidate)"]
    runs = RunScores.from_frame(frame, run="run", on_missing=args.on_missing, runs_by=args.run_field)
    blocks = dict(zip(runs.models, runs.blocks, strict=True))
    margin_given = args.margin is not None
    if not margin_given:
        args.margin = 0.01
    pairing = "matched" if runs.matched(args.run_pairing) else "independent"
    res = gate(blocks["baseline"], blocks["candidate"], margin=args.margin, alpha=args.alpha, power=args.power,
               higher_is_better=not args.lower_is_better, run_pairing=pairing)
    line = res.sentence(*names)
    code, outcome = _finish(args, res.verdict)
    result = res.to_dict()
    payload = document(args, {"baseline": names[0], "candidate": names[1], "verdict_line": line, **result,
                              **_policy_fields(outcome, None), "inference": gate_inference(result)})
    _write(args, payload, gate_markdown(res, names, outcome=outcome), inputs)
    if args.format == "json":
        dump_json(payload)
        return code
    if sys.stdout.isatty():
        say(line)
    else:
        print(safe_text(line))
    say(f"n = {res.n:,} items x {res.runs_baseline} baseline and {res.runs_candidate} candidate runs ("
        f"{args.run_field}), {res.test} test on {res.run_df:.3g} df; one-sided p: non-inferiority "
        f"{res.pvalue_noninferiority:.3g}, inferiority {res.pvalue_inferiority:.3g} (alpha = {res.alpha:g})")
    if runs.note:
        say(runs.note)
    return code


def _write(args: argparse.Namespace, payload: dict[str, Any], markdown: str, inputs: list[Any]) -> None:
    if args.json_out:
        import json

        from .._core.results import to_plain

        write_atomic(args.json_out, json.dumps(to_plain(payload), indent=2, sort_keys=True) + "\n",
                     inputs=tuple(inputs))
    if args.markdown_out:
        write_atomic(args.markdown_out, markdown, inputs=tuple(inputs))


def _run_per_task(args: argparse.Namespace, names: list[str], items: Sequence[Any], base: Any, cand: Any,  # noqa: PLR0917
                  clusters: Any, inputs: list[Any]) -> int:
    """One gate per task and the verdict over them."""
    from ..gating import gate_tasks

    lacking = next((it for it in items if ":" not in str(it)), None)
    if lacking is not None:
        msg = (f"--per-task needs item ids of the form TASK:ID (as lm-eval writes them); item {lacking!r} has no "
               "task prefix")
        raise DataError(msg)
    tasks = [str(it).split(":", 1)[0] for it in items]
    res = gate_tasks(base, cand, tasks, margin=args.margin, alpha=args.alpha, power=args.power, cluster=clusters,
                     anytime=args.anytime, horizon=args.horizon, higher_is_better=not args.lower_is_better,
                     score_range=args.score_range, cluster_method=args.cluster_method)
    line = res.sentence(*names)
    binary = all(r.binary for r in res.tasks.values())
    flips = _flips(items, base, cand, binary=binary, higher_is_better=not args.lower_is_better)
    code, outcome = _finish(args, res.verdict)
    payload = document(args, {
        "baseline": names[0], "candidate": names[1], "verdict_line": line,
        "verdict": res.verdict, "margin": res.margin, "alpha": res.alpha,
        "tasks": {t: {**r.to_dict(), "pvalue_inferiority_holm": res.pvalue_inferiority_holm[t],
                      "inference": gate_inference(r.to_dict())} for t, r in res.tasks.items()},
        **_policy_fields(outcome, flips)})
    markdown = gate_tasks_markdown(res, line, outcome=outcome, flips=flips, max_flips=args.max_flips)
    _write(args, payload, markdown, inputs)
    if args.format == "json":
        dump_json(payload)
    else:
        if sys.stdout.isatty():
            say(line)
        else:
            print(safe_text(line))
        for task, r in res.tasks.items():
            say(f"  {task}: {r.sentence(*names)}")
    return code


@parse_once()
def _load(args: argparse.Namespace) -> ScoreMatrix:
    """Baseline and candidate scores (columns 0, 1) on the shared items, with their names."""
    from . import compare

    if args.demo or args.data:
        files = [str(_demo_file())] if args.demo else list(args.data)
        # the bundled file has a category column: read as labels, used only when --cluster asks for them
        read_cluster = args.cluster or ("category" if args.demo else None)
        opts = dataclasses.replace(ReaderOptions.from_args(args), paths=tuple(files),
                                   models=(args.baseline, args.candidate), cluster=read_cluster)
        pair = compare.load_pair(opts)
        return pair if args.cluster else dataclasses.replace(pair, clusters=None)
    return load_roles(ReaderOptions.from_args(args), {"baseline": args.baseline, "candidate": args.candidate})


def _demo_file() -> Path:
    from importlib import resources

    return Path(str(resources.files("llm_power") / "data" / "mmlu_pro_correct.csv.gz"))
