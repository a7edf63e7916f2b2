"""``llm-power judges FILES...``: how far LLM judges can be trusted -- agreement between judges and
with the human majority (Cohen's kappa, Krippendorff's alpha, with intervals), position-swap
consistency and first-position bias, and length bias -- from the battle formats ``arena`` reads.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from dataclasses import replace
from typing import Any

from .._core.suggest import hint
from ._json import document
from ._types import HelpFormatter

HELP = "LLM judges audited: agreement (kappa, alpha) with each other and the human majority, position and length bias"

EPILOG = """examples:
  llm-power judges ../shared/data/preferences/pandalm_testset/battles.csv.gz --humans 'annotator*'
  llm-power judges battles.csv --item pair_id --humans 'crowd_*' --where in_crowd_subset=1
  llm-power judges model_judgment/gpt-4_pair.jsonl --json judges.json

What was judged (the item two verdicts are compared on) is --item, by default pair_id or item_id
when the file has one, else the question, the two models and the turn. Verdicts are compared by
the winner's name, so judges that saw a pair in opposite orders compare correctly.
"""

#: judges whose names look like people's (when --humans is not given)
HUMAN_PATTERNS = ("human*", "annotator*", "crowd*", "expert*", "author*", "rater*", "worker*")
#: pairwise agreement is shown for at most this many judges (the ones with most verdicts)
MAX_JUDGES = 8


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("judges", parents=[parent], help=HELP, description=HELP + ".", epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILES",
                   help="battle logs with a judge column (CSV/TSV/JSONL/JSON/Parquet), MT-Bench *_pair.jsonl, "
                        "AlpacaEval annotations.json")
    p.add_argument("--item", metavar="COLUMN",
                   help="the column naming what was judged (default: pair_id or item_id, else question, models "
                        "and turn)")
    p.add_argument("--humans", action="append", metavar="NAME",
                   help="judges that are people, by name or pattern ('annotator*'; repeatable; default: names "
                        "like " + ", ".join(HUMAN_PATTERNS) + ")")
    p.add_argument("--judge", action="append", metavar="NAME",
                   help="audit only this judge (repeatable; default: every judge that is not human)")
    p.add_argument("--where", action="append", metavar="COLUMN=VALUE",
                   help="keep only rows whose COLUMN equals VALUE (repeatable; default: all rows)")
    p.add_argument("--max-judges", type=int, default=MAX_JUDGES, metavar="K",
                   help=f"pairwise agreement among the K judges with most verdicts (default {MAX_JUDGES})")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the intervals (default 0.95)")
    p.add_argument("--resamples", type=int, default=2000, metavar="B",
                   help="bootstrap resamples of items for the kappa/alpha intervals (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="write every number as JSON (default: none)")
    p.add_argument("--markdown", dest="markdown_out", metavar="FILE", help="write the Markdown report (default: none)")
    p.set_defaults(run=run)


def _item_column(frame: Any, given: str | None) -> tuple[Any, str]:
    """(frame with the item column, its name and description)."""
    import numpy as np

    from .._core.errors import DataError

    if given is not None:
        if given not in frame.columns:
            msg = f"--item {given!r}: the battles have no such column{hint(given, frame.columns)} " \
                  f"({', '.join(map(str, frame.columns))})"
            raise DataError(msg)
        return frame, given
    for name in ("pair_id", "item_id"):
        if name in frame.columns:
            return frame, name
    if "question_id" not in frame.columns:
        msg = "the battles have no question_id, pair_id or item_id column: name what was judged with --item"
        raise DataError(msg)
    a, b = frame["model_a"].astype(str).to_numpy(), frame["model_b"].astype(str).to_numpy()
    low, high = np.where(a < b, a, b), np.where(a < b, b, a)
    turn = frame["turn"].astype(str).to_numpy() if "turn" in frame.columns else np.full(len(frame), "")
    key = [f"{q}|{x}|{y}|{t}" for q, x, y, t in zip(frame["question_id"].astype(str), low, high, turn, strict=True)]
    return frame.assign(_item=key), "_item"


def _humans(judges: list[str], given: list[str] | None) -> list[str]:
    patterns = given if given else list(HUMAN_PATTERNS)
    return [j for j in judges if any(fnmatch.fnmatchcase(j.lower(), p.lower()) or j == p for p in patterns)]


def _filtered(frame: Any, where: list[str] | None) -> Any:
    from .._core.errors import DataError
    from ..io.battles import where_rows

    frame = where_rows(frame, where)
    if frame.empty:
        msg = "no battles left after --where"
        raise DataError(msg)
    return frame


def _agreement_row(res: Any) -> dict[str, Any]:
    return {"n": res.n, "agreement": res.agreement, "kappa": res.kappa, "kappa_ci": list(res.kappa_ci),
            "alpha": res.alpha, "alpha_ci": list(res.alpha_ci)}


def _pair(frame: Any, item: str, a: str, b: str, *, level: float, resamples: int, seed: int) -> dict[str, Any] | None:
    """Agreement of judges a and b on the items both labelled (b's labels as a one-judge majority)."""
    from .._core.errors import DataError
    from ..preferences import judge_vs_majority

    sub = frame[frame["judge"].isin([a, b])]
    try:
        res = judge_vs_majority(sub, a, humans=[b], item=item, confidence_level=level, n_resamples=resamples,
                                rng=seed)
    except DataError:  # fewer than 2 shared items, or a judge labelled an item twice
        return None
    return _agreement_row(res)


def audit(frame: Any, *, item: str | None = None, humans: list[str] | None = None, judges: list[str] | None = None,
          max_judges: int = MAX_JUDGES, confidence_level: float = 0.95, resamples: int = 2000,
          seed: int = 0) -> dict[str, Any]:
    """Every number the command prints, as plain data."""
    from .._core.errors import DataError
    from ..preferences import judge_vs_majority, length_bias, swap_consistency

    if "judge" not in frame.columns:
        msg = "the battles name no judge (no judge column): judges compares the verdicts of several judges"
        raise DataError(msg)
    frame = frame[frame["judge"].notna() & (frame["judge"].astype(str).str.strip() != "")]
    if frame.empty:
        msg = "the battles name no judge (no judge column, or every judge is blank)"
        raise DataError(msg)
    frame = frame.assign(judge=frame["judge"].astype(str))
    frame, item_col = _item_column(frame, item)
    counts = frame.groupby("judge").size().sort_values(ascending=False, kind="stable")
    everyone = counts.index.tolist()
    people = _humans(everyone, humans)
    if humans and not people:
        msg = f"--humans {humans[0]!r}: no judge matches{hint(humans[0], everyone)}; judges: {', '.join(everyone[:10])}"
        raise DataError(msg)
    audited = [j for j in everyone if j not in people]
    if judges:
        unknown = [j for j in judges if j not in everyone]
        if unknown:
            msg = (f"--judge {unknown[0]!r}: no such judge{hint(unknown[0], everyone)}; judges: "
                   f"{', '.join(everyone[:10])}")
            raise DataError(msg)
        audited = [j for j in everyone if j in judges]
    items = frame.groupby("judge")[item_col].nunique()
    out: dict[str, Any] = {
        "item_column": item_col if item_col != "_item" else "question_id + models + turn",
        "n_battles": len(frame), "confidence_level": confidence_level, "humans": people,
        "judges": [{"judge": j, "verdicts": int(counts[j]), "items": int(items[j]), "human": j in people}
                   for j in everyone],
    }
    top = [j for j in everyone if j in audited or (len(people) <= max_judges and j in people)][:max_judges]
    pairs = []
    for i, a in enumerate(top):
        for b in top[i + 1:]:
            row = _pair(frame, item_col, a, b, level=confidence_level, resamples=resamples, seed=seed)
            if row is not None:
                pairs.append({"judge_a": a, "judge_b": b, **row})
    out["pairwise"] = pairs
    majority = []
    if people:
        for j in audited:
            try:
                res = judge_vs_majority(frame, j, humans=people, item=item_col, confidence_level=confidence_level,
                                        n_resamples=resamples, rng=seed)
            except DataError as exc:
                majority.append({"judge": j, "n": 0, "note": exc.message if hasattr(exc, "message") else str(exc)})
                continue
            majority.append({"judge": j, **_agreement_row(res)})
    out["vs_human_majority"] = majority
    if {"g1_winner", "g2_winner"} <= set(frame.columns):
        both = frame[frame["g1_winner"].notna() & frame["g2_winner"].notna()]
        both = both[both["judge"].isin(audited or everyone)]
        if len(both):
            table = swap_consistency(both, by="judge", confidence_level=confidence_level)
            out["swap"] = table.to_dict("records")
    if {"length_a", "length_b"} <= set(frame.columns):
        out["length_bias"] = length_bias(frame, confidence_level=confidence_level).to_dict()
    return out


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..io.battles import read_battles
    from ..report.files import write_reports
    from ..report.tables import judges_markdown, judges_views, print_view
    from ..report.terminal import dump_json, say

    frame = _filtered(read_battles(args.files), args.where)
    out = audit(frame, item=args.item, humans=args.humans, judges=args.judge, max_judges=args.max_judges,
                confidence_level=args.confidence_level, resamples=args.resamples, seed=args.seed)
    doc = document(args, out)
    write_reports(args, doc, lambda: judges_markdown(out), tuple(args.files))
    if args.format == "json":
        dump_json(doc)
        return 0
    for k, view in enumerate(judges_views(out)):
        if k:
            sys.stdout.write("\n")
        print_view(replace(view, caption=None))
        say(view.caption or "")
    if not out["humans"]:
        say("No human judges found (names like " + ", ".join(HUMAN_PATTERNS[:3]) + "…): name them with --humans "
            "to compare every judge with the human majority.")
    return 0
